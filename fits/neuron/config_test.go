package neuron

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/sim"
	"github.com/fits-snn/fits/fits/theory"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

func TestKindNames(t *testing.T) {
	for _, k := range Kinds() {
		got, err := ParseKind(strings.ToUpper(k.String()))
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
		b, err := json.Marshal(struct{ K Kind }{k})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"K":"` + k.String() + `"}`; string(b) != want {
			t.Errorf("JSON of %v: %s, want %s", k, b, want)
		}
		var back struct{ K Kind }
		if err := json.Unmarshal(b, &back); err != nil || back.K != k {
			t.Errorf("JSON round trip of %v: %s -> %v, %v", k, b, back.K, err)
		}
	}
	// The paper's kinds keep their names (configurations, checkpoints and result.json store them) and
	// their order (ranks 10..50).
	var paper []string
	for _, k := range Kinds() {
		if slices.Contains([]Kind{LIF, AdaptLIF, FSFrozen, FS, FSTS}, k) {
			paper = append(paper, k.String())
		}
	}
	if want := "lif adaptlif fs-frozen fs fsts"; strings.Join(paper, " ") != want {
		t.Errorf("kinds of the paper %v, want %s", paper, want)
	}
	if !slices.Equal(KindNames(), func() []string {
		var s []string
		for _, k := range Kinds() {
			s = append(s, string(k))
		}
		return s
	}()) {
		t.Errorf("KindNames %v differs from Kinds %v", KindNames(), Kinds())
	}
	if _, err := ParseKind("resonate"); err == nil || !strings.Contains(err.Error(), "fsts") {
		t.Errorf("ParseKind of an unknown name: %v, want an error listing the kinds", err)
	}
	if _, err := Kind("resonate").MarshalText(); err == nil {
		t.Error("MarshalText accepted an unregistered kind")
	}
	var k Kind
	if err := json.Unmarshal([]byte(`"resonate"`), &k); err == nil {
		t.Error("UnmarshalText accepted an unregistered kind")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, k := range Kinds() {
		for _, m := range []int{0, 2} {
			if k.CheckOrder(m) != nil {
				continue
			}
			if err := DefaultConfig(k, m).Validate(); err != nil {
				t.Errorf("DefaultConfig(%v, %d): %v", k, m, err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		msg  string
	}{
		{"fsts order 0", func(c *Config) { c.Order = 0 }, "order"},
		{"fs with order", func(c *Config) { c.Kind = FS }, "order"},
		{"bad kind", func(c *Config) { c.Kind = "resonate" }, "kind"},
		{"tau-m zero", func(c *Config) { c.TauM = 0 }, "tau-m"},
		{"dt above tau-a", func(c *Config) { c.Dt = 0.3 }, "dt"},
		{"ratio negative", func(c *Config) { c.EtaGammaRatio = -1 }, "ratio"},
		{"vth zero", func(c *Config) { c.Vth = 0 }, "vth"},
		{"surrogate width", func(c *Config) { c.Surrogate.Width = 0 }, "surrogate"},
		{"surrogate scale NaN", func(c *Config) { c.Surrogate.Scale = math.NaN() }, "surrogate"},
		{"fmin zero", func(c *Config) { c.FMinHz = 0 }, "range"},
		{"fmax below fmin", func(c *Config) { c.FMaxHz = 0.5 }, "range"},
		{"fmax above stability", func(c *Config) { c.FMaxHz = 80 }, "stable"},
		{"lambda init inf", func(c *Config) { c.LambdaHatInit = math.Inf(-1) }, "lambda"},
		{"kappa fraction above 1", func(c *Config) { c.KappaFraction = 1.5 }, "kappa fraction"},
		{"kappa fraction negative", func(c *Config) { c.KappaFraction = -0.5 }, "kappa fraction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig(FSTS, 2)
			tc.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Validate() = %v, want an error mentioning %q", err, tc.msg)
			}
		})
	}
	// With DTExact the stability limit is a discrete-time target: 80 Hz is then allowed.
	c := DefaultConfig(FS, 0)
	c.FMaxHz, c.DTExact = 80, true
	if err := c.Validate(); err != nil {
		t.Errorf("DT-exact with f* up to 80 Hz: %v", err)
	}
}

func TestMaxTargetHz(t *testing.T) {
	k := theory.SSC
	kappa := 0.99 * theory.KappaMaxSemiImplicit(k.Mu(), k.Rho(), k.Dt)
	wantCT, _ := k.TargetHz(kappa)
	wantDT, _ := k.DTTargetHz(kappa)
	c := DefaultConfig(FS, 0)
	got, err := c.MaxTargetHz()
	if err != nil || got != wantCT || got < 76 || got > theory.SSC.Jury().FStarMaxSemiImplicitHz {
		t.Errorf("MaxTargetHz = %g, %v; want %g, below the Jury limit", got, err, wantCT)
	}
	c.DTExact = true
	if got, err := c.MaxTargetHz(); err != nil || got != wantDT {
		t.Errorf("DT-exact MaxTargetHz = %g, %v; want %g", got, err, wantDT)
	}
	c.DTExact, c.KappaFraction = false, 1
	if got, err := c.MaxTargetHz(); err != nil || math.Abs(got-theory.SSC.Jury().FStarMaxSemiImplicitHz) > 1e-9 {
		t.Errorf("MaxTargetHz at the full bound = %g, %v; want the Jury limit %g", got, err, theory.SSC.Jury().FStarMaxSemiImplicitHz)
	}
}

// TestVariablesAndClamp checks the initial values of the variables (log-spaced f*, β̂, λ̂, the frozen
// target of FSFrozen), and that with the forward clip (this toolkit's first form) a target above the
// stability limit is clamped in the graph exactly as TargetFrequenciesHz reports.
func TestVariablesAndClamp(t *testing.T) {
	tb := testBackends(t)[len(testBackends(t))-1] // SimpleGo: no compilation
	cfg := DefaultConfig(FSTS, 2)
	cfg.TSMix, cfg.TargetCoordinate, cfg.ForwardClip = TSMixPaper, TargetOmega, true
	const n = 5
	scope := model.NewStore().RootScope()
	in := make([]float32, 1*300*n)
	for i := range in {
		in[i] = float32(0.4 + 0.5*math.Sin(float64(i)*0.37))
	}
	run := func() ([]float32, []float32) {
		exec := model.MustNewExec(tb.b, scope.Store(), func(_ *model.Scope, x *Node) []*Node {
			s, v := LayerWithVoltage(scope.At("layer"), x, cfg)
			return []*Node{s, v}
		})
		out := exec.MustCall(tensors.FromFlatDataAndDimensions(in, 1, 300, n))
		return tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1])
	}
	run()
	lctx := scope.At("layer")
	f, err := TargetFrequenciesHz(lctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := theory.LogSpacedHz(1, 50, n)
	for i := range want {
		if math.Abs(f[i]-want[i]) > 1e-5*want[i] {
			t.Errorf("initial f* = %v, want log-spaced %v", f, want)
			break
		}
	}
	beta, lambda, err := TSCoefficients(lctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(beta) != 2 || len(beta[1]) != n || beta[1][3] != 0 || math.Abs(lambda[0][2]-1/(1+math.Exp(3))) > 1e-7 {
		t.Errorf("initial β = %v, λ = %v; want 0 and σ(−3)", beta, lambda)
	}
	for _, name := range []string{VarOmegaStar, VarBetaHat, VarLambdaHat} {
		if v := lctx.Store().GetVariable(model.JoinPath(lctx.Scope(), name)); v == nil || !v.Trainable {
			t.Errorf("variable %s missing or not trainable", name)
		}
	}

	// Push neuron 4's target to 200 Hz: the layer must behave as at the clamp, MaxTargetHz.
	v := lctx.Store().GetVariable(model.JoinPath(lctx.Scope(), VarOmegaStar))
	omega := tensors.MustCopyFlatData[float32](v.MustValue())
	omega[4] = float32(theory.RadPerSecFromHz(200))
	v.MustSetValue(tensors.FromFlatDataAndDimensions(omega, n))
	f, _ = TargetFrequenciesHz(lctx, cfg)
	fmax, _ := cfg.MaxTargetHz()
	if f[4] != fmax {
		t.Errorf("TargetFrequenciesHz reports %g Hz for a 200 Hz variable, want the clamp %g", f[4], fmax)
	}
	_, vPre := run()
	k := cfg.Constants()
	kappa := theory.KappaStar(k.Mu(), k.Rho(), float64(float32(theory.RadPerSecFromHz(fmax))))
	sp := sim.Params{Mu: k.Mu(), Rho: k.Rho(), Dt: k.Dt, Eta: math.Sqrt(kappa), Gamma: math.Sqrt(kappa),
		Beta: []float64{0, 0}, Lambda: []float64{lambda[0][4], lambda[1][4]}, Vth: 1, Nesting: theory.PaperNesting}
	cur := make([]float64, 300)
	for j := range cur {
		cur[j] = float64(in[j*n+4])
	}
	tr, err := sim.Run(sp, cur)
	if err != nil {
		t.Fatal(err)
	}
	for j := range cur {
		if math.Abs(float64(vPre[j*n+4])-tr.VPre[j]) > 1e-4*math.Max(1, math.Abs(tr.VPre[j])) {
			t.Fatalf("step %d: clamped neuron v_pre %g, sim at %g Hz %g", j, vPre[j*n+4], fmax, tr.VPre[j])
		}
	}

	// FSFrozen: the target exists and is not trainable.
	fctx := model.NewStore().RootScope()
	frozen := DefaultConfig(FSFrozen, 0)
	frozen.TargetCoordinate = TargetOmega
	exec := model.MustNewExec(tb.b, fctx.Store(), func(_ *model.Scope, x *Node) *Node {
		scope := fctx
		return Layer(scope, x, frozen)
	})
	exec.MustCall(tensors.FromFlatDataAndDimensions(in, 1, 300, n))
	if v := fctx.Store().GetVariable(model.JoinPath(fctx.Scope(), VarOmegaStar)); v == nil || v.Trainable {
		t.Errorf("fs-frozen: omega_star missing or trainable")
	}
	if _, err := TargetFrequenciesHz(fctx, DefaultConfig(LIF, 0)); err == nil {
		t.Error("TargetFrequenciesHz accepted a LIF layer")
	}
	if _, _, err := TSCoefficients(fctx, frozen); err == nil {
		t.Error("TSCoefficients accepted an FS layer")
	}
}

func TestLayerRejectsBadInput(t *testing.T) {
	tb := testBackends(t)[len(testBackends(t))-1]
	for _, tc := range []struct {
		name string
		cfg  Config
		x    any
	}{
		{"rank 2", DefaultConfig(FS, 0), [][]float32{{1, 2}}},
		{"integer input", DefaultConfig(FS, 0), [][][]int32{{{1}}}},
		{"invalid config", DefaultConfig(FSTS, 0), [][][]float32{{{1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exec := model.MustNewExec(tb.b, model.NewStore(), func(scope *model.Scope, x *Node) *Node {
				return Layer(scope, x, tc.cfg)
			})
			if _, err := exec.Call(tc.x); err == nil {
				t.Error("Layer accepted bad input")
			}
		})
	}
}

// The default target coordinate is ln(f*/Hz) with no clip in the forward pass: a target above the
// stability limit reaches the layer as it is; linear spacing spaces f* evenly.
func TestLogTargetNoClip(t *testing.T) {
	tb := testBackends(t)[len(testBackends(t))-1]
	cfg := DefaultConfig(FS, 0)
	cfg.FInit = FInitLinear
	const n = 4
	scope := model.NewStore().RootScope()
	exec := model.MustNewExec(tb.b, scope.Store(), func(_ *model.Scope, x *Node) *Node { return Layer(scope.At("l"), x, cfg) })
	exec.MustCall(tensors.FromFlatDataAndDimensions(make([]float32, 3*n), 1, 3, n))
	lctx := scope.At("l")
	v := lctx.Store().GetVariable(model.JoinPath(lctx.Scope(), VarLogTargetHz))
	if v == nil || !v.Trainable {
		t.Fatal("log_target_hz missing or not trainable")
	}
	got := tensors.MustCopyFlatData[float32](v.MustValue())
	for i, f := range []float64{1, 1 + 49.0/3, 1 + 98.0/3, 50} {
		if math.Abs(float64(got[i])-math.Log(f)) > 1e-6 {
			t.Errorf("initial ln f*[%d] = %g, want ln %g", i, got[i], f)
		}
	}
	got[1] = float32(math.Log(200))
	v.MustSetValue(tensors.FromFlatDataAndDimensions(got, n))
	f, err := TargetFrequenciesHz(lctx, cfg)
	if err != nil || math.Abs(f[1]-200) > 1e-3 {
		t.Errorf("TargetFrequenciesHz = %v, %v; want 200 Hz unclipped at 1", f, err)
	}
}

// The guard's f_safe at 0.98 of the Jury bound: 76.42 Hz at the SHD/SSC constants, 30.57 Hz at GSC's
// (the released code's FrequencyGuard).
func TestGuardCap(t *testing.T) {
	for _, c := range []struct {
		tauM, tauA, dt, want float64
	}{{0.04, 0.2, 0.004, 76.42}, {0.1, 0.5, 0.01, 30.57}} {
		cfg := DefaultConfig(FS, 0)
		cfg.TauM, cfg.TauA, cfg.Dt = c.tauM, c.tauA, c.dt
		f, capValue, err := cfg.GuardCap(DefaultFreqGuardSafety)
		if err != nil || math.Abs(f-c.want) > 0.005 || math.Abs(capValue-math.Log(f)) > 1e-12 {
			t.Errorf("τm %g: f_safe %g Hz (cap %g), %v; want %g Hz", c.tauM, f, capValue, err, c.want)
		}
	}
	cfg := DefaultConfig(FS, 0)
	cfg.TargetCoordinate = TargetOmega
	if f, capValue, _ := cfg.GuardCap(0.98); math.Abs(capValue-2*math.Pi*f) > 1e-9 {
		t.Errorf("Ω* cap %g for f_safe %g Hz", capValue, f)
	}
	// With the DT-exact parameterization the guard caps ln f*_DT: the realized DT target at the same κ.
	dt := DefaultConfig(FS, 0)
	dt.DTExact = true
	k := dt.Constants()
	want, ok := k.DTTargetHz(0.98 * theory.KappaMaxSemiImplicit(k.Mu(), k.Rho(), k.Dt))
	if f, capValue, err := dt.GuardCap(0.98); err != nil || !ok || math.Abs(f-want) > 1e-9 || math.Abs(capValue-math.Log(want)) > 1e-12 || TargetVariable(dt) != VarLogTargetHzDT {
		t.Errorf("DT-exact guard: f_safe %g Hz (cap %g, variable %s), %v; want the DT target %g Hz", f, capValue, TargetVariable(dt), err, want)
	}
	for _, s := range []float64{0, -1, 1.5, math.NaN()} {
		if _, _, err := cfg.GuardCap(s); err == nil {
			t.Errorf("safety %g accepted", s)
		}
	}
}
