// Package sim is the float64 reference simulator of the FiTS neuron: a literal transcription of
// Algorithm 1 (Appendix A.5, "Discrete-Time Update of the FiTS Neuron") for any TS cascade order M ≥ 0.
// It is the oracle that the GoMLX graph neuron (package fits/neuron) is tested against.
//
// Every neuron kind of package fits/neuron is a special case of Algorithm 1 with its own map from its
// variables to the constants (Params). Each kind has its float64 twin here, in its own file, registered
// under the kind's name (RegisterTwin, LookupTwin): the twin performs that map in float64 and Run steps the
// update.
//
// One step k → k+1, for input current I[k]:
//
//	FS module (Eq. 6, semi-implicit Euler):
//	  V0[k+1] = (1 − μΔt)·V[k] − ηΔt·a[k] + I[k]
//	  a[k+1]  = (1 − ρΔt)·a[k] + γΔt·V0[k+1]
//	TS module (Eqs. 8–10), for m = 1..M:
//	  Vm[k+1] = βm·(Vm[k] − V(m−1)[k+1]) + V(m−1)[k]
//	and the λ-mix of the stage outputs into Ṽ[k+1], in one of two nestings (Params.Nesting):
//	  official (the released code): b = VM[k+1]; for m = M … 1: b = (1 − λm)·V(m−1)[k+1] + λm·b; Ṽ = b
//	  paper (Eq. 10):                Ṽ0 = V0[k+1]; Ṽm = (1 − λm)·Ṽ(m−1) + λm·Vm[k+1]; Ṽ = ṼM
//	Spike and subtractive soft reset:
//	  S[k+1] = Θ(Ṽ[k+1] − Vth),  V[k+1] = Ṽ[k+1] − S[k+1]·Vth
//
// The all-pass recurrence needs V(m−1)[k], the previous step's input of stage m, so the state carries
// V[k], a[k] and every stage value V0[k] … VM[k] (V0[k] is the FS output before the reset, not V[k]).
//
// Θ at zero: with the official nesting a neuron spikes when Ṽ[k+1] > Vth (strict, Θ(0) = 0, the
// released code); with the paper's nesting when Ṽ[k+1] ≥ Vth (Θ(0) = 1, Algorithm 1). The graph neuron
// does the same.
//
// Units: μ = 1/τm and ρ = 1/τa in 1/s, Δt in seconds, η and γ in 1/s (κ = ηγ in 1/s²), voltages and
// currents in threshold units (the paper uses Vth = 1), I[k] is the per-step increment of Eq. 6.
package sim

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
)

// Params are the constants of one neuron in Algorithm 1.
type Params struct {
	Mu    float64 // μ = 1/τm, 1/s
	Rho   float64 // ρ = 1/τa, 1/s
	Dt    float64 // Δt, seconds
	Eta   float64 // η ≥ 0, feedback of adaptation to voltage, 1/s
	Gamma float64 // γ ≥ 0, coupling of voltage to adaptation, 1/s
	// Beta[m−1] = βm, |βm| < 1, the all-pass coefficients of the TS cascade (Eq. 8); len = M.
	Beta []float64
	// Lambda[m−1] = λm ∈ [0, 1], the mixing weights of the TS module (Eq. 10); len = M.
	Lambda []float64
	Vth    float64 // firing threshold, > 0
	// Nesting is the λ-mix's nesting and with it the spike's comparison: theory.OfficialNesting (the zero
	// value; Ṽ > Vth) or theory.PaperNesting (Eq. 10; Ṽ ≥ Vth).
	Nesting theory.Nesting
}

// Order returns the TS cascade order M = len(Beta).
func (p Params) Order() int { return len(p.Beta) }

// Validate reports whether the parameters are usable by Algorithm 1: finite numbers, μ, ρ, Δt, Vth > 0,
// η, γ ≥ 0, len(Beta) = len(Lambda), |βm| < 1 and λm ∈ [0, 1]. It does not check stability.
func (p Params) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
		min  float64
		incl bool // whether min itself is allowed
	}{
		{"mu", p.Mu, 0, false}, {"rho", p.Rho, 0, false}, {"dt", p.Dt, 0, false},
		{"eta", p.Eta, 0, true}, {"gamma", p.Gamma, 0, true}, {"vth", p.Vth, 0, false},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < f.min || (!f.incl && f.v == f.min) {
			rel := ">"
			if f.incl {
				rel = "≥"
			}
			return fmt.Errorf("%s must be finite and %s %g, got %g", f.name, rel, f.min, f.v)
		}
	}
	if p.Nesting > theory.PaperNesting {
		return fmt.Errorf("unknown nesting %d", p.Nesting)
	}
	if len(p.Beta) != len(p.Lambda) {
		return fmt.Errorf("need one lambda per beta, got %d betas and %d lambdas", len(p.Beta), len(p.Lambda))
	}
	for m, b := range p.Beta {
		if math.IsNaN(b) || !(math.Abs(b) < 1) {
			return fmt.Errorf("beta[%d] must satisfy |beta| < 1, got %g", m+1, b)
		}
	}
	for m, l := range p.Lambda {
		if math.IsNaN(l) || l < 0 || l > 1 {
			return fmt.Errorf("lambda[%d] must lie in [0, 1], got %g", m+1, l)
		}
	}
	return nil
}

