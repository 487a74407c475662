package sim

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
)

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// ssc returns parameters with the paper's SSC constants (μ = 25/s, ρ = 5/s, Δt = 4 ms), η = γ = 10/s
// (κ = 100/s², κΔt² = 0.0016) and a threshold far above the test signals unless vth says otherwise.
func ssc(beta, lambda []float64, vth float64) Params {
	return Params{Mu: 25, Rho: 5, Dt: 0.004, Eta: 10, Gamma: 10, Beta: beta, Lambda: lambda, Vth: vth}
}

func TestImpulseResponseFirstSteps(t *testing.T) {
	impulse := []float64{1, 0, 0}
	for _, tc := range []struct {
		name   string
		p      Params
		vPre   []float64 // hand-computed Ṽ_M[1..3]
		stages [][]float64
		a      []float64
	}{
		{
			// M = 0: V0[1] = 1, a[1] = γΔt = 0.04; V0[2] = 0.9·1 − 0.04·0.04 = 0.8984,
			// a[2] = 0.98·0.04 + 0.04·0.8984 = 0.075136; V0[3] = 0.9·0.8984 − 0.04·0.075136 = 0.80555456.
			name:   "M=0",
			p:      ssc(nil, nil, 10),
			vPre:   []float64{1, 0.8984, 0.80555456},
			a:      []float64{0.04, 0.075136, 0.98*0.075136 + 0.04*0.80555456},
			stages: [][]float64{{1}, {0.8984}, {0.80555456}},
		},
		{
			// M = 1, β = 0.5, λ = 0.25: V1[1] = 0.5(0 − 1) + 0 = −0.5, Ṽ1[1] = 0.75 − 0.125 = 0.625;
			// V0[2] = 0.9·0.625 − 0.04·0.04 = 0.5609, V1[2] = 0.5(−0.5 − 0.5609) + 1 = 0.46955,
			// Ṽ1[2] = 0.75·0.5609 + 0.25·0.46955 = 0.5380625.
			name:   "M=1",
			p:      ssc([]float64{0.5}, []float64{0.25}, 10),
			vPre:   []float64{0.625, 0.5380625},
			a:      []float64{0.04, 0.98*0.04 + 0.04*0.5609},
			stages: [][]float64{{1, -0.5}, {0.5609, 0.46955}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := RunStates(tc.p, impulse[:len(tc.vPre)])
			if err != nil {
				t.Fatal(err)
			}
			for k := range tc.vPre {
				if tr.Spikes[k] != 0 {
					t.Errorf("step %d: spike below threshold", k)
				}
				if !near(tr.VPre[k], tc.vPre[k]) || !near(tr.V[k], tc.vPre[k]) {
					t.Errorf("step %d: v_pre = %.15g, V = %.15g, want %.15g", k, tr.VPre[k], tr.V[k], tc.vPre[k])
				}
				if !near(tr.A[k], tc.a[k]) {
					t.Errorf("step %d: a = %.15g, want %.15g", k, tr.A[k], tc.a[k])
				}
				for m, want := range tc.stages[k] {
					if !near(tr.Stages[k][m], want) {
						t.Errorf("step %d: V%d = %.15g, want %.15g", k, m, tr.Stages[k][m], want)
					}
				}
			}
		})
	}
}

