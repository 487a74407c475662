package sim

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/theory"
)

// Twin is the float64 twin of one neuron kind of package fits/neuron, registered under the same name: it
// maps the values of one neuron's variables (the graph cell's variables, by the same names, as stored in
// checkpoints) to the constants of Algorithm 1 with the same maps and clamps as the graph cell, in
// float64; Run then steps Algorithm 1 literally. The graph layer is held to its twin for every kind.
type Twin interface {
	// Variables returns the names of the kind's variables for a layer, as the graph cell names them.
	Variables(l Layer) []string
	// Params returns the constants of Algorithm 1 of a neuron whose variables have the values v (one value
	// per variable, M values for the TS variables). It fails for a missing variable or an unusable value.
	Params(l Layer, v Vars) (Params, error)
	// Sample draws the variables of one neuron at random over a range that exercises every term of the
	// kind's update (documented per kind), for the tests that hold the graph to the twin.
	Sample(rng *rand.Rand, l Layer) Vars
}

// Layer holds what a twin needs besides a neuron's variables: the constants shared by a layer, as
// neuron.Config holds them.
type Layer struct {
	TauM, TauA, Dt float64 // τm, τa, Δt in seconds
	Vth            float64 // firing threshold, > 0
	// EtaGammaRatio is r = η/γ of the kinds parameterized by a target frequency; zero means 1.
	EtaGammaRatio float64
	// Order is the TS cascade order M.
	Order int
	// DTExact: the target-frequency variable is the realized discrete-time target (Theorem 2).
	DTExact bool
	// KappaFraction in (0, 1] is the fraction of the Jury bound on κ (Appendix A.2) at which the graph
	// clamps the target frequency (with ForwardClip) or the coupling (neuron.Config.KappaFraction; the
	// graph's default is 0.99).
	KappaFraction float64
	// Nesting is the λ-mix's nesting and the spike's comparison (neuron.Config.TSMix).
	Nesting theory.Nesting
	// LogTargetHz: the target-frequency variable is ln(f*/Hz) (neuron.TargetLogHz); otherwise Ω* in rad/s.
	LogTargetHz bool
	// ForwardClip clamps the target to [0, MaxTargetHz] before the inverse map (neuron.Config.ForwardClip).
	ForwardClip bool
	// AdaptLIFLearnable: the adaptive LIF's η and γ are variables (neuron.Config.AdaptLIFLearnable);
	// otherwise η = γ = √κ_CT(0), fixed.
	AdaptLIFLearnable bool
}

// Vars are the values of one neuron's variables by name: one value each, or M values (stage 1..M) for the
// TS variables.
type Vars map[string][]float64

// Constants returns τm, τa and Δt as theory constants.
func (l Layer) Constants() theory.Constants {
	return theory.Constants{TauM: l.TauM, TauA: l.TauA, Dt: l.Dt}
}

// Ratio returns r = η/γ (1 when EtaGammaRatio is zero).
func (l Layer) Ratio() float64 { return cmp.Or(l.EtaGammaRatio, 1) }

// KappaMax returns the clamp on κ = ηγ in 1/s²: KappaFraction times the Jury bound of the semi-implicit
// update, μρ + 4/Δt² − 2(μ + ρ)/Δt (Appendix A.2, Eq. of the κ bounds).
func (l Layer) KappaMax() (float64, error) {
	return l.Constants().KappaMax(l.KappaFraction)
}

// base returns the kind-independent constants μ, ρ, Δt and Vth.
func (l Layer) base() (Params, error) {
	k := l.Constants()
	if err := k.Validate(); err != nil {
		return Params{}, err
	}
	return Params{Mu: k.Mu(), Rho: k.Rho(), Dt: l.Dt, Vth: l.Vth, Nesting: l.Nesting}, nil
}

// value returns the single value of variable name.
func (v Vars) value(name string) (float64, error) {
	x, ok := v[name]
	if !ok || len(x) != 1 {
		return 0, fmt.Errorf("variable %s: want one value, got %d", name, len(x))
	}
	if math.IsNaN(x[0]) || math.IsInf(x[0], 0) {
		return 0, fmt.Errorf("variable %s is not finite: %g", name, x[0])
	}
	return x[0], nil
}

// checkNames reports variables of v that the twin does not have.
func (v Vars) checkNames(want []string) error {
	for name := range v {
		if !slices.Contains(want, name) {
			return fmt.Errorf("unexpected variable %s (the kind has: %s)", name, strings.Join(want, ", "))
		}
	}
	return nil
}

var twins = map[string]Twin{}

// RegisterTwin makes t the twin of the neuron kind name. It panics when name is taken or t is nil; it is
// meant to be called from init functions.
func RegisterTwin(name string, t Twin) {
	if t == nil {
		panic(fmt.Sprintf("sim.RegisterTwin: nil twin for %q", name))
	}
	if _, ok := twins[name]; ok {
		panic(fmt.Sprintf("sim.RegisterTwin: %q registered twice", name))
	}
	twins[name] = t
}

// LookupTwin returns the twin of the neuron kind name.
func LookupTwin(name string) (Twin, error) {
	t, ok := twins[name]
	if !ok {
		return nil, fmt.Errorf("no float64 twin for neuron kind %q (have: %s)", name, strings.Join(TwinNames(), ", "))
	}
	return t, nil
}

// TwinNames returns the names of the registered twins, sorted.
func TwinNames() []string { return slices.Sorted(maps.Keys(twins)) }
