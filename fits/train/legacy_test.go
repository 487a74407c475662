package train

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
)

// legacyRun is a run trained before the released code's semantics became the default (fsts, M = 2, width
// 12, dropout 0.2, 4 epochs on the small synthetic task, seed 3): its checkpoint after epoch 3, and the
// result.json of the uninterrupted 4-epoch run (reference-result.json).
const legacyRun = "testdata/legacy-fsts-m2"

// copyLegacyRun copies the legacy run's checkpoint files into a temporary folder.
func copyLegacyRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(legacyRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "reference-result.json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(legacyRun, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLegacyRunKeepsItsSemantics: a checkpoint written before the semantic fields existed reads back with
// the semantics it was trained with, and resuming it reproduces the epoch the uninterrupted run trained
// next (loss and accuracies within float32 rounding; the history of the first three epochs exactly).
func TestLegacyRunKeepsItsSemantics(t *testing.T) {
	dir := copyLegacyRun(t)
	saved, _, _, err := SavedConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := saved.Legacy()
	if saved != want || saved.TSMix != string(neuron.TSMixPaper) || saved.TargetCoordinate != string(neuron.TargetOmega) ||
		saved.DropoutMode != string(model.DropoutShared) || saved.Readout != string(model.ReadoutMean) || !saved.ForwardClip ||
		saved.FreqGuardSafety != 0 || saved.LRSchedule != ScheduleStep || saved.AdamEpsilon != 1e-7 || saved.Surrogate != SurrogateBellec ||
		!saved.InputCounts || saved.AudioFrontEnd != "logmel" || saved.ValSplit != ValSplitStratified {
		t.Fatalf("legacy checkpoint reads as %+v, want the legacy semantics %+v", saved, want)
	}

	var ref Result
	b, err := os.ReadFile(filepath.Join(legacyRun, "reference-result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	res, err := TrainModel(DefaultConfig(), Options{Backend: testBackend(t), Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Epochs) != 4 || len(ref.Epochs) != 4 {
		t.Fatalf("%d epochs resumed, reference %d", len(res.Epochs), len(ref.Epochs))
	}
	for i := range 3 {
		if res.Epochs[i].Loss != ref.Epochs[i].Loss || res.Epochs[i].TestAcc != ref.Epochs[i].TestAcc {
			t.Errorf("epoch %d of the history: %+v, reference %+v", i+1, res.Epochs[i], ref.Epochs[i])
		}
	}
	got, exp := res.Epochs[3], ref.Epochs[3]
	if math.Abs(got.Loss-exp.Loss) > 1e-5*exp.Loss || got.TestAcc != exp.TestAcc || got.TrainAcc != exp.TrainAcc ||
		math.Abs(got.LR-exp.LR) > 1e-9 {
		t.Errorf("resumed epoch 4: loss %.9g test %g train %g lr %g; the uninterrupted legacy run: loss %.9g test %g train %g lr %g",
			got.Loss, got.TestAcc, got.TrainAcc, got.LR, exp.Loss, exp.TestAcc, exp.TrainAcc, exp.LR)
	}
	if res.Config.TSMix != string(neuron.TSMixPaper) || res.TSMix != string(neuron.TSMixPaper) || res.Readout != "mean" {
		t.Errorf("the resumed result records %+v / %+v, want the legacy semantics", res.Config, res.Semantics)
	}

	// The legacy result.json reads back with the legacy semantics too.
	if err := os.WriteFile(filepath.Join(dir, ResultFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadResult(dir)
	if err != nil || r.Config != want || r.TSMix != "paper" || r.DropoutMode != "shared" || r.LRSchedule != "step" {
		t.Errorf("legacy result.json reads as %+v, %+v, %v", r.Config, r.Semantics, err)
	}
}
