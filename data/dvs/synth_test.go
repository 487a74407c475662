package dvs

import (
	"path/filepath"
	"testing"

	"github.com/fits-snn/fits/data"
)

// TestOfficialRecordings: the full-size plan has the official split sizes, in recordings and gestures.
func TestOfficialRecordings(t *testing.T) {
	recs := OfficialRecordings()
	var train, test int
	for _, r := range recs {
		if r.Train {
			train++
		} else {
			test++
		}
		if r.Train != (r.User <= 23) {
			t.Errorf("user %d in the wrong list", r.User)
		}
	}
	got := SynthConfig{Recordings: recs}.SplitSizes()
	if train != OfficialTrainRecordings || test != OfficialTestRecordings || got[Train] != 1077 || got[Test] != 264 {
		t.Errorf("%d/%d recordings, %v gestures; want 98/24 and 1077/264", train, test, got)
	}
}

// TestWriteSynthRecordings: a plan of recordings is written as planned and loads with SplitSizes' sizes.
func TestWriteSynthRecordings(t *testing.T) {
	dir := t.TempDir()
	c := SynthConfig{Gesture: 0.1, EventsPerSec: 200, Seed: 2, Recordings: []SynthRecording{
		{User: 1, Lighting: "lab", Gestures: 11, Train: true},
		{User: 1, Lighting: "led", Gestures: 4, Train: true},
		{User: 2, Lighting: "natural", Gestures: 3},
	}}
	if err := WriteSynth(filepath.Join(dir, "DvsGesture"), c); err != nil {
		t.Fatal(err)
	}
	d, err := LoadDataset(data.Options{Dir: dir}, DefaultFraming(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := c.SplitSizes()
	if d.Train.N != want[Train] || d.Test.N != want[Test] || want[Train] != 15 || want[Test] != 3 {
		t.Errorf("train %d test %d gestures, planned %v", d.Train.N, d.Test.N, want)
	}
	if d.Train.Encoding() != data.Bytes {
		t.Errorf("event counts held as %v", d.Train.Encoding())
	}
}
