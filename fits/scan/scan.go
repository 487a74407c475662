// Package scan runs Algorithm 1 (Appendix A.5) over a chunk of K time steps with a hand-derived adjoint:
// Forward builds the K steps of the forward recurrence, Backward the K steps of its vector-Jacobian
// product in reverse, both as GoMLX graph code that needs no autodiff through the time loop;
// ForwardLoop and BackwardLoop build the same as XLA While loops. It is the graph analogue of the paper's
// fused kernel: the backward pass is written out, not traced.
//
// Both work on the per-step constants of package neuron (neuron.Coefficients), so every neuron kind is
// covered by one code path; VariableGrads turns the coefficient cotangents into the gradients of a kind's
// own variables. Shapes: the input current and the spikes are [batch, K, d1, …, dn], each state tensor
// [batch, d1, …, dn], coefficients the parameter shape ([d1, …, dn], or [dn] when shared per channel).
// Package fits/step's chunked, scan and loop engines call it.
//
// The adjoint and the graph's layout are derived in docs/algorithm.md; measured times are in
// docs/performance.md.
package scan

import (
	"fmt"
	"slices"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/support/xslices"
)

// CoefficientGrads are the cotangents of the coefficients that neuron.Coefficients holds as graph nodes,
// each of the parameter shape P, summed over batch and time; a field is nil where the coefficient is
// absent (EtaDt and GammaDt for LIF, Beta and Lambda when M = 0). Beta[m−1] and Lambda[m−1] belong to
// stage m.
type CoefficientGrads struct {
	EtaDt, GammaDt *Node
	Beta, Lambda   []*Node
}

// reduceToParam sums x [lead…, P…] over its leading axes, to the parameter shape of p.
func reduceToParam(x, p *Node) *Node {
	return ReduceSum(x, xslices.Iota(0, x.Rank()-p.Rank())...)
}

// barrier packs nodes (all of one shape [batch, d…]) into one tensor [len(nodes), batch, d…], divides
// it by one (see neuron.FusionBarrierOne) and returns it and its parts.
func barrier(nodes []*Node, one *Node) (packed *Node, parts []*Node) {
	packed = Div(Stack(nodes, 0), one)
	return packed, unpackAxis(packed, 0)
}

// unpackAxis returns the slices of x along axis, each with that axis removed.
func unpackAxis(x *Node, axis int) []*Node {
	out := make([]*Node, x.Shape().Dimensions[axis])
	for i := range out {
		out[i] = Squeeze(SliceAxis(x, axis, AxisElem(i)), axis)
	}
	return out
}

// swapBatchTime swaps the first two axes: [batch, K, d…] <-> [K, batch, d…].
func swapBatchTime(x *Node) *Node {
	return Transpose(x, 0, 1)
}

func checkInputs(where string, l neuron.StateLayout, current *Node, st []*Node) (stepDims []int) {
	if current.Rank() < 3 {
		panic(fmt.Errorf("scan.%s: current must be [batch, K, d1, …, dn], got %s", where, current.Shape()))
	}
	if !current.DType().IsFloat() {
		panic(fmt.Errorf("scan.%s: current must be a float tensor, got %s", where, current.DType()))
	}
	dims := current.Shape().Dimensions
	stepDims = append([]int{dims[0]}, dims[2:]...)
	if st != nil {
		if len(st) != l.Components() {
			panic(fmt.Errorf("scan.%s: %d state tensors, want %d", where, len(st), l.Components()))
		}
		for i, s := range st {
			if s != nil && !slices.Equal(s.Shape().Dimensions, stepDims) {
				panic(fmt.Errorf("scan.%s: state tensor %d has shape %s, want dimensions %v", where, i, s.Shape(), stepDims))
			}
		}
	}
	return stepDims
}

// orZeros returns nodes with nil entries (or a nil slice) replaced by zeros of shape.
func orZeros(nodes []*Node, n int, g *Graph, shape shapes.Shape) []*Node {
	out := make([]*Node, n)
	for i := range out {
		if i < len(nodes) && nodes[i] != nil {
			out[i] = nodes[i]
		} else {
			out[i] = Zeros(g, shape)
		}
	}
	return out
}

