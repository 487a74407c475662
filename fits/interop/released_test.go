package interop

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/fits-snn/fits/data/all" // registers the datasets
	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/xla/xlatest"
)

// fixtureDir holds the run folders the PyTorch peer wrote in the released layout
// (peers/make_released_fixtures.sh): o0, o1, o2 for M = 0, 1, 2, and the baselines lif, adaptive_lif (the
// released LIFNeuron) and fs_frozen (learn_freq false).
const fixtureDir = "testdata/released"

// expected is a fixture's expected.json: what the peer computed with the saved weights on the test split.
type expected struct {
	Order        int         `json:"order"`
	Epoch        int         `json:"epoch"`
	TestAccuracy float64     `json:"test_accuracy"`
	TestLoss     float64     `json:"test_loss"`
	MinMargin    float64     `json:"min_margin"`
	Logits       [][]float64 `json:"logits"`
}

func readExpected(t *testing.T, dir string) expected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// importFixture imports the fixture of that name (o1, lif, ...) into a fresh folder and returns the folder.
func importFixture(t *testing.T, name string) string {
	t.Helper()
	r, err := ReadReleased(filepath.Join(fixtureDir, name), "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := MapReleased(r, MapOptions{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := ImportRun(r, m, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// logitTol is the float32 tolerance on a logit: a sum readout of at most 24 spikes times weights of order
// one, computed in another order of operations by PyTorch and XLA.
const logitTol = 2e-5

// maxLogitDiff returns the largest |got − want| over the logits.
func maxLogitDiff(t *testing.T, got [][]float32, want [][]float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d examples, want %d", len(got), len(want))
	}
	worst := 0.0
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("example %d: %d classes, want %d", i, len(got[i]), len(want[i]))
		}
		for c := range got[i] {
			worst = math.Max(worst, math.Abs(float64(got[i][c])-want[i][c]))
		}
	}
	return worst
}