func TestSoftReset(t *testing.T) {
	// Plain LIF (η = γ = 0), Vth = 1: I = [0.7, 0.7, 0, 1]. V0[1] = 0.7; V0[2] = 0.9·0.7 + 0.7 = 1.33 ≥ 1
	// → spike, V[2] = 0.33; V0[3] = 0.297; V0[4] = 0.9·0.297 + 1 = 1.2673 → spike, V = 0.2673.
	p := Params{Mu: 25, Rho: 5, Dt: 0.004, Vth: 1}
	tr, err := RunStates(p, []float64{0.7, 0.7, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	wantS := []int{0, 1, 0, 1}
	wantPre := []float64{0.7, 1.33, 0.297, 1.2673}
	wantV := []float64{0.7, 0.33, 0.297, 0.2673}
	for k := range wantS {
		if tr.Spikes[k] != wantS[k] || !near(tr.VPre[k], wantPre[k]) || !near(tr.V[k], wantV[k]) {
			t.Errorf("step %d: S=%d v_pre=%.15g V=%.15g, want S=%d v_pre=%.15g V=%.15g",
				k, tr.Spikes[k], tr.VPre[k], tr.V[k], wantS[k], wantPre[k], wantV[k])
		}
	}
}

func TestThresholdTieSpikes(t *testing.T) {
	// The paper's Θ(0) = 1: a voltage exactly at threshold spikes and resets to zero; the released code's
	// strict comparison does not spike there.
	for _, c := range []struct {
		nesting theory.Nesting
		spike   int
		v       float64
	}{{theory.PaperNesting, 1, 0}, {theory.OfficialNesting, 0, 0.5}} {
		tr, err := RunStates(Params{Mu: 25, Rho: 5, Dt: 0.004, Vth: 0.5, Nesting: c.nesting}, []float64{0.5})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Spikes[0] != c.spike || tr.V[0] != c.v {
			t.Errorf("%s: S = %d, V = %g; want S = %d, V = %g", c.nesting, tr.Spikes[0], tr.V[0], c.spike, c.v)
		}
	}
}

// The official nesting at M = 2 is (1 − λ1)V0 + λ1(1 − λ2)V1 + λ1λ2V2 (the paper's is
// (1 − λ1)(1 − λ2)V0 + λ1(1 − λ2)V1 + λ2V2), and equals the paper's nesting run with
// theory.EffectiveLambdas; for M = 1 the two nestings are one neuron.
func TestNestings(t *testing.T) {
	base := Params{Mu: 25, Rho: 5, Dt: 0.004, Eta: 20, Gamma: 20, Beta: []float64{0.5, -0.4}, Lambda: []float64{0.3, 0.6}, Vth: 1e9}
	in := []float64{1, 0, 0}
	off, _ := RunStates(base, in)
	st := off.Stages[0]
	want := (1-0.3)*st[0] + 0.3*(1-0.6)*st[1] + 0.3*0.6*st[2]
	if !near(off.VPre[0], want) {
		t.Errorf("official M = 2, first step: %g, want %g", off.VPre[0], want)
	}
	pap := base
	pap.Nesting = theory.PaperNesting
	pt, _ := RunStates(pap, in)
	if want := (1-0.3)*(1-0.6)*st[0] + 0.3*(1-0.6)*st[1] + 0.6*st[2]; !near(pt.VPre[0], want) {
		t.Errorf("paper M = 2, first step: %g, want %g", pt.VPre[0], want)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	long := make([]float64, 2000)
	for k := range long {
		long[k] = 0.3 + 0.5*rng.NormFloat64()
	}
	for m := 1; m <= 4; m++ {
		p := Params{Mu: 25, Rho: 5, Dt: 0.004, Eta: 15, Gamma: 15, Vth: 1}
		for range m {
			p.Beta = append(p.Beta, 1.4*rng.Float64()-0.7)
			p.Lambda = append(p.Lambda, rng.Float64())
		}
		eff := p
		eff.Nesting, eff.Lambda = theory.PaperNesting, theory.EffectiveLambdas(p.Lambda)
		a, _ := Run(p, long)
		b, _ := Run(eff, long)
		for k := range long {
			if math.Abs(a.VPre[k]-b.VPre[k]) > 1e-9 {
				t.Fatalf("M = %d step %d: official %g, paper with effective λ %g", m, k, a.VPre[k], b.VPre[k])
			}
		}
		if m == 1 {
			pp := p
			pp.Nesting = theory.PaperNesting
			c, _ := Run(pp, long)
			if !slices.Equal(a.VPre, c.VPre) {
				t.Error("M = 1: the nestings give different voltages")
			}
		}
	}
}

func TestM0IsFSUpdate(t *testing.T) {
	// With M = 0 the neuron is the FS update of Eq. 6 followed by spike and reset; with λ = 0 every TS
	// stage is bypassed and the spikes and voltages equal those of M = 0 exactly.
	in := make([]float64, 300)
	for k := range in {
		in[k] = 0.3 + 0.25*math.Sin(0.2*float64(k))
	}
	p0 := ssc(nil, nil, 1)
	tr0, err := Run(p0, in)
	if err != nil {
		t.Fatal(err)
	}
	// Independent transcription of Eq. 6.
	v, a := 0.0, 0.0
	spikes := 0
	for k, c := range in {
		v0 := (1-p0.Mu*p0.Dt)*v - p0.Eta*p0.Dt*a + c
		a = (1-p0.Rho*p0.Dt)*a + p0.Gamma*p0.Dt*v0
		s := 0
		if v0 >= p0.Vth {
			s = 1
		}
		spikes += s
		v = v0 - float64(s)*p0.Vth
		if tr0.Spikes[k] != s || tr0.VPre[k] != v0 {
			t.Fatalf("step %d: got S=%d v_pre=%g, want S=%d v_pre=%g", k, tr0.Spikes[k], tr0.VPre[k], s, v0)
		}
	}
	if spikes == 0 {
		t.Fatal("test input produced no spikes")
	}
	tr2, err := Run(ssc([]float64{0.6, -0.4}, []float64{0, 0}, 1), in)
	if err != nil {
		t.Fatal(err)
	}
	for k := range in {
		if tr2.Spikes[k] != tr0.Spikes[k] || tr2.VPre[k] != tr0.VPre[k] {
			t.Fatalf("step %d: λ = 0 cascade differs from M = 0", k)
		}
	}
}

// TestClosedLoopResponse holds the subthreshold impulse response of the simulator to the closed-loop
// transfer function of package theory, H(z) = G(z)(z − ρ̄)/((z − μ̄G(z))(z − ρ̄) + κ̄z): its DFT must
// equal H(e^{jω}) at several frequencies.
func TestClosedLoopResponse(t *testing.T) {
	for _, tc := range []struct {
		beta, lambda []float64
	}{
		{nil, nil},
		{[]float64{0.5}, []float64{0.3}},
		{[]float64{-0.7, 0.2, 0.9}, []float64{0.8, 0.1, 0.5}},
	} {
		p := Params{Mu: 25, Rho: 5, Dt: 0.004, Eta: 60, Gamma: 60, Beta: tc.beta, Lambda: tc.lambda, Vth: 1e9}
		in := make([]float64, 4000)
		in[0] = 1
		tr, err := Run(p, in)
		if err != nil {
			t.Fatal(err)
		}
		cl := theory.ClosedLoop{
			FS: theory.FS{MuBar: 1 - p.Mu*p.Dt, RhoBar: 1 - p.Rho*p.Dt, KappaBar: p.Eta * p.Gamma * p.Dt * p.Dt},
			TS: theory.TS{Beta: tc.beta, Lambda: tc.lambda},
		}
		for _, w := range []float64{0.05, 0.3, 1, 2.5} {
			var h complex128
			for k, v := range tr.VPre {
				// VPre[k] = Ṽ_M[k+1] = h[k+1].
				h += complex(v, 0) * cmplx.Rect(1, -w*float64(k+1))
			}
			want := cl.Response(w)
			if cmplx.Abs(h-want) > 1e-9*cmplx.Abs(want) {
				t.Errorf("M=%d ω=%g: DFT of impulse response %v, closed loop %v", len(tc.beta), w, h, want)
			}
		}
	}
}

func TestBadParams(t *testing.T) {
	good := ssc([]float64{0.5}, []float64{0.5}, 1)
	for _, tc := range []struct {
		name string
		edit func(*Params)
		msg  string
	}{
		{"mu zero", func(p *Params) { p.Mu = 0 }, "mu"},
		{"rho negative", func(p *Params) { p.Rho = -1 }, "rho"},
		{"dt NaN", func(p *Params) { p.Dt = math.NaN() }, "dt"},
		{"eta negative", func(p *Params) { p.Eta = -1 }, "eta"},
		{"gamma inf", func(p *Params) { p.Gamma = math.Inf(1) }, "gamma"},
		{"vth zero", func(p *Params) { p.Vth = 0 }, "vth"},
		{"beta one", func(p *Params) { p.Beta = []float64{1} }, "beta"},
		{"beta NaN", func(p *Params) { p.Beta = []float64{math.NaN()} }, "beta"},
		{"lambda above one", func(p *Params) { p.Lambda = []float64{1.5} }, "lambda"},
		{"lambda negative", func(p *Params) { p.Lambda = []float64{-0.1} }, "lambda"},
		{"length mismatch", func(p *Params) { p.Lambda = nil }, "lambda"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			tc.edit(&p)
			_, err := New(p)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("New: error %v, want one mentioning %q", err, tc.msg)
			}
		})
	}
	if _, err := Run(good, []float64{0, math.NaN()}); err == nil {
		t.Error("Run accepted a NaN input")
	}
	if _, err := RunMany([]Params{good, good}, [][]float64{{0, 1}, {0}}); err == nil {
		t.Error("RunMany accepted sequences of different lengths")
	}
	if _, err := RunMany([]Params{good}, [][]float64{{0}, {0}}); err == nil {
		t.Error("RunMany accepted more sequences than parameter sets")
	}
}

func TestConfigParams(t *testing.T) {
	base := Config{TauM: 0.04, TauA: 0.2, Dt: 0.004, FStar: 10, Vth: 1}
	p, err := base.Params()
	if err != nil {
		t.Fatal(err)
	}
	kappa := theory.KappaStarHz(25, 5, 10)
	if !near(p.Mu, 25) || !near(p.Rho, 5) || !near(p.Eta, math.Sqrt(kappa)) || !near(p.Gamma, math.Sqrt(kappa)) {
		t.Errorf("params %+v, want μ=25 ρ=5 η=γ=√κ*=%g", p, math.Sqrt(kappa))
	}
	// The realized CT target of κ = ηγ is the requested f*.
	if f, ok := (theory.Constants{TauM: 0.04, TauA: 0.2, Dt: 0.004}).TargetHz(p.Eta * p.Gamma); !ok || math.Abs(f-10) > 1e-9 {
		t.Errorf("target of ηγ = %g Hz (ok=%v), want 10", f, ok)
	}
	r := base
	r.EtaGammaRatio = 4
	pr, err := r.Params()
	if err != nil {
		t.Fatal(err)
	}
	if !near(pr.Eta, 2*math.Sqrt(kappa)) || !near(pr.Gamma, math.Sqrt(kappa)/2) {
		t.Errorf("ratio 4: η=%g γ=%g, want %g and %g", pr.Eta, pr.Gamma, 2*math.Sqrt(kappa), math.Sqrt(kappa)/2)
	}

	for _, tc := range []struct {
		name string
		edit func(*Config)
		msg  string
	}{
		{"tau-m zero", func(c *Config) { c.TauM = 0 }, "tau-m"},
		{"tau-a negative", func(c *Config) { c.TauA = -1 }, "tau-a"},
		{"dt above tau-m", func(c *Config) { c.Dt = 0.05 }, "dt"},
		{"fstar zero", func(c *Config) { c.FStar = 0 }, "target frequency"},
		{"fstar above Jury bound", func(c *Config) { c.FStar = 78 }, "stability bound"},
		{"ratio negative", func(c *Config) { c.EtaGammaRatio = -1 }, "ratio"},
		{"beta out of range", func(c *Config) { c.Beta, c.Lambda = []float64{-1}, []float64{0.5} }, "beta"},
		{"lambda out of range", func(c *Config) { c.Beta, c.Lambda = []float64{0}, []float64{2} }, "lambda"},
		{"vth zero", func(c *Config) { c.Vth = 0 }, "vth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			_, err := c.Params()
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.msg)
			}
		})
	}
	// Just below the semi-implicit bound (77.2 Hz at these constants) is accepted.
	ok := base
	ok.FStar = 77
	if _, err := ok.Params(); err != nil {
		t.Errorf("f* = 77 Hz rejected: %v", err)
	}
}

