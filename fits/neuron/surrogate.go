package neuron

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
)

// Spike returns S = Θ(v − vth): 1 where v > vth (strict, the released code) or v ≥ vth (not strict, the
// paper's Algorithm 1), 0 elsewhere, as in package sim, with the triangular surrogate gradient
// dS/dv = s.Scale·max(0, 1 − |v − vth|/s.Width). v may have any shape.
//
// The forward value is exactly 0 or 1: it is Θ(u) + (u′ − u′), u = v − vth, where u′ is u with the
// surrogate as its custom gradient and the second u′ is behind StopGradient, so the bracket is exactly
// zero and carries the surrogate gradient.
func Spike(v *Node, vth float64, s Surrogate, strict bool) *Node {
	u := SubScalar(v, vth)
	heaviside := Heaviside(u, strict)
	width, scale := s.Width, s.Scale
	uc := IdentityWithCustomGradient(u, func(x, adj *Node) *Node {
		return Mul(adj, SurrogateDerivative(x, width, scale))
	})
	return Add(heaviside, Sub(uc, StopGradient(uc)))
}

// SurrogateDerivative returns scale·max(0, 1 − |u|/width) elementwise, the triangular pseudo-derivative
// of Θ at u = v − Vth.
func SurrogateDerivative(u *Node, width, scale float64) *Node {
	// The same operations as MulScalar(MaxScalar(OneMinus(DivScalar(Abs(u), width)), 0), scale), which
	// multiplies by 1/width.
	scaled := Mul(Abs(u), ConstAs(u, 1/width))
	return Mul(Max(Sub(ConstAs(u, 1), scaled), ConstAs(u, 0)), ConstAs(u, scale))
}

// Heaviside returns Θ(u) as u's dtype, with no gradient: 1 where u > 0 (strict) or u ≥ 0, 0 elsewhere.
//
// Heaviside and SurrogateDerivative build their constants with ConstAs, not GoMLX's cached scalars, so
// that they can run inside a While loop body (package fits/scan): GoMLX v0.28.16 caches scalar constants
// per graph, and a loop body cannot read a constant first made in the enclosing function.
func Heaviside(u *Node, strict bool) *Node {
	zero := ConstAs(u, 0)
	if strict {
		return ConvertDType(GreaterThan(u, zero), u.DType())
	}
	return ConvertDType(GreaterOrEqual(u, zero), u.DType())
}
