package neuron

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
)

// Coefficients are the constants of one step of Algorithm 1 (Appendix A.5) for a layer, as graph nodes of
// the parameter shape P ([d1, …, dn], or [dn] with Config.ChannelShared), not yet broadcast over the batch.
// Every neuron kind is a special case of this one update:
//
//	V0 = MuBar·V − EtaDt·a + I;  a ← RhoBar·a + GammaDt·V0                   (Eq. 6)
//	Vm ← Beta[m−1]·(Vm − V(m−1)new) + V(m−1)old                              (Eq. 9)
//	Ṽm = (1 − Lambda[m−1])·Ṽ(m−1) + Lambda[m−1]·Vm                           (Eq. 10)
//	S = Θ(ṼM − Vth);  V = ṼM − S·Vth
//
// The λ-mix is the paper's outermost-first nesting of Eq. 10 in every engine. The released code's
// innermost-first nesting (TSMixOfficial) is the same recurrence with the effective weights
// theory.EffectiveLambdas: the cell maps its λ to them before they reach an engine.
//
// A nil EtaDt/GammaDt means no adaptation current (LIF: the state has no a); len(Beta) = len(Lambda) = M.
// Engines that hand-derive the adjoint of the recurrence differentiate with respect to these coefficients
// and leave the map from a kind's variables (Ω*, β̂, λ̂, η, γ, ...) to the coefficients to autodiff.
// Step is the update in graph form, the one that every graph engine runs.
type Coefficients struct {
	// MuBar = 1 − μΔt and RhoBar = 1 − ρΔt (dimensionless, per step).
	MuBar, RhoBar float64
	// EtaDt = ηΔt and GammaDt = γΔt (dimensionless), shape P; nil for LIF.
	EtaDt, GammaDt *Node
	// Beta are βm ∈ (−1, 1) and Lambda are λm ∈ (0, 1), m = 1..M, each of shape P.
	Beta, Lambda []*Node
	// Vth is the firing threshold, Surrogate the spike's pseudo-derivative, DetachReset whether the
	// reset term S·Vth carries no gradient.
	Vth         float64
	Surrogate   Surrogate
	DetachReset bool
	// StrictSpike makes the spike S = 1 when ṼM > Vth (the released code, TSMixOfficial); otherwise when
	// ṼM ≥ Vth (the paper's Algorithm 1, TSMixPaper).
	StrictSpike bool
}
