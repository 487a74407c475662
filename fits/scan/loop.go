package scan

import (
	"fmt"
	"slices"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
)

// ForwardLoop is Forward with the K steps run by one XLA While loop instead of unrolled: the same values
// (the same operations in the same order), with a graph whose size and compile time do not depend on K.
// The loop's trip count is static (an int32 counter from 0, compared with the constant K; XLA records it
// as known, TestLoopTripCountKnown), so XLA runs it without asking the host whether to go on after each
// iteration. saved is written in place, step by step ([K, components + 1, batch, d1, …, dn], as Forward's).
//
// The backend must run While loops and dynamic slices (XLA does; SimpleGo does not).
func ForwardLoop(c neuron.Coefficients, current *Node, st []*Node) (spikes *Node, final []*Node, saved []*Node) {
	return forward(c, current, st, true)
}

// BackwardLoop is Backward with the reverse recurrence of the state's cotangent run by one XLA While
// loop: every step's local values and the coefficient cotangents are the same whole-chunk products as in
// Backward, and only the K reverse steps are a loop. saved is ForwardLoop's (or Forward's, the same
// values); nil recomputes it with ForwardLoop.
func BackwardLoop(c neuron.Coefficients, current *Node, state0 []*Node, saved []*Node, cotSpikes *Node, cotFinal []*Node) (
	cotState0 []*Node, cotCurrent *Node, cot CoefficientGrads) {
	return backward(c, current, state0, saved, cotSpikes, cotFinal, true)
}

// counted builds a While loop of exactly k iterations. The body receives the iteration index i (an int32
// scalar, 0 … k−1), the loop-invariant values inv and the carried values, and returns the new carried
// values. A loop body cannot read the enclosing graph's nodes, so inv are passed through the loop
// unchanged (XLA aliases them, nothing is copied). The counter starts at the constant 0 and is compared
// with the constant k, the form from which XLA infers the trip count.
func counted(g *Graph, k int, inv, init []*Node, body func(i *Node, inv, carried []*Node) []*Node) []*Node {
	all := append(append([]*Node{Const(g, int32(0))}, inv...), init...)
	params := func(g *Graph) (*Node, []*Node, []*Node) {
		ps := make([]*Node, len(all))
		for j, x := range all {
			ps[j] = Parameter(g, fmt.Sprintf("loop%d", j), x.Shape())
		}
		return ps[0], ps[1 : 1+len(inv)], ps[1+len(inv):]
	}
	cond := NewClosure(g, func(g *Graph) []*Node {
		i, _, _ := params(g)
		return []*Node{LessThan(i, Const(g, int32(k)))}
	})
	loop := NewClosure(g, func(g *Graph) []*Node {
		i, inv, carried := params(g)
		next := body(i, inv, carried)
		if len(next) != len(carried) {
			panic(fmt.Errorf("scan: loop body returned %d values, want %d", len(next), len(carried)))
		}
		return append(append([]*Node{Add(i, Const(g, int32(1)))}, inv...), next...)
	})
	out := While(cond, loop, all...)
	return out[1+len(inv):]
}

// coefficientNodes returns the graph nodes of c in a fixed order (EtaDt, GammaDt when adapting, then each
// stage's β and λ), and withCoefficientNodes puts such a list back into a copy of c: the loop body
// receives the coefficients as its own parameters.
func coefficientNodes(c neuron.Coefficients, l neuron.StateLayout) []*Node {
	var out []*Node
	if l.Adaptation {
		out = append(out, c.EtaDt, c.GammaDt)
	}
	for j := range c.Beta {
		out = append(out, c.Beta[j], c.Lambda[j])
	}
	return out
}

func withCoefficientNodes(c neuron.Coefficients, l neuron.StateLayout, nodes []*Node) neuron.Coefficients {
	if l.Adaptation {
		c.EtaDt, c.GammaDt, nodes = nodes[0], nodes[1], nodes[2:]
	}
	m := len(c.Beta)
	c.Beta, c.Lambda = make([]*Node, m), make([]*Node, m)
	for j := range m {
		c.Beta[j], c.Lambda[j] = nodes[2*j], nodes[2*j+1]
	}
	return c
}