// Forward runs the K steps of Algorithm 1 over current [batch, K, d1, …, dn] from state (in
// neuron.LayerFrom's order, each [batch, d1, …, dn]; nil means zero) with the coefficients c, and returns
// the spikes S[k+1] [batch, K, d1, …, dn] (exactly 0 or 1; current[:, k] is I[k]), the state after the
// last step, and saved, what Backward needs: one tensor [K, components + 1, batch, d1, …, dn] holding,
// per step, the state after it (in neuron.LayerFrom's order) and its spike.
//
// It computes the same values as neuron.LayerFrom with the same coefficients. The outputs carry no
// gradient of their own (the spike is a plain Heaviside step): differentiate with Backward.
func Forward(c neuron.Coefficients, current *Node, st []*Node) (spikes *Node, final []*Node, saved []*Node) {
	return forward(c, current, st, false)
}

func forward(c neuron.Coefficients, current *Node, st []*Node, loop bool) (spikes *Node, final []*Node, saved []*Node) {
	l := c.Layout()
	stepDims := checkInputs("Forward", l, current, st)
	g := current.Graph()
	n := l.Components()
	s := l.Unpack(orZeros(st, n, g, shapes.Make(current.DType(), stepDims...)))
	if loop {
		return forwardLoop(c, l, s, current)
	}
	co := c.Broadcast(stepDims)
	one := neuron.FusionBarrierOne(current)
	k := current.Shape().Dimensions[1]
	packs := make([]*Node, k)    // [components + 1, batch, d…] per step
	spikeSeq := make([]*Node, k) // [batch, d…] per step
	for t := range k {
		next, _, spike := c.Step(co, s, Squeeze(SliceAxis(current, 1, AxisElem(t)), 1), false)
		var parts []*Node
		packs[t], parts = barrier(append(l.Pack(next), spike), one)
		s = l.Unpack(parts[:n])
		spikeSeq[t] = parts[n]
	}
	// The spikes are stacked on their own, so that a caller that drops saved (XLA removes what no output
	// uses) pays for no more than neuron.LayerFrom does.
	return Stack(spikeSeq, 1), l.Pack(s), []*Node{Stack(packs, 0)}
}

// Backward returns the vector-Jacobian product of Forward over one chunk: given the cotangents cotSpikes
// of the spikes ([batch, K, d1, …, dn]) and cotFinal of the final state (in neuron.LayerFrom's order; nil,
// or nil entries, mean zero), it returns the cotangents of the starting state state0 (same order; nil
// means zero, as for Forward), of current ([batch, K, d1, …, dn]) and of the coefficients (shape P,
// summed over batch and steps).
//
// The derivative of the spike is the triangular surrogate c.Surrogate at ṼM − Vth; the reset
// V = ṼM − S·Vth passes the gradient through S unless c.DetachReset (see the package documentation for
// the equations). saved is Forward's third result for the same inputs; nil recomputes it (one more
// forward pass, less memory kept between the two calls).
func Backward(c neuron.Coefficients, current *Node, state0 []*Node, saved []*Node, cotSpikes *Node, cotFinal []*Node) (
	cotState0 []*Node, cotCurrent *Node, cot CoefficientGrads) {
	return backward(c, current, state0, saved, cotSpikes, cotFinal, false)
}

