package neuron

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
)

// KappaStar is theory.KappaStar written with GoMLX ops: the adaptation strength κ* = ηγ in 1/s² whose
// continuous-time target frequency is Ω* (Theorem 1, Eq. 5), elementwise for omegaStar in rad/s, with
// μ = 1/τm and ρ = 1/τa in 1/s. Like theory.KappaStar it evaluates
// κ* = ρ(ρ+μ)·q/(√(1+q) + 1), q = ((1 + (Ω*/ρ)²)/(1 + μ/ρ))², which avoids the cancellation of Eq. 5.
func KappaStar(omegaStar *Node, mu, rho float64) *Node {
	u := DivScalar(omegaStar, rho)
	v := DivScalar(OnePlus(Square(u)), 1+mu/rho)
	q := Square(v)
	return MulScalar(Div(q, OnePlus(Sqrt(OnePlus(q)))), rho*(rho+mu))
}

// KappaBarDTExact is theory.KappaBarForTarget written with GoMLX ops (without its checks): the
// dimensionless κ̄ = κΔt² whose semi-implicit FS module (Eq. 6) has its realized discrete-time target
// (Theorem 2, Appendix A.3) at omega in rad/sample, elementwise, for μ̄ = 1 − μΔt and ρ̄ = 1 − ρΔt in
// (0, 1). With n = (1 − ρ̄)² + 4ρ̄ sin²(ω/2) = 1 + ρ̄² − 2ρ̄ cos ω and b = (1 − ρ̄²)(1 − μ̄ρ̄), κ̄ is the
// positive root of ρ̄κ̄² + bκ̄ − μ̄n² = 0 (the stationarity quadratic of Theorem 2 at x = cos ω), written
// as 2μ̄n²/(b + √(b² + 4ρ̄μ̄n²)).
func KappaBarDTExact(omega *Node, muBar, rhoBar float64) *Node {
	s := Sin(DivScalar(omega, 2))
	n := AddScalar(MulScalar(Square(s), 4*rhoBar), (1-rhoBar)*(1-rhoBar))
	n2 := Square(n)
	b := (1 - rhoBar*rhoBar) * (1 - muBar*rhoBar)
	den := AddScalar(Sqrt(AddScalar(MulScalar(n2, 4*rhoBar*muBar), b*b)), b)
	return Div(MulScalar(n2, 2*muBar), den)
}
