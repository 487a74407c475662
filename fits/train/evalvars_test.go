package train

import (
	"errors"
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// TestEvaluateWith trains a tiny run and evaluates it unmodified (the same as Evaluate), with the
// readout's bias pushed towards one class (every prediction is that class, so the accuracy is the
// class's share of each split), and with a failing modification; the checkpoint on disk is unchanged.
func TestEvaluateWith(t *testing.T) {
	cfg := tinyConfig()
	cfg.Epochs, cfg.Dropout = 1, 0
	opts, _ := trainedIn(t, cfg)
	ds := opts.Dataset
	want, err := Evaluate(opts.Dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	same, err := EvaluateWith(opts.Dir, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if same.TestAcc != want.TestAcc || *same.ValAcc != *want.ValAcc || len(same.ValFiringRates) != 2 || len(want.ValFiringRates) != 2 {
		t.Fatalf("EvaluateWith(nil): %+v, Evaluate: %+v", same, want)
	}

	const class = 2
	modified, err := EvaluateWith(opts.Dir, opts, func(scope *model.Scope) error {
		v := scope.Store().GetVariable(model.JoinPath("/"+ModelScope+"/readout/dense", "biases"))
		if v == nil {
			return errors.New("no readout bias")
		}
		b := make([]float32, ds.Classes)
		b[class] = 1e6
		return v.SetValue(tensors.FromFlatDataAndDimensions(b, ds.Classes))
	})
	if err != nil {
		t.Fatal(err)
	}
	share := func(labels []int32) float64 {
		n := 0
		for _, l := range labels {
			if l == class {
				n++
			}
		}
		return float64(n) / float64(len(labels))
	}
	_, val, test, err := ProtocolSplits(cfg, ds)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(modified.TestAcc-share(test.Labels)) > 1e-12 || math.Abs(*modified.ValAcc-share(val.Labels)) > 1e-12 {
		t.Errorf("with every prediction class %d: test acc %g, val acc %g; want the class's shares %g, %g",
			class, modified.TestAcc, *modified.ValAcc, share(test.Labels), share(val.Labels))
	}
	// Spikes do not depend on the readout.
	for i := range want.FiringRates {
		if modified.FiringRates[i] != want.FiringRates[i] {
			t.Errorf("layer %d: firing rate %g, unmodified %g", i, modified.FiringRates[i], want.FiringRates[i])
		}
	}

	boom := errors.New("boom")
	if _, err := EvaluateWith(opts.Dir, opts, func(*model.Scope) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("failing modification: error %v, want it wrapped", err)
	}
	again, err := Evaluate(opts.Dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.TestAcc != want.TestAcc {
		t.Errorf("the checkpoint changed: test acc %g, before %g", again.TestAcc, want.TestAcc)
	}
}

// TestEvaluateEngine evaluates a tiny run with the engine it trained with and with another one
// (Options.Engine): the result names the engine, and the numbers agree up to float32 rounding; an unknown
// engine is bad input.
func TestEvaluateEngine(t *testing.T) {
	cfg := tinyConfig()
	cfg.Epochs, cfg.Dropout, cfg.Executor = 1, 0, ExecutorFused
	opts, _ := trainedIn(t, cfg)
	own, err := Evaluate(opts.Dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Engine = ExecutorChunked
	other, err := Evaluate(opts.Dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if own.Engine != ExecutorFused || other.Engine != ExecutorChunked {
		t.Errorf("engines %q and %q, want %q and %q", own.Engine, other.Engine, ExecutorFused, ExecutorChunked)
	}
	if math.Abs(own.TestLoss-other.TestLoss) > 1e-4*math.Max(1, math.Abs(own.TestLoss)) || math.Abs(own.TestAcc-other.TestAcc) > 0.05 {
		t.Errorf("fused: test loss %g, acc %g; chunked: %g, %g", own.TestLoss, own.TestAcc, other.TestLoss, other.TestAcc)
	}
	opts.Engine = "warp"
	var ie *InputError
	if _, err := Evaluate(opts.Dir, opts); !errors.As(err, &ie) {
		t.Errorf("unknown engine: error %v, want an *InputError", err)
	}
}