func TestNeuronStateAndReset(t *testing.T) {
	n, err := New(ssc([]float64{0.3, 0.1}, []float64{0.5, 0.5}, 1))
	if err != nil {
		t.Fatal(err)
	}
	n.Step(0.4)
	st := n.State()
	if len(st.Stages) != 3 || st.Stages[0] != 0.4 || st.V == 0 || st.A == 0 {
		t.Fatalf("state after one step %+v", st)
	}
	st.Stages[0] = 99 // a copy: must not alias
	if n.State().Stages[0] != 0.4 {
		t.Fatal("State aliases the neuron's stages")
	}
	n.Reset()
	if st := n.State(); st.V != 0 || st.A != 0 || st.Stages[0] != 0 || st.Stages[2] != 0 {
		t.Fatalf("state after Reset %+v", st)
	}
}

// RunMany simulates independent neurons: neuron j has parameters ps[j] and input currents
// currents[j] (one value per step; all neurons must have the same number of steps).
func RunMany(ps []Params, currents [][]float64) ([]Trace, error) {
	if len(ps) != len(currents) {
		return nil, fmt.Errorf("got %d parameter sets and %d input sequences", len(ps), len(currents))
	}
	out := make([]Trace, len(ps))
	for j := range ps {
		if j > 0 && len(currents[j]) != len(currents[0]) {
			return nil, errors.New("all input sequences must have the same length")
		}
		t, err := Run(ps[j], currents[j])
		if err != nil {
			return nil, fmt.Errorf("neuron %d: %w", j, err)
		}
		out[j] = t
	}
	return out, nil
}