// State is the carried state of Algorithm 1 between steps.
type State struct {
	V float64 // post-reset voltage V[k]
	A float64 // adaptation current a[k]
	// Stages[m] = Vm[k], m = 0..M: the FS output V0[k] (pre-reset) and the all-pass stage outputs.
	Stages []float64
}

// Neuron is one FiTS neuron stepping through Algorithm 1. The zero state (all zeros) is the initial
// state.
type Neuron struct {
	p Params
	s State
	// next holds Vm[k+1] during a step.
	next []float64
}

// New returns a neuron with parameters p in the zero state.
func New(p Params) (*Neuron, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p.Beta = append([]float64(nil), p.Beta...)
	p.Lambda = append([]float64(nil), p.Lambda...)
	m := p.Order()
	return &Neuron{p: p, s: State{Stages: make([]float64, m+1)}, next: make([]float64, m+1)}, nil
}

// Params returns a copy of the neuron's parameters.
func (n *Neuron) Params() Params {
	p := n.p
	p.Beta = append([]float64(nil), p.Beta...)
	p.Lambda = append([]float64(nil), p.Lambda...)
	return p
}

// State returns a copy of the current state (V[k], a[k], V0[k]…VM[k]).
func (n *Neuron) State() State {
	s := n.s
	s.Stages = append([]float64(nil), s.Stages...)
	return s
}

// Reset puts the neuron back into the zero state.
func (n *Neuron) Reset() {
	n.s.V, n.s.A = 0, 0
	clear(n.s.Stages)
}

// Step advances the neuron by one step of Algorithm 1 with input current I[k]. It returns the spike
// S[k+1] ∈ {0, 1} and the pre-reset mixed voltage ṼM[k+1].
func (n *Neuron) Step(current float64) (spike int, vPre float64) {
	p, s := &n.p, &n.s
	// FS module (Eq. 6).
	v0 := (1-p.Mu*p.Dt)*s.V - p.Eta*p.Dt*s.A + current
	s.A = (1-p.Rho*p.Dt)*s.A + p.Gamma*p.Dt*v0
	// TS module (Eqs. 8-10): the all-pass stages, then the λ-mix in the parameters' nesting.
	n.next[0] = v0
	for m := 1; m <= p.Order(); m++ {
		n.next[m] = p.Beta[m-1]*(s.Stages[m]-n.next[m-1]) + s.Stages[m-1]
	}
	var mixed float64
	if p.Nesting == theory.PaperNesting {
		mixed = v0
		for m := 1; m <= p.Order(); m++ {
			mixed = (1-p.Lambda[m-1])*mixed + p.Lambda[m-1]*n.next[m]
		}
	} else {
		mixed = n.next[p.Order()]
		for m := p.Order(); m >= 1; m-- {
			mixed = (1-p.Lambda[m-1])*n.next[m-1] + p.Lambda[m-1]*mixed
		}
	}
	copy(s.Stages, n.next)
	// Spike generation and subtractive soft reset.
	s.V = mixed
	if mixed > p.Vth || (mixed == p.Vth && p.Nesting == theory.PaperNesting) {
		spike = 1
		s.V = mixed - p.Vth
	}
	return spike, mixed
}

// Trace is the output of a simulation of T steps: entry k describes step k → k+1.
type Trace struct {
	Spikes []int     // S[k+1] ∈ {0, 1}
	VPre   []float64 // pre-reset mixed voltage ṼM[k+1]
	// The following are filled only when states are recorded (RunStates).
	V      []float64   // post-reset voltage V[k+1]
	A      []float64   // adaptation current a[k+1]
	Stages [][]float64 // Stages[k][m] = Vm[k+1], m = 0..M
}

// Run simulates one neuron from the zero state over the input currents I[0..T−1].
func Run(p Params, current []float64) (Trace, error) { return run(p, current, false) }

// RunStates is Run that also records the internal states V, a and V0…VM after every step.
func RunStates(p Params, current []float64) (Trace, error) { return run(p, current, true) }

func run(p Params, current []float64, states bool) (Trace, error) {
	n, err := New(p)
	if err != nil {
		return Trace{}, err
	}
	for k, c := range current {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return Trace{}, fmt.Errorf("input current[%d] is not finite: %g", k, c)
		}
	}
	t := Trace{Spikes: make([]int, len(current)), VPre: make([]float64, len(current))}
	if states {
		t.V = make([]float64, len(current))
		t.A = make([]float64, len(current))
		t.Stages = make([][]float64, len(current))
	}
	for k, c := range current {
		t.Spikes[k], t.VPre[k] = n.Step(c)
		if states {
			t.V[k], t.A[k] = n.s.V, n.s.A
			t.Stages[k] = append([]float64(nil), n.s.Stages...)
		}
	}
	return t, nil
}
