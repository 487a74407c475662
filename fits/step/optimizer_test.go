package step

import (
	"math"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/internal/golden"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// TestOptimizerScales checks the per-variable learning-rate multipliers: from the same variables and the
// same gradients, an optimizer with Scales{log_target_hz: 10} moves every ln f* exactly 10 times as far as the
// plain one does (Adam's step is the same, only its size differs), and every other variable the same.
func TestOptimizerScales(t *testing.T) {
	b := testBackend(t)
	net := feedForwardNet(neuron.FS, 0, model.ReadoutMean, 0)
	newCtx := func() *mlmodel.Scope {
		scope := mlmodel.NewStore().RootScope()
		if err := scope.Store().SetRNGStateFromSeed(3); err != nil {
			t.Fatal(err)
		}
		if err := InitVariables(b, scope.At("model"), net); err != nil {
			t.Fatal(err)
		}
		return scope
	}
	plain, scaled := newCtx(), newCtx()
	e, err := New(Chunked, b, plain.At("model"), net, Options{Chunk: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, grads, err := e.Gradients(batchOf(6, 4, net.InputDims, net.Classes, 1))
	if err != nil {
		t.Fatal(err)
	}
	values := func(scope *mlmodel.Scope) map[string][]float32 {
		out := map[string][]float32{}
		for _, v := range TrainableIn(scope, "") {
			x, err := tensors.CopyFlatData[float32](v.MustValue())
			if err != nil {
				t.Fatal(err)
			}
			out[v.Path()] = x
		}
		return out
	}
	before := values(plain)
	for _, c := range []struct {
		scope  *mlmodel.Scope
		scales map[string]float64
	}{{plain, nil}, {scaled, map[string]float64{neuron.VarLogTargetHz: 10}}} {
		opt, err := NewOptimizer(b, c.scope, 1e-2, 100)
		if err != nil {
			t.Fatal(err)
		}
		opt.Scales = c.scales
		if _, err := opt.Apply(grads); err != nil {
			t.Fatal(err)
		}
		opt.Close()
	}
	afterPlain, afterScaled := values(plain), values(scaled)
	sawTarget, movedTargets := false, 0
	for name, x0 := range before {
		scale := 1.0
		if strings.HasSuffix(name, "/"+neuron.VarLogTargetHz) {
			scale, sawTarget = 10, true
		}
		for i := range x0 {
			dp := float64(afterPlain[name][i] - x0[i])
			ds := float64(afterScaled[name][i] - x0[i])
			if dp != 0 && scale != 1 {
				movedTargets++
			}
			// float32 variables: the difference of two values near x0 carries x0's rounding.
			tol := 4e-7*math.Abs(float64(x0[i]))*scale + 1e-6*math.Abs(ds) + 1e-9
			if math.Abs(ds-scale*dp) > tol {
				t.Errorf("%s[%d]: scaled step %g, plain step %g, want ×%g", name, i, ds, dp, scale)
			}
		}
	}
	if !sawTarget || movedTargets == 0 {
		t.Fatalf("%s: present %v, %d elements moved by the plain step", neuron.VarLogTargetHz, sawTarget, movedTargets)
	}
}

// optimizerOn returns a scope holding one trainable variable layer/name with the given values, and an
// optimizer of it.
func optimizerOn(t *testing.T, name string, values []float32, lr float64, steps int) (*mlmodel.Scope, *Optimizer) {
	t.Helper()
	scope := mlmodel.NewStore().RootScope()
	scope.At("layer").VariableWithValue(name, tensors.FromFlatDataAndDimensions(values, len(values)))
	opt, err := NewOptimizer(testBackend(t), scope, lr, steps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(opt.Close)
	return scope, opt
}

func valuesOf(t *testing.T, ms *mlmodel.Scope, scope, name string) []float32 {
	t.Helper()
	v := ms.Store().GetVariable(mlmodel.JoinPath(scope, name))
	if v == nil {
		t.Fatalf("no variable %s/%s", scope, name)
	}
	return tensors.MustCopyFlatData[float32](v.MustValue())
}

// TestFrequencyGuard holds the guard to the released code's FrequencyGuard on four entries of ln f*, the
// cap ln 76.42 Hz: (0) below the cap, pushed up: moves freely; (1) on the cap, pushed up: the outward
// gradient is zeroed, it stays; (2) above the cap, pushed down: Adam's step leaves it above, it is
// projected and keeps its positive first moment; (3) just below the cap, pushed up across it: projected,
// its negative first moment zeroed. Two projections are counted.
func TestFrequencyGuard(t *testing.T) {
	capValue := float32(math.Log(76.42))
	x0 := []float32{float32(math.Log(10)), capValue, capValue + 0.5, capValue - 1e-4}
	scope, opt := optimizerOn(t, neuron.VarLogTargetHz, x0, 1e-2, 10)
	opt.Guard = map[string]float64{neuron.VarLogTargetHz: float64(capValue)}
	grad := tensors.FromFlatDataAndDimensions([]float32{-1, -1, 1, -1}, 4)
	if _, err := opt.Apply(map[string]*tensors.Tensor{"/layer/" + neuron.VarLogTargetHz: grad}); err != nil {
		t.Fatal(err)
	}
	x := valuesOf(t, scope, "/layer", neuron.VarLogTargetHz)
	m1 := valuesOf(t, scope, "/AdamOptimizer/layer", neuron.VarLogTargetHz+"_1st_moment")
	if !(x[0] > x0[0]+0.009) || m1[0] >= 0 {
		t.Errorf("entry 0 below the cap: %g -> %g (first moment %g), want a free step up", x0[0], x[0], m1[0])
	}
	if x[1] != capValue || m1[1] != 0 {
		t.Errorf("entry 1 on the cap: %g (first moment %g), want it to stay at %g with its gradient zeroed", x[1], m1[1], capValue)
	}
	if x[2] != capValue || !(m1[2] > 0) {
		t.Errorf("entry 2 above the cap: %g (first moment %g), want projected to %g with its positive moment kept", x[2], m1[2], capValue)
	}
	if x[3] != capValue || m1[3] != 0 {
		t.Errorf("entry 3 pushed across the cap: %g (first moment %g), want projected and its negative moment zeroed", x[3], m1[3])
	}
	if n := opt.Projections(); n != 2 {
		t.Errorf("%d projections, want 2", n)
	}
	if n := opt.Projections(); n != 0 {
		t.Errorf("Projections did not reset: %d", n)
	}
}

// TestEpochCosine checks the per-epoch schedule, CosineAnnealingLR(T_max = 3 epochs) stepped once per epoch
// of 2 steps: LR, LR, then LR·(1 + cos(π/3))/2 = 0.75·LR twice, then 0.25·LR twice; and the per-step
// schedule's first rates for comparison.
func TestEpochCosine(t *testing.T) {
	const lr = 0.1
	_, opt := optimizerOn(t, "w", []float32{1, 2}, lr, 6)
	opt.EpochSteps = 2
	grad := map[string]*tensors.Tensor{"/layer/w": tensors.FromFlatDataAndDimensions([]float32{1, -1}, 2)}
	for i, want := range []float64{lr, lr, 0.75 * lr, 0.75 * lr, 0.25 * lr, 0.25 * lr} {
		got, err := opt.Apply(grad)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-7 {
			t.Errorf("step %d: learning rate %g, want %g", i, got, want)
		}
	}
	_, perStep := optimizerOn(t, "w", []float32{1, 2}, lr, 6)
	perStep.Apply(grad)
	if got, _ := perStep.Apply(grad); math.Abs(got-lr*(1+math.Cos(math.Pi/6))/2) > 1e-7 {
		t.Errorf("per-step schedule, step 1: %g, want %g", got, lr*(1+math.Cos(math.Pi/6))/2)
	}
	_, bad := optimizerOn(t, "w", []float32{1, 2}, lr, 6)
	bad.EpochSteps = 4
	if _, err := bad.Apply(grad); err == nil {
		t.Error("4 steps per epoch accepted for a schedule of 6 steps")
	}
}

// TestAdamEpsilon: with a gradient of 1e-9 Adam's first step is lr·g/(|g| + ε): lr/11 with the released
// ε = 1e-8 (the default), lr/101 with this toolkit's first ε = 1e-7.
func TestAdamEpsilon(t *testing.T) {
	for _, c := range []struct {
		eps, want float64
	}{{0, 1.0 / 11}, {1e-7, 1.0 / 101}} {
		scope, opt := optimizerOn(t, "w", []float32{0}, 1e-2, 10)
		opt.Epsilon = c.eps
		if _, err := opt.Apply(map[string]*tensors.Tensor{"/layer/w": tensors.FromFlatDataAndDimensions([]float32{1e-9}, 1)}); err != nil {
			t.Fatal(err)
		}
		if got := -float64(valuesOf(t, scope, "/layer", "w")[0]) / 1e-2; math.Abs(got-c.want) > 1e-3*c.want {
			t.Errorf("ε = %g: step %g·lr, want %g·lr", c.eps, got, c.want)
		}
	}
}

// TestGoldenGuard replays the PyTorch implementation of the released FrequencyGuard (internal/golden,
// guard.json: 40 Adam steps of lr 0.02 on four ln f* entries pulled over the cap and back) with the same
// gradients, in float32: the same entries masked and projected at every step, and ln f* and Adam's first
// moment within float32 rounding.
func TestGoldenGuard(t *testing.T) {
	g, err := golden.Guard()
	if err != nil {
		t.Fatal(err)
	}
	cfg := neuron.DefaultConfig(neuron.FS, 0)
	cfg.TauM, cfg.TauA, cfg.Dt = g.TauM, g.TauA, g.Dt
	fSafe, capValue, err := cfg.GuardCap(g.Safety)
	if err != nil || math.Abs(fSafe-g.FSafeHz) > 1e-9 || math.Abs(capValue-g.FRawCap) > 1e-12 {
		t.Fatalf("f_safe %.12g Hz (cap %.12g), %v; golden %.12g Hz (%.12g)", fSafe, capValue, err, g.FSafeHz, g.FRawCap)
	}
	for _, c := range g.Caps {
		cc := cfg
		cc.TauM, cc.TauA, cc.Dt = c.TauM, c.TauA, c.Dt
		if f, _, err := cc.GuardCap(g.Safety); err != nil || math.Abs(f-c.FSafeHz) > 1e-9*c.FSafeHz {
			t.Errorf("%s: f_safe %.12g, %v; golden %.12g", c.Name, f, err, c.FSafeHz)
		}
	}
	if g.Adam.Eps != DefaultAdamEpsilon || g.Adam.WeightDecay != 0 {
		t.Fatalf("golden Adam %+v", g.Adam)
	}
	x0 := make([]float32, len(g.InitFRaw))
	for i, x := range g.InitFRaw {
		x0[i] = float32(x)
	}
	scope, opt := optimizerOn(t, neuron.VarLogTargetHz, x0, g.Adam.LR, len(g.Steps))
	opt.EpochSteps = len(g.Steps) // one epoch: a constant learning rate
	opt.Guard = map[string]float64{neuron.VarLogTargetHz: capValue}
	total := int64(0)
	for _, st := range g.Steps {
		grad := make([]float32, len(st.Grad))
		for i, x := range st.Grad {
			grad[i] = float32(x)
		}
		if _, err := opt.Apply(map[string]*tensors.Tensor{"/layer/" + neuron.VarLogTargetHz: tensors.FromFlatDataAndDimensions(grad, len(grad))}); err != nil {
			t.Fatal(err)
		}
		total += opt.Projections()
		x := valuesOf(t, scope, "/layer", neuron.VarLogTargetHz)
		m1 := valuesOf(t, scope, "/AdamOptimizer/layer", neuron.VarLogTargetHz+"_1st_moment")
		for i := range x {
			if math.Abs(float64(x[i])-st.FRawAfter[i]) > 2e-6 || math.Abs(float64(m1[i])-st.ExpAvg[i]) > 2e-6*math.Max(1, math.Abs(st.ExpAvg[i])) {
				t.Fatalf("step %d entry %d: ln f* %.9g, first moment %.9g; golden %.9g, %.9g (masked %v, projected %v)",
					st.Step, i, x[i], m1[i], st.FRawAfter[i], st.ExpAvg[i], st.Masked[i], st.Projected[i])
			}
		}
		if total != int64(st.Count) {
			t.Fatalf("step %d: %d projections so far, golden %d", st.Step, total, st.Count)
		}
	}
	if total != int64(g.ProjectedTotal) {
		t.Errorf("%d projections, golden %d", total, g.ProjectedTotal)
	}
}
