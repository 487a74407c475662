package shd

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestWriteSynthFileStreams: the block-wise writer writes the samples Synthesize draws (more than one
// block of them), with per-sample lengths inside [MinDuration, Duration).
func TestWriteSynthFileStreams(t *testing.T) {
	c := SynthConfig{Samples: synthBlock + 37, Classes: SSCClasses, MeanSpikes: 40, Channels: Channels, Duration: 1, MinDuration: 0.5, Seed: 9}
	sp, labels, err := Synthesize(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whole, streamed := filepath.Join(dir, "whole.h5"), filepath.Join(dir, "streamed.h5")
	if err := WriteFile(whole, sp, labels, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteSynthFile(streamed, c, WriteOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	read := func(p string) (*Spikes, []int32) {
		f, err := Open(p, SSCClasses)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := f.Read(0, f.Len())
		if err != nil {
			t.Fatal(err)
		}
		return s, slices.Clone(f.Labels())
	}
	a, la := read(whole)
	b, lb := read(streamed)
	if !slices.Equal(a.Times, b.Times) || !slices.Equal(a.Units, b.Units) || !slices.Equal(a.Offs, b.Offs) || !slices.Equal(la, lb) {
		t.Fatal("the streamed file differs from the one written whole")
	}
	longest := 0.0
	for i := range b.Len() {
		ts, _ := b.Sample(i)
		if len(ts) > 0 {
			longest = max(longest, ts[len(ts)-1])
		}
	}
	if longest >= 1 || longest < 0.9 {
		t.Errorf("last spike at %g s, want below 1 s and near it", longest)
	}
}

// TestOfficialSizes: the official split sizes, which `fits data synth --full` writes.
func TestOfficialSizes(t *testing.T) {
	for ds, want := range map[string]map[string]int{
		SHD: {"train": 8156, "test": 2264},
		SSC: {"train": 75466, "valid": 9981, "test": 20382},
	} {
		got, err := OfficialSizes(ds)
		splits, _ := Splits(ds)
		if err != nil || len(got) != len(splits) {
			t.Fatalf("%s: %v %v", ds, got, err)
		}
		for _, s := range splits {
			if got[s] != want[s] {
				t.Errorf("%s %s: %d samples, want %d", ds, s, got[s], want[s])
			}
		}
	}
}
