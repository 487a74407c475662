package neuron

import (
	"math"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/sim"
	"github.com/fits-snn/fits/fits/theory"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// cadlifInit builds a cadlif layer of n neurons in a fresh store with the given initial seed and
// returns the initial η and γ.
func cadlifInit(t *testing.T, cfg Config, n int, seed int64) (eta, gamma []float64) {
	t.Helper()
	tb := testBackends(t)[len(testBackends(t))-1] // SimpleGo: no compilation
	scope := model.NewStore().RootScope()
	scope.SetParam(model.ParamInitialSeed, seed)
	exec := model.MustNewExec(tb.b, scope.Store(), func(_ *model.Scope, x *Node) *Node { return Layer(scope.At("n"), x, cfg) })
	exec.MustCall(tensors.FromFlatDataAndDimensions(make([]float32, 2*n), 1, 2, n))
	lctx := scope.At("n")
	vars := layerVariables(lctx)
	for _, name := range []string{VarEta, VarGamma} {
		if v := vars[name]; v == nil || !v.Trainable {
			t.Fatalf("variable %s missing or not trainable", name)
		}
	}
	var err error
	if eta, err = variableValues(lctx, VarEta); err != nil {
		t.Fatal(err)
	}
	if gamma, err = variableValues(lctx, VarGamma); err != nil {
		t.Fatal(err)
	}
	return eta, gamma
}

// TestCAdLIFInit checks the initialization: η and γ uniform in [√κ*(FMinHz), √κ*(FMaxHz)] (3.6 to 314 1/s
// with the SHD/SSC constants), spread over the range, so that every κ = ηγ has its continuous-time target
// in [FMinHz, FMaxHz], below the stable limit; reproducible from the seed.
func TestCAdLIFInit(t *testing.T) {
	cfg := DefaultConfig(CAdLIF, 0)
	const n = 200
	eta, gamma := cadlifInit(t, cfg, n, 11)
	k := cfg.Constants()
	lo := math.Sqrt(theory.KappaStar(k.Mu(), k.Rho(), theory.RadPerSecFromHz(1)))
	hi := math.Sqrt(theory.KappaStar(k.Mu(), k.Rho(), theory.RadPerSecFromHz(50)))
	if lo < 3.5 || lo > 3.7 || hi < 310 || hi > 318 {
		t.Fatalf("range [%g, %g] 1/s, want about [3.6, 314]", lo, hi)
	}
	fmax, _ := cfg.MaxTargetHz()
	var below, above int
	for i := range n {
		for _, x := range []float64{eta[i], gamma[i]} {
			if x < lo*(1-1e-6) || x > hi*(1+1e-6) {
				t.Fatalf("initial value %g outside [%g, %g]", x, lo, hi)
			}
			if x < (lo+hi)/2 {
				below++
			} else {
				above++
			}
		}
		f, ok := k.TargetHz(eta[i] * gamma[i])
		if !ok || f < 1-1e-3 || f > 50+1e-3 || f > fmax {
			t.Fatalf("neuron %d: κ = %g has target %g Hz (ok=%v), want within [1, 50] Hz", i, eta[i]*gamma[i], f, ok)
		}
	}
	if below < n/2 || above < n/2 {
		t.Errorf("%d values below the middle of the range and %d above: not uniform", below, above)
	}
	eta2, _ := cadlifInit(t, cfg, n, 11)
	eta3, _ := cadlifInit(t, cfg, n, 12)
	same, differ := true, false
	for i := range n {
		same = same && eta2[i] == eta[i]
		differ = differ || eta3[i] != eta[i]
	}
	if !same || !differ {
		t.Errorf("initialization not determined by the seed: same seed equal %v, other seed differs %v", same, differ)
	}
}

// TestCAdLIFGradients checks what the non-zero initialization is for: η and γ receive a gradient, unlike
// AdaptLIF's at its zero initialization.
func TestCAdLIFGradients(t *testing.T) {
	tb := testBackends(t)[len(testBackends(t))-1]
	grads := layerGradients(t, tb, DefaultConfig(CAdLIF, 0), 2, 30, 3, 4)
	for _, name := range []string{"weights", VarEta, VarGamma} {
		norm := 0.0
		for _, x := range grads[name] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("gradient of %s is not finite: %v", name, grads[name])
			}
			norm += x * x
		}
		if norm == 0 {
			t.Errorf("gradient of %s is zero", name)
		}
	}
}