// atStep returns x[t] of x [K, rest…] with the leading axis removed, for an int32 scalar t.
func atStep(x, t *Node) *Node {
	dims := x.Shape().Clone().Dimensions
	dims[0] = 1
	return Squeeze(DynamicSlice(x, stepStart(x, t), dims), 0)
}

// putStep returns buf [K, rest…] with buf[t] replaced by x [rest…], for an int32 scalar t.
func putStep(buf, x, t *Node) *Node {
	return DynamicUpdateSlice(buf, ExpandAxes(x, 0), stepStart(buf, t))
}

// stepStart returns the start indices (t, 0, …, 0) of step t in x [K, rest…].
func stepStart(x, t *Node) []*Node {
	return append([]*Node{t}, slices.Repeat([]*Node{Const(x.Graph(), int32(0))}, x.Rank()-1)...)
}

// forwardLoop is the loop form of forward: the state s, packed into one [components, batch, d…] tensor,
// and the saved steps [K, components + 1, batch, d…] are the loop's carried values; the current, time-major,
// and the coefficients are its invariants.
func forwardLoop(c neuron.Coefficients, l neuron.StateLayout, s neuron.State, current *Node) (spikes *Node, final []*Node, saved []*Node) {
	g := current.Graph()
	n := l.Components()
	k := current.Shape().Dimensions[1]
	packed := Stack(l.Pack(s), 0)
	stepDims := packed.Shape().Dimensions[1:]
	savedDims := append([]int{k, n + 1}, stepDims...)
	inv := append([]*Node{swapBatchTime(current)}, coefficientNodes(c, l)...) // [K, batch, d…]: one step is a contiguous slice
	init := []*Node{packed, Zeros(g, shapes.Make(current.DType(), savedDims...))}
	out := counted(g, k, inv, init, func(t *Node, inv, carried []*Node) []*Node {
		cc := withCoefficientNodes(c, l, inv[1:])
		co := cc.Broadcast(stepDims)
		next, _, spike := cc.Step(co, l.Unpack(unpackAxis(carried[0], 0)), atStep(inv[0], t), false)
		pack := Stack(append(l.Pack(next), spike), 0)
		return []*Node{Slice(pack, AxisRange(0, n)), putStep(carried[1], pack, t)}
	})
	all := out[1]
	spikes = swapBatchTime(Squeeze(Slice(all, AxisRange(), AxisElem(n)), 1))
	return spikes, unpackAxis(out[0], 0), []*Node{all}
}

// reverseLoop is the loop form of reverseUnrolled, with adj packed into one [components, batch, d…]
// tensor: iteration i handles step K−1−i.
func reverseLoop(c neuron.Coefficients, l neuron.StateLayout, surr, cotS, adj *Node) (postAll *Node, before []*Node) {
	g := surr.Graph()
	k := surr.Shape().Dimensions[0]
	stepDims := adj.Shape().Dimensions[1:]
	inv := append([]*Node{surr, cotS}, coefficientNodes(c, l)...)
	init := []*Node{adj, Zeros(g, shapes.Make(adj.DType(), append([]int{k}, adj.Shape().Dimensions...)...))}
	out := counted(g, k, inv, init, func(i *Node, inv, carried []*Node) []*Node {
		t := Sub(Const(i.Graph(), int32(k-1)), i)
		cc := withCoefficientNodes(c, l, inv[2:])
		co := cc.Broadcast(stepDims)
		after := carried[0]
		prev, _, _, _ := adjointStep(cc, co, l, l.Unpack(unpackAxis(after, 0)), atStep(inv[0], t), atStep(inv[1], t))
		return []*Node{Stack(l.Pack(prev), 0), putStep(carried[1], after, t)}
	})
	return out[1], unpackAxis(out[0], 0)
}
