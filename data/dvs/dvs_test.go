package dvs

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/aedat"
	"github.com/fits-snn/fits/data/cache"
)

func TestBinByHand(t *testing.T) {
	f := Framing{T: 3, Dt: 0.001, Sensor: 4, Out: 2} // frames of 1000 µs, 4×4 → 2×2
	evs := []aedat.Polarity{
		{T: 499, X: 0, Y: 0, On: true},  // before start
		{T: 500, X: 0, Y: 0, On: true},  // frame 0, ON, (0,0)
		{T: 900, X: 1, Y: 1, On: true},  // frame 0, ON, (0,0) again
		{T: 1500, X: 3, Y: 0},           // frame 1, OFF, row 0, column 1
		{T: 3499, X: 2, Y: 3, On: true}, // frame 2, ON, row 1, column 1
		{T: 3500, X: 0, Y: 0},           // past the end
	}
	dst := make([]uint8, 3*2*2*2)
	st, err := f.Bin(evs, 500, dst)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]uint8, 24)
	idx := func(k, p, y, x int) int { return ((k*2+p)*2+y)*2 + x }
	want[idx(0, 1, 0, 0)] = 2
	want[idx(1, 0, 0, 1)] = 1
	want[idx(2, 1, 1, 1)] = 1
	for i := range want {
		if dst[i] != want[i] {
			t.Fatalf("frames %v, want %v", dst, want)
		}
	}
	if st.Events != 4 {
		t.Errorf("stats %+v", st)
	}
	if _, err := f.Bin([]aedat.Polarity{{T: 600, X: 4}}, 500, make([]uint8, 24)); err == nil || !strings.Contains(err.Error(), "outside the 4×4 sensor") {
		t.Errorf("bad address: %v", err)
	}
	if err := (Framing{T: 50, Dt: 0.02, Sensor: 128, Out: 60}).Check(); err == nil {
		t.Error("128 → 60 accepted")
	}
}