func backward(c neuron.Coefficients, current *Node, state0 []*Node, saved []*Node, cotSpikes *Node, cotFinal []*Node, loop bool) (
	cotState0 []*Node, cotCurrent *Node, cot CoefficientGrads) {
	l := c.Layout()
	stepDims := checkInputs("Backward", l, current, state0)
	if cotFinal != nil {
		checkInputs("Backward", l, current, cotFinal)
	}
	if !slices.Equal(cotSpikes.Shape().Dimensions, current.Shape().Dimensions) {
		panic(fmt.Errorf("scan.Backward: cotSpikes has shape %s, want that of current %s", cotSpikes.Shape(), current.Shape()))
	}
	if saved == nil {
		_, _, saved = forward(c, current, state0, loop)
	}
	g := current.Graph()
	n := l.Components()
	k := current.Shape().Dimensions[1]
	stepShape := shapes.Make(current.DType(), stepDims...)
	wantSaved := append([]int{k, n + 1}, stepDims...)
	if len(saved) != 1 || !slices.Equal(saved[0].Shape().Dimensions, wantSaved) {
		panic(fmt.Errorf("scan.Backward: saved must be Forward's, one tensor of dimensions %v", wantSaved))
	}

	start := Stack(orZeros(state0, n, g, stepShape), 0) // [components, batch, d…]
	cotEnd := orZeros(cotFinal, n, g, stepShape)

	// Every step's local values at once, time-major [K, batch, d…], from the state before each step: the
	// starting state, then the state after each step but the last.
	preAll := ExpandAxes(start, 0)
	if k > 1 {
		preAll = Concatenate([]*Node{preAll, Slice(saved[0], AxisRange(0, k-1), AxisRange(0, n))}, 0)
	}
	pre := l.Unpack(unpackAxis(preAll, 1))
	seqDims := append([]int{k}, stepDims...)
	cur, cotS := swapBatchTime(current), swapBatchTime(cotSpikes)
	cs := c.Broadcast(seqDims)
	loc := c.Locals(cs, pre, cur)
	surr := neuron.SurrogateDerivative(neuron.SubConst(loc.Mixes[len(c.Beta)], c.Vth), c.Surrogate.Width, c.Surrogate.Scale)

	// The cotangent of the state through the K steps in reverse: postAll[t] holds the cotangent of the
	// state after step t, [K, components, batch, d…].
	var postAll *Node
	var adj []*Node
	if loop {
		postAll, adj = reverseLoop(c, l, surr, cotS, Stack(cotEnd, 0))
	} else {
		co := c.Broadcast(stepDims)
		postAll, adj = reverseUnrolled(c, co, l, surr, cotS, cotEnd, neuron.FusionBarrierOne(current))
	}

	// Every step's local cotangents at once, [K, batch, d…], and the coefficient cotangents.
	post := l.Unpack(unpackAxis(postAll, 1))
	_, uBar, v0Bar, nBar := adjointStep(c, cs, l, post, surr, cotS)
	return adj, swapBatchTime(v0Bar), coefficientCotangents(c, cs, l, pre, post, loc, uBar, v0Bar, nBar)
}

// coefficientCotangents returns the coefficient cotangents of the steps, summed to the parameter shape:
// ē = −Σ a·V̄0, ḡ = Σ V0·ā′, β̄m = Σ (Vm − n(m−1))·n̄m, λ̄m = Σ (nm − Ṽ(m−1))·m̄m, from the states before
// (pre) and the cotangents after (post) the steps, their local values and adjointStep's ū, V̄0 and n̄m.
func coefficientCotangents(c neuron.Coefficients, co neuron.Broadcast, l neuron.StateLayout, pre, post neuron.State, loc neuron.Locals, uBar, v0Bar *Node, nBar []*Node) (cot CoefficientGrads) {
	m := len(co.Beta)
	if l.Adaptation {
		cot.EtaDt = Neg(reduceToParam(Mul(pre.A, v0Bar), c.EtaDt))
		cot.GammaDt = reduceToParam(Mul(loc.Stages[0], post.A), c.GammaDt)
	}
	if m > 0 {
		cot.Beta = make([]*Node, m)
		cot.Lambda = make([]*Node, m)
		mBar := uBar // m̄M
		for j := m; j >= 1; j-- {
			cot.Beta[j-1] = reduceToParam(Mul(Sub(pre.Stages[j], loc.Stages[j-1]), nBar[j]), c.Beta[j-1])
			cot.Lambda[j-1] = reduceToParam(Mul(Sub(loc.Stages[j], loc.Mixes[j-1]), mBar), c.Lambda[j-1])
			mBar = Mul(co.OneMinusLambda[j-1], mBar)
		}
	}
	return cot
}

