package neuron

import (
	"fmt"
	"slices"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
)

// State is the carried state of Algorithm 1 (Appendix A.5) in one working shape: [batch, d1, …, dn] for
// one step, or with a time axis for every step of a chunk at once ([K, batch, d1, …, dn]).
type State struct {
	V, A   *Node   // the post-reset voltage V and the adaptation current a (nil without adaptation)
	Stages []*Node // the stage values V0…VM of the TS cascade; empty when M = 0
}

// Layout returns the state layout that c implies. It panics when EtaDt and GammaDt are not both set or
// both nil, or when Beta and Lambda differ in length.
func (c Coefficients) Layout() StateLayout {
	if (c.EtaDt == nil) != (c.GammaDt == nil) {
		panic(fmt.Errorf("neuron: EtaDt and GammaDt must both be set or both be nil"))
	}
	if len(c.Beta) != len(c.Lambda) {
		panic(fmt.Errorf("neuron: %d Beta but %d Lambda coefficients", len(c.Beta), len(c.Lambda)))
	}
	l := StateLayout{Adaptation: c.EtaDt != nil}
	if m := len(c.Beta); m > 0 {
		l.Stages = m + 1
	}
	return l
}

// Pack returns the state's tensors in LayerFrom's order (V, a, V0…VM, each where the layout carries it).
func (l StateLayout) Pack(s State) []*Node {
	out := []*Node{s.V}
	if l.Adaptation {
		out = append(out, s.A)
	}
	return append(out, s.Stages[:l.Stages]...)
}

// Unpack is the inverse of Pack. It panics when len(nodes) is not l.Components().
func (l StateLayout) Unpack(nodes []*Node) State {
	if len(nodes) != l.Components() {
		panic(fmt.Errorf("neuron: %d state tensors, want %d", len(nodes), l.Components()))
	}
	s := State{V: nodes[0]}
	nodes = nodes[1:]
	if l.Adaptation {
		s.A, nodes = nodes[0], nodes[1:]
	}
	s.Stages = slices.Clone(nodes)
	return s
}

// Broadcast holds the graph coefficients of Coefficients broadcast to one working shape ([batch, d1, …,
// dn], or with a time axis), with 1 − λm alongside λm: EtaDt and GammaDt are nil without adaptation,
// Beta[m−1], Lambda[m−1] and OneMinusLambda[m−1] belong to stage m.
type Broadcast struct {
	EtaDt, GammaDt               *Node
	Beta, Lambda, OneMinusLambda []*Node
}

// Broadcast broadcasts c's graph coefficients, of the parameter shape P, to dims, of which P must be a
// suffix (P = [d1, …, dn], or [dn] with Config.ChannelShared).
func (c Coefficients) Broadcast(dims []int) Broadcast {
	var b Broadcast
	if c.Layout().Adaptation {
		b.EtaDt, b.GammaDt = broadcastParam(c.EtaDt, dims), broadcastParam(c.GammaDt, dims)
	}
	for j := range c.Beta {
		b.Beta = append(b.Beta, broadcastParam(c.Beta[j], dims))
		b.Lambda = append(b.Lambda, broadcastParam(c.Lambda[j], dims))
		b.OneMinusLambda = append(b.OneMinusLambda, broadcastParam(oneMinus(c.Lambda[j]), dims))
	}
	return b
}

// broadcastParam broadcasts p of the parameter shape P, a suffix of dims, to dims.
func broadcastParam(p *Node, dims []int) *Node {
	pd := p.Shape().Dimensions
	if len(pd) > len(dims) || !slices.Equal(pd, dims[len(dims)-len(pd):]) {
		panic(fmt.Errorf("neuron: coefficient of shape %s does not match the trailing axes of %v", p.Shape(), dims))
	}
	padded := append(slices.Repeat([]int{1}, len(dims)-len(pd)), pd...) // P behind axes of size 1
	return BroadcastToDims(Reshape(p, padded...), dims...)
}

// Locals are the values one step of Algorithm 1 computes before the spike: the new stage values
// Stages[m] = Vm[k+1] (Stages[0] = V0[k+1], Eqs. 6 and 9) and the mixed voltages Mixes[m] = Ṽm[k+1]
// (Mixes[0] = V0[k+1], Eq. 10), m = 0..M.
type Locals struct {
	Stages, Mixes []*Node
}

