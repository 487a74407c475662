package neuron

import (
	"math"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// ReadLearned maps the variables of a scope to f*, β and λ, and TSGroupDelay is the single-stage closed
// form of Appendix (Eq. app_ts_single_stage_delay) times Δt for M = 1.
func TestReadLearned(t *testing.T) {
	cfg := DefaultConfig(FSTS, 1)
	scope := model.NewStore().RootScope().At("layer")
	scope.VariableWithValue(VarLogTargetHz, tensors.FromFlatDataAndDimensions([]float32{float32(math.Log(5)), float32(math.Log(20))}, 2))
	scope.VariableWithValue(VarBetaHat, tensors.FromFlatDataAndDimensions([]float32{0.5, -0.3}, 1, 2))
	scope.VariableWithValue(VarLambdaHat, tensors.FromFlatDataAndDimensions([]float32{-3, 1}, 1, 2))
	l, err := ReadLearned(scope, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l.Sets() != 2 || math.Abs(l.TargetHz[0]-5) > 1e-5 || math.Abs(l.TargetHz[1]-20) > 1e-4 {
		t.Fatalf("f* = %v, want [5 20]", l.TargetHz)
	}
	for i, bh := range []float64{0.5, -0.3} {
		lh := []float64{-3, 1}[i]
		beta, lambda := math.Tanh(bh), 1/(1+math.Exp(-lh))
		if math.Abs(l.Beta[0][i]-beta) > 1e-6 || math.Abs(l.Lambda[0][i]-lambda) > 1e-6 {
			t.Errorf("set %d: β = %g, λ = %g, want %g, %g", i, l.Beta[0][i], l.Lambda[0][i], beta, lambda)
		}
		for _, f := range []float64{0, 10, 60, 125} {
			got, err := l.TSGroupDelay(i, f)
			if err != nil {
				t.Fatal(err)
			}
			w := 2 * math.Pi * f * cfg.Dt
			want := theory.MixedStageGroupDelay(l.Beta[0][i], l.Lambda[0][i], w) * cfg.Dt
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("set %d at %g Hz: delay %g s, want %g s", i, f, got, want)
			}
		}
	}
	if _, err := l.TSGroupDelay(2, 10); err == nil {
		t.Error("set 2 of 2: no error")
	}
	if _, err := l.TSGroupDelay(0, 126); err == nil {
		t.Error("126 Hz above the Nyquist frequency 125 Hz: no error")
	}

	// A kind without TS: f* only, zero TS delay; a scope without the variables: an error.
	fs := DefaultConfig(FS, 0)
	l, err = ReadLearned(scope, fs)
	if err != nil || l.Beta != nil || l.Sets() != 2 {
		t.Fatalf("FS: %+v, %v", l, err)
	}
	if d, err := l.TSGroupDelay(0, 10); err != nil || d != 0 {
		t.Errorf("FS: TS delay %g, %v; want 0", d, err)
	}
	if _, err := ReadLearned(model.NewStore().RootScope().At("empty"), cfg); err == nil {
		t.Error("empty scope: no error")
	}
}