// reverseUnrolled runs the cotangent of the state through the K steps in reverse, unrolled, from adj (the
// cotangent of the state after the last step, one tensor per component) given every step's surrogate
// derivative surr and spike cotangent cotS ([K, batch, d…]). It returns the cotangent of the state after
// each step, [K, components, batch, d…], and that of the state before the first step.
func reverseUnrolled(c neuron.Coefficients, co neuron.Broadcast, l neuron.StateLayout, surr, cotS *Node, adj []*Node, one *Node) (postAll *Node, before []*Node) {
	k := surr.Shape().Dimensions[0]
	surrSteps, cotSteps := unpackAxis(surr, 0), unpackAxis(cotS, 0)
	packs := make([]*Node, k)
	packs[k-1] = Stack(adj, 0)
	for t := k - 1; t >= 0; t-- {
		prev, _, _, _ := adjointStep(c, co, l, l.Unpack(adj), surrSteps[t], cotSteps[t])
		var packed *Node
		packed, adj = barrier(l.Pack(prev), one)
		if t > 0 {
			packs[t-1] = packed
		}
	}
	return Stack(packs, 0), adj
}

// adjointStep is the reverse of one step (see the package documentation) in either working shape: from
// the cotangent of the state after the step, the surrogate derivative σ′ at ṼM − Vth and the cotangent of
// the step's spike, it returns the cotangent of the state before the step and the step's ū, V̄0 (= Ī) and
// n̄m (nBar[m], m = 1..M; nBar[0] is unused).
func adjointStep(c neuron.Coefficients, co neuron.Broadcast, l neuron.StateLayout, after neuron.State, surr, spikeBar *Node) (
	before neuron.State, uBar, v0Bar *Node, nBar []*Node) {
	m := len(co.Beta)
	if !c.DetachReset {
		spikeBar = Sub(spikeBar, neuron.MulConst(after.V, c.Vth))
	}
	uBar = Add(after.V, Mul(surr, spikeBar))
	v0Bar = uBar
	if m > 0 {
		nBar = make([]*Node, m+1)
		mBar := uBar // m̄m, from m = M down
		for j := m; j >= 1; j-- {
			nBar[j] = Add(after.Stages[j], Mul(co.Lambda[j-1], mBar))
			if j < m {
				nBar[j] = Sub(nBar[j], Mul(co.Beta[j], nBar[j+1]))
			}
			mBar = Mul(co.OneMinusLambda[j-1], mBar)
		}
		v0Bar = Sub(Add(mBar, after.Stages[0]), Mul(co.Beta[0], nBar[1]))
		before.Stages = make([]*Node, m+1)
		before.Stages[0] = nBar[1]
		for j := 1; j <= m; j++ {
			before.Stages[j] = Mul(co.Beta[j-1], nBar[j])
			if j < m {
				before.Stages[j] = Add(before.Stages[j], nBar[j+1])
			}
		}
	}
	if l.Adaptation {
		v0Bar = Add(v0Bar, Mul(co.GammaDt, after.A))
		before.A = Sub(neuron.MulConst(after.A, c.RhoBar), Mul(co.EtaDt, v0Bar))
	}
	before.V = neuron.MulConst(v0Bar, c.MuBar)
	return before, uBar, v0Bar, nBar
}

// VariableGrads returns the cotangents of vars given the coefficient cotangents grads from Backward: the
// gradient of Σ⟨coefficient, cotangent⟩ (over the coefficients present in both c and grads) with respect
// to vars, where c was computed from vars in the same graph (e.g. η = √(κr)Δt from Ω*, β = tanh(β̂)). The
// cotangents are held constant (StopGradient), so only the map vars → c is differentiated; it has no
// time axis and is cheap. A variable c does not depend on gets zeros.
func VariableGrads(c neuron.Coefficients, grads CoefficientGrads, vars ...*Node) []*Node {
	if len(vars) == 0 {
		return nil
	}
	var obj *Node
	term := func(coef, cot *Node) {
		if coef == nil || cot == nil {
			return
		}
		t := ReduceAllSum(Mul(coef, StopGradient(cot)))
		if obj == nil {
			obj = t
		} else {
			obj = Add(obj, t)
		}
	}
	term(c.EtaDt, grads.EtaDt)
	term(c.GammaDt, grads.GammaDt)
	for j := range min(len(c.Beta), len(grads.Beta)) {
		term(c.Beta[j], grads.Beta[j])
	}
	for j := range min(len(c.Lambda), len(grads.Lambda)) {
		term(c.Lambda[j], grads.Lambda[j])
	}
	if obj == nil {
		return xslices.Map(vars, ZerosLike)
	}
	return Gradient(obj, vars...)
}