func TestLabels(t *testing.T) {
	segs, err := parseLabels(strings.NewReader("class,startTime_usec,endTime_usec\n1,80048239,85092709\n11,85092710,91000000\n"))
	if err != nil || len(segs) != 2 || segs[0] != (Segment{0, 80048239, 85092709}) || segs[1].Label != 10 {
		t.Fatalf("%+v %v", segs, err)
	}
	for _, in := range []string{"", "a,b,c\n", "class,s,e\n12,1,2\n", "class,s,e\n1,5,5\n", "class,s,e\n1,x,5\n", "class,s,e\n1,2\n"} {
		if _, err := parseLabels(strings.NewReader(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestConvertSynth(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "DvsGesture")
	if err := WriteSynth(root, SynthConfig{Users: 3, TrainUsers: 2, Gesture: 1.2, EventsPerSec: 3000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	d, err := LoadDataset(data.Options{Dir: dir}, DefaultFraming(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Train.N != 22 || d.Test.N != 11 || d.Train.T != 50 || d.Train.F != 8192 || len(d.Train.FeatureShape) != 3 || d.Val != nil {
		t.Fatalf("train %d test %d T %d F %d shape %v", d.Train.N, d.Test.N, d.Train.T, d.Train.F, d.Train.FeatureShape)
	}
	// The first second of each gesture holds 3000 events, all counted.
	var sum float32
	for _, v := range d.Test.Example(0) {
		sum += v
	}
	if sum < 2900 || sum > 3000 {
		t.Errorf("sample 0 holds %v events, want about 3000", sum)
	}
	// The cache equals a direct binning of the recording.
	rec, err := ReadRecording(root, "user03_synthetic.aedat")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]uint8, 50*8192)
	DefaultFraming().Bin(rec.Events, rec.Segments[4].Start, want)
	r, _ := cache.Open(CachePath(dir, Test, DefaultFraming()))
	defer r.Close()
	got := make([]float32, 50*8192)
	r.ReadBatch([]int{4}, got)
	for i := range want {
		if float32(want[i]) != got[i] {
			t.Fatalf("element %d: cache %v, direct %v", i, got[i], want[i])
		}
	}
	if r.Labels()[4] != 4 {
		t.Errorf("label %d", r.Labels()[4])
	}
}

func TestConvertErrors(t *testing.T) {
	root := t.TempDir()
	if err := WriteSynth(root, SynthConfig{Users: 2, TrainUsers: 1, Gesture: 0.1, EventsPerSec: 100, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, "x.fitsds")
	// Truncate a recording: the error names it.
	p := filepath.Join(root, "user01_synthetic.aedat")
	raw, _ := os.ReadFile(p)
	os.WriteFile(p, raw[:len(raw)-5], 0o644)
	if _, err := Convert(root, Train, dst, DefaultFraming(), nil); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated recording: %v", err)
	}
	os.Remove(filepath.Join(root, "user02_synthetic_labels.csv"))
	if _, err := Convert(root, Test, dst, DefaultFraming(), nil); err == nil || !strings.Contains(err.Error(), "user02_synthetic_labels.csv") {
		t.Errorf("missing labels: %v", err)
	}
	if _, err := Convert(root, "valid", dst, DefaultFraming(), nil); err == nil {
		t.Error("unknown split accepted")
	}
	if _, err := os.Stat(dst); err == nil {
		t.Error("a cache was written")
	}
}

// TestFixtureCarriesClassSignal checks that the synthetic gestures are told apart by held-out users'
// recordings with the simplest of classifiers: each gesture's event counts summed over the frames and
// over 8×8 blocks per polarity, normalized, and assigned to the nearest class mean of the training users.
// Chance is 1/11.
func TestFixtureCarriesClassSignal(t *testing.T) {
	dir := t.TempDir()
	c := FixtureConfig()
	c.Users, c.TrainUsers, c.EventsPerSec = 5, 3, 4000
	d, err := LoadFixture(data.Options{Dir: dir}, c, DefaultFraming(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != FixtureName || d.Train.N != 33 || d.Test.N != 22 {
		t.Fatalf("%s: %d training, %d test gestures", d.Name, d.Train.N, d.Test.N)
	}
	const block, side = 8, 64 / 8
	feature := func(s *data.Set, i int) []float64 {
		f := make([]float64, 2*side*side)
		x := s.Example(i)
		for k := range s.T {
			for p := range 2 {
				for y := range 64 {
					for xx := range 64 {
						f[(p*side+y/block)*side+xx/block] += float64(x[((k*2+p)*64+y)*64+xx])
					}
				}
			}
		}
		var n float64
		for _, v := range f {
			n += v * v
		}
		for j := range f {
			f[j] /= math.Sqrt(n)
		}
		return f
	}
	means := make([][]float64, Classes)
	for c := range means {
		means[c] = make([]float64, 2*side*side)
	}
	for i := range d.Train.N {
		for j, v := range feature(d.Train, i) {
			means[d.Train.Labels[i]][j] += v
		}
	}
	correct := 0
	for i := range d.Test.N {
		f := feature(d.Test, i)
		best, bestDist := -1, math.Inf(1)
		for c, m := range means {
			var dist float64
			for j := range f {
				e := f[j] - m[j]/3
				dist += e * e
			}
			if dist < bestDist {
				best, bestDist = c, dist
			}
		}
		if int32(best) == d.Test.Labels[i] {
			correct++
		}
	}
	if acc := float64(correct) / float64(d.Test.N); acc < 0.5 {
		t.Errorf("nearest class mean: %d of %d held-out gestures right (%.0f %%), want at least half (chance 9 %%)", correct, d.Test.N, 100*acc)
	} else {
		t.Logf("nearest class mean: %d of %d held-out gestures right", correct, d.Test.N)
	}
	// A second load reads the fixture written by the first.
	if _, err := LoadFixture(data.Options{Dir: dir}, c, DefaultFraming(), nil); err != nil {
		t.Fatal(err)
	}
	// A folder with other files is left alone.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	if _, err := LoadFixture(data.Options{Dir: other}, c, DefaultFraming(), nil); err == nil || !strings.Contains(err.Error(), "holds files") {
		t.Errorf("fixture into a used folder: %v", err)
	}
}