// TestCAdLIFClamp holds the graph to the float64 twin for coupling values outside the clamp
// [0, √(0.99·κmax)]: far above it (with γ small enough for a well-damped neuron) and below zero.
func TestCAdLIFClamp(t *testing.T) {
	tb := testBackends(t)[len(testBackends(t))-1]
	cfg := DefaultConfig(CAdLIF, 0)
	_, _, bound := cadlifRanges(cfg)
	neurons := []sim.Vars{
		{VarEta: {float64(float32(3 * bound))}, VarGamma: {float64(float32(0.2 * bound))}},
		{VarEta: {-5}, VarGamma: {12}},
		{VarEta: {40}, VarGamma: {-1e3}},
	}
	const steps = 300
	in := make([]float32, steps*len(neurons))
	for i := range in {
		in[i] = float32(0.4 + 0.5*math.Sin(float64(i)*0.37))
	}
	input := tensors.FromFlatDataAndDimensions(in, 1, steps, len(neurons))
	scope := model.NewStore().RootScope()
	exec := model.MustNewExec(tb.b, scope.Store(), func(_ *model.Scope, x *Node) []*Node {
		s, v := LayerWithVoltage(scope, x, cfg)
		return []*Node{s, v}
	})
	exec.MustCall(input)
	setNeurons(t, layerVariables(scope), neurons)
	vPre := tensors.MustCopyFlatData[float32](exec.MustCall(input)[1])
	twin, err := sim.LookupTwin(string(CAdLIF))
	if err != nil {
		t.Fatal(err)
	}
	for i, nv := range neurons {
		p, err := twin.Params(simLayer(cfg), nv)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && math.Abs(p.Eta*p.Gamma-0.2*bound*bound) > 1e-6*bound*bound {
			t.Fatalf("twin: κ = %g, want η clamped to %g", p.Eta*p.Gamma, bound)
		}
		cur := make([]float64, steps)
		for k := range cur {
			cur[k] = float64(in[k*len(neurons)+i])
		}
		tr, err := sim.Run(p, cur)
		if err != nil {
			t.Fatal(err)
		}
		for k := range cur {
			if got := float64(vPre[k*len(neurons)+i]); math.Abs(got-tr.VPre[k]) > 1e-4*math.Max(1, math.Abs(tr.VPre[k])) {
				t.Fatalf("neuron %d step %d: v_pre %g, twin %g", i, k, got, tr.VPre[k])
			}
		}
	}
}

func TestCAdLIFConfig(t *testing.T) {
	cfg := DefaultConfig(CAdLIF, 2)
	if cfg.Order != 0 || StateComponents(cfg) != 2 || !CAdLIF.HasAdaptation() || CAdLIF.HasTargetFrequency() || CAdLIF.HasTS() {
		t.Errorf("order %d, %d state components, capabilities %v %v %v", cfg.Order, StateComponents(cfg),
			CAdLIF.HasAdaptation(), CAdLIF.HasTargetFrequency(), CAdLIF.HasTS())
	}
	if k, err := ParseKind("cAdLIF"); err != nil || k != CAdLIF {
		t.Errorf("ParseKind: %v, %v", k, err)
	}
	// The DT-exact option does not apply: the range is checked against the continuous-time limit.
	c := DefaultConfig(CAdLIF, 0)
	c.FMaxHz, c.DTExact = 80, true
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "stable") {
		t.Errorf("f* up to 80 Hz with DT-exact: %v, want the continuous-time stable limit", err)
	}
	c = DefaultConfig(CAdLIF, 0)
	c.Order = 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "no TS module") {
		t.Errorf("order 1: %v", err)
	}
}