// Locals computes a step's Locals from the state s before it and its input current in (I[k]), all of one
// working shape, that of b.
func (c Coefficients) Locals(b Broadcast, s State, in *Node) Locals {
	v0 := Add(MulConst(s.V, c.MuBar), in)
	if b.EtaDt != nil {
		v0 = Sub(v0, Mul(b.EtaDt, s.A))
	}
	loc := Locals{Stages: []*Node{v0}, Mixes: []*Node{v0}}
	for j := 1; j <= len(b.Beta); j++ {
		loc.Stages = append(loc.Stages, Add(Mul(b.Beta[j-1], Sub(s.Stages[j], loc.Stages[j-1])), s.Stages[j-1]))
		loc.Mixes = append(loc.Mixes, Add(Mul(b.OneMinusLambda[j-1], loc.Mixes[j-1]), Mul(b.Lambda[j-1], loc.Stages[j])))
	}
	return loc
}

// Step is one step of Algorithm 1, the only graph form of it: from the state s before the step and the
// input current in (I[k]), all of the working shape of b, it returns the state after the step, the
// pre-reset mixed voltage ṼM[k+1] and the spike S[k+1] = Θ(ṼM[k+1] − Vth) ∈ {0, 1}.
//
// With surrogate the spike carries the surrogate gradient (Spike) and, with DetachReset, the reset
// S·Vth none, for autodiff through the step. Without it the spike is the plain Heaviside step and the
// step makes no cached scalar constant, so that it runs inside a While loop body too (see Heaviside);
// the values are the same.
func (c Coefficients) Step(b Broadcast, s State, in *Node, surrogate bool) (next State, mixed, spike *Node) {
	loc := c.Locals(b, s, in)
	next.A = s.A
	if b.EtaDt != nil {
		next.A = Add(MulConst(s.A, c.RhoBar), Mul(b.GammaDt, loc.Stages[0]))
	}
	if len(b.Beta) > 0 {
		next.Stages = loc.Stages
	}
	mixed = loc.Mixes[len(b.Beta)]
	if surrogate {
		spike = Spike(mixed, c.Vth, c.Surrogate, c.StrictSpike)
	} else {
		spike = Heaviside(SubConst(mixed, c.Vth), c.StrictSpike)
	}
	reset := MulConst(spike, c.Vth)
	if surrogate && c.DetachReset {
		reset = StopGradient(reset)
	}
	next.V = Sub(mixed, reset)
	return next, mixed, spike
}

// MulConst is MulScalar(x, v) with a constant that GoMLX's graph does not cache: a step and its adjoint
// run inside While loop bodies too (package fits/scan), and a cached scalar belongs to whichever function
// first asked for it (GoMLX v0.28.16 keeps one cache per graph, not per function), which a loop body cannot
// read. oneMinus is OneMinus(x) made the same way.
func MulConst(x *Node, v float64) *Node { return Mul(x, ConstAs(x, v)) }

// SubConst is SubScalar(x, v) with a constant that GoMLX does not cache (see MulConst).
func SubConst(x *Node, v float64) *Node { return Sub(x, ConstAs(x, v)) }

func oneMinus(x *Node) *Node { return Sub(ConstAs(x, 1), x) }

// FusionBarrierOne returns a scalar equal to 1 that the compiler cannot prove to be 1: 1 + 0·max|x|
// (floating-point 0·y is not folded, since it is NaN for infinite y), with no gradient.
//
// Dividing the state carried from one unrolled step to the next by it once per step is exact (y/1 = y)
// and keeps XLA from fusing the unrolled recurrence into one chain per output: XLA duplicates cheap
// elementwise producers into every consumer, so each step's output fusion would recompute all earlier
// steps, and compile time and run time would grow as T². A division counts as expensive and is never
// duplicated, so each step's state is computed once (measured compile times: docs/performance-notes.md).
// If x holds an infinite or NaN value, every output is NaN.
func FusionBarrierOne(x *Node) *Node {
	return StopGradient(OnePlus(MulScalar(ReduceAllMax(Abs(x)), 0)))
}
