package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/train"
)

// TestDepartures: the schedule, the data limits and the engine may differ; the cell's fields, the readout
// (resolved for the dataset) and every semantic setting may not, and are named with both values.
func TestDepartures(t *testing.T) {
	e, _ := Lookup("ssc/fsts-m2/w512")
	want, _ := e.Config(Quick, 1)
	same := want
	same.Seed, same.Epochs, same.Batch, same.LR, same.Dropout, same.Executor, same.TrainLimit = 9, 2, 8, 1, 0.5, "chunked", 10
	same.Readout = "" // resolved: the dataset's default, as the recipe's
	if d := Departures(same, want); d != "" {
		t.Errorf("a smoke test's schedule departs: %s", d)
	}
	got := want
	got.Width, got.AdamEpsilon, got.ForwardClip, got.Surrogate = 32, 1e-7, true, train.SurrogateBellec
	d := Departures(got, want)
	for _, w := range []string{"adam_epsilon 1e-07, the recipe's is 1e-08", "forward_clip true, the recipe's is none",
		"surrogate bellec, the recipe's is triangle", "width 32, the recipe's is 64"} {
		if !strings.Contains(d, w) {
			t.Errorf("Departures = %q, want it to name %q", d, w)
		}
	}
	if strings.Index(d, "adam_epsilon") > strings.Index(d, "width") {
		t.Errorf("Departures not in key order: %q", d)
	}
}

// TestReadRun: the states of a folder against a seed and a recipe.
func TestReadRun(t *testing.T) {
	e, _ := Lookup("ssc/fsts-m2/w512")
	recipe, _ := e.Config(Quick, 1)
	write := func(dir string, cfg train.Config, done int) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		r := &train.Result{Seed: cfg.Seed, Protocol: cfg.Protocol, Config: cfg.Resolved()}
		for k := 1; k <= done; k++ {
			r.Epochs = append(r.Epochs, train.Epoch{Epoch: k, TestAcc: 0.5})
		}
		if err := train.WriteResult(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	if st := ReadRun(filepath.Join(root, "none"), 1, &recipe); st != (RunState{}) {
		t.Errorf("no folder: %+v", st)
	}
	write(filepath.Join(root, "done"), recipe, recipe.Epochs)
	if st := ReadRun(filepath.Join(root, "done"), 1, &recipe); !st.Current() || st.Result == nil {
		t.Errorf("finished run: %+v", st)
	}
	write(filepath.Join(root, "short"), recipe, 2)
	if st := ReadRun(filepath.Join(root, "short"), 1, &recipe); st.Finished || st.Stale != "" || st.Result == nil {
		t.Errorf("unfinished run: %+v", st)
	}
	other := recipe
	other.Seed = 4
	write(filepath.Join(root, "seed"), other, recipe.Epochs)
	if st := ReadRun(filepath.Join(root, "seed"), 1, nil); st.Current() || st.Stale != "seed 4, not 1" {
		t.Errorf("another seed: %+v", st)
	}
	other = recipe
	other.TSMix = "paper"
	write(filepath.Join(root, "semantics"), other, recipe.Epochs)
	if st := ReadRun(filepath.Join(root, "semantics"), 1, &recipe); st.Current() || st.Stale != "ts_mix paper, the recipe's is official" {
		t.Errorf("another recipe: %+v", st)
	}
	if st := ReadRun(filepath.Join(root, "semantics"), 1, nil); !st.Current() {
		t.Errorf("without a recipe only the seed counts: %+v", st)
	}
	if err := os.WriteFile(filepath.Join(root, "done", train.ResultFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := ReadRun(filepath.Join(root, "done"), 1, &recipe); st.Err == nil || st.Finished {
		t.Errorf("unreadable result: %+v", st)
	}
}