// TestReleasedFixturesEvaluateAsInThePeer imports the peer's released-layout runs (M = 0, 1, 2 and the
// baselines) and checks that each maps onto the model it is, that this toolkit's forward pass gives the
// peer's test logits within float32 tolerance, and fits eval's engine the peer's accuracy exactly and its
// loss within float32 rounding. For M = 2 the same weights under Eq. 10's nesting must not reproduce them:
// the import must set the released (innermost-first) nesting.
func TestReleasedFixturesEvaluateAsInThePeer(t *testing.T) {
	b := xlatest.XLA(t)
	for _, f := range []struct {
		name  string
		model neuron.Kind
		order int
		// hasTarget says whether the network holds f* (log_target_hz).
		hasTarget bool
	}{
		{"o0", neuron.FS, 0, true}, {"o1", neuron.FSTS, 1, true}, {"o2", neuron.FSTS, 2, true},
		{"lif", neuron.LIF, 0, false}, {"adaptive_lif", neuron.AdaptLIF, 0, false}, {"fs_frozen", neuron.FSFrozen, 0, true},
	} {
		t.Run(f.name, func(t *testing.T) {
			order := f.order
			want := readExpected(t, filepath.Join(fixtureDir, f.name))
			if want.Order != order {
				t.Fatalf("fixture %s holds M = %d", f.name, want.Order)
			}
			dir := importFixture(t, f.name)
			res, err := train.Evaluate(dir, train.Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			if res.Model != string(f.model) || res.M != order {
				t.Errorf("imported as %s M=%d, want %s M=%d", res.Model, res.M, f.model, order)
			}
			if res.TestAcc != want.TestAccuracy {
				t.Errorf("fits eval test accuracy %v, the peer's %v", res.TestAcc, want.TestAccuracy)
			}
			if math.Abs(res.TestLoss-want.TestLoss) > 1e-5 {
				t.Errorf("fits eval test loss %v, the peer's %v", res.TestLoss, want.TestLoss)
			}
			if res.Epoch != want.Epoch {
				t.Errorf("checkpoint of epoch %d, the peer saved epoch %d", res.Epoch, want.Epoch)
			}
			run, err := analysis.Load(dir, analysis.Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			target := run.Context.Store().GetVariable("/" + train.ModelScope + "/hidden_0/neuron/" + neuron.VarLogTargetHz)
			if (target != nil) != f.hasTarget {
				t.Errorf("a %s network holds %s: %v, want %v", f.model, neuron.VarLogTargetHz, target != nil, f.hasTarget)
			}
			// The released fit counts the parameters that require a gradient: not a frozen f*, not κ of the LIFs.
			rel, err := ReadReleased(filepath.Join(fixtureDir, f.name), "")
			if err != nil {
				t.Fatal(err)
			}
			if want, ok := rel.Config["n_params"].(int); !ok || want != run.Result.ParameterCount {
				t.Errorf("%d trainable parameters, the released code counted %v", run.Result.ParameterCount, rel.Config["n_params"])
			}
			act, err := run.Spikes(analysis.SplitTest, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxLogitDiff(t, act.Logits, want.Logits); d > logitTol {
				t.Errorf("logits differ from the peer's by up to %g (tolerance %g)", d, logitTol)
			}
			if order < 2 {
				return
			}
			run.Config.TSMix = string(neuron.TSMixPaper)
			paper, err := run.Spikes(analysis.SplitTest, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxLogitDiff(t, paper.Logits, want.Logits); d <= 100*logitTol {
				t.Errorf("with Eq. 10's nesting the logits differ from the peer's by only %g: the fixture does not tell the nestings apart", d)
			}
		})
	}
}

// TestImportedRunRecordsItsSource checks result.json of an imported run: where it came from, the
// configuration mapped, the released history as its epochs, the selected epoch.
func TestImportedRunRecordsItsSource(t *testing.T) {
	dir := importFixture(t, "o1")
	res, err := train.ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := readExpected(t, filepath.Join(fixtureDir, "o1"))
	imp := res.Imported
	switch {
	case imp == nil:
		t.Fatal("result.json has no imported field")
	case imp.Format != FormatReleased || imp.From != "o1/best.pth" || len(imp.SHA256) != 64 || imp.Config != "checkpoint":
		t.Errorf("imported = %+v", imp)
	case res.BestEpoch != want.Epoch || imp.Epoch != want.Epoch:
		t.Errorf("best epoch %d, imported epoch %d, want %d", res.BestEpoch, imp.Epoch, want.Epoch)
	case len(res.Epochs) == 0 || len(res.Epochs) != len(imp.History):
		t.Errorf("%d epochs, %d released records", len(res.Epochs), len(imp.History))
	case res.Model != "fsts" || res.M != 1 || res.Width != 16 || res.Config.TSMix != "official" || res.Readout != "sum":
		t.Errorf("mapped to %s M=%d width %d, ts_mix %s, readout %s", res.Model, res.M, res.Width, res.Config.TSMix, res.Readout)
	}
	if got := res.Epochs[want.Epoch-1].TestAcc; got != want.TestAccuracy {
		t.Errorf("epoch %d's test accuracy %v, the peer's %v", want.Epoch, got, want.TestAccuracy)
	}
}

// TestImportedRunIsNotResumed checks that training does not continue an imported run: its checkpoint holds
// no optimizer state, so TrainModel with Resume is an *InputError saying so, and the run folder keeps its
// checkpoint.
func TestImportedRunIsNotResumed(t *testing.T) {
	dir := importFixture(t, "o1")
	before, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = train.TrainModel(train.Config{}, train.Options{Dir: dir, Resume: true, Backend: xlatest.XLA(t)})
	var ie *train.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "holds no optimizer state") {
		t.Fatalf("resuming an imported run: %v, want an input error saying it holds no optimizer state", err)
	}
	after, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the refused resume left %d entries in the run folder, %d before", len(after), len(before))
	}
	if _, err := train.Evaluate(dir, train.Options{Backend: xlatest.XLA(t)}); err != nil {
		t.Errorf("the imported run no longer evaluates: %v", err)
	}
}

// TestImportedValidationHistory imports a run of a validation protocol (eval_mode valid_split): the
// released fit records valid_acc every epoch and test_acc only at the epochs that improve it (strictly), so
// an epoch without test_acc carries the test accuracy selected so far, result.json's selection is the
// checkpoint's epoch and accuracies, and imported.history keeps the records as they were.
func TestImportedValidationHistory(t *testing.T) {
	r, err := ReadReleased(filepath.Join(fixtureDir, "o1"), "")
	if err != nil {
		t.Fatal(err)
	}
	r.Config["eval_mode"] = "valid_split"
	rec := func(epoch int, valid float64, test ...float64) map[string]any {
		m := map[string]any{"epoch": float64(epoch), "train_loss": 2.0 / float64(epoch), "train_acc": 0.1 * float64(epoch),
			"lr": 0.03, "valid_acc": valid, "freq_projected": 0.0}
		if len(test) > 0 {
			m["test_acc"] = test[0]
		}
		return m
	}
	r.History = []map[string]any{rec(1, 0.25, 0.30), rec(2, 0.20), rec(3, 0.40, 0.35), rec(4, 0.40)}
	va, te := 0.40, 0.35
	r.Epoch, r.ValidAcc, r.TestAcc = 3, &va, &te
	m, err := MapReleased(r, MapOptions{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.Protocol != train.ValSplit {
		t.Fatalf("eval_mode valid_split mapped to protocol %s, want %s", m.Config.Protocol, train.ValSplit)
	}
	dir := t.TempDir()
	if _, err := ImportRun(r, m, dir); err != nil {
		t.Fatal(err)
	}
	res, err := train.ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tests, vals []float64
	for _, e := range res.Epochs {
		tests = append(tests, e.TestAcc)
		if e.ValAcc == nil {
			t.Fatalf("epoch %d has no validation accuracy", e.Epoch)
		}
		vals = append(vals, *e.ValAcc)
	}
	if want := []float64{0.30, 0.30, 0.35, 0.35}; !slices.Equal(tests, want) {
		t.Errorf("test accuracies %v, want %v (an epoch without test_acc carries the selected one)", tests, want)
	}
	if want := []float64{0.25, 0.20, 0.40, 0.40}; !slices.Equal(vals, want) {
		t.Errorf("validation accuracies %v, want %v", vals, want)
	}
	switch {
	case res.Protocol != train.ValSplit || res.BestEpoch != 3:
		t.Errorf("protocol %s, best epoch %d; want %s, 3", res.Protocol, res.BestEpoch, train.ValSplit)
	case res.BestValAcc == nil || *res.BestValAcc != 0.40 || res.TestAccAtBestVal == nil || *res.TestAccAtBestVal != 0.35:
		t.Errorf("best validation accuracy %v, test accuracy at it %v; want 0.40, 0.35", res.BestValAcc, res.TestAccAtBestVal)
	case len(res.Imported.History) != 4:
		t.Errorf("imported.history holds %d records, want 4", len(res.Imported.History))
	}
	if _, ok := res.Imported.History[1]["test_acc"]; ok {
		t.Error("imported.history gained a test_acc at epoch 2, which the released code did not measure")
	}
}
