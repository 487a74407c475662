package neuron

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
)

// unstack splits x along axis into its x.Shape().Dimensions[axis] slices, each with that axis removed,
// with a gradient that does not use GoMLX's Slice gradient.
//
// Why: the gradient of Slice is Pad, which the SimpleGo backend lacks, and with one Slice per time step
// the backward pass would add T zero-padded copies of the full [batch, time, …] tensor. Here the
// backward pass instead concatenates the T per-slice adjoints once, which runs on every backend and costs
// O(size of x).
//
// How: the slices are taken from anchor = IdentityWithCustomGradient(x). Each slice is wrapped in its own
// IdentityWithCustomGradient whose gradient function records the slice's adjoint and returns nil, so no
// gradient reaches the Slice nodes. GoMLX's reverse pass visits nodes in decreasing creation order, so all
// slice adjoints are recorded before anchor is visited; anchor's gradient function then returns their
// concatenation. anchor receives an adjoint at all only through a consumer on a path to the output: link,
// a scalar that is always 0 (Where with a constant true condition) but depends on one element of anchor
// (Gather, whose gradient is a ScatterSum that anchor ignores and the compiler discards). link is added
// to every slice, so that anchor receives an adjoint whenever any slice does (XLA folds the additions of
// zero away).
func unstack(x *Node, axis int) []*Node {
	g := x.Graph()
	axis = MustAdjustAxis(axis, x)
	n := x.Shape().Dimensions[axis]
	adjoints := make([]*Node, n)
	partShape := x.Shape().Clone()
	partShape.Dimensions[axis] = 1

	anchor := IdentityWithCustomGradient(x, func(_, _ *Node) *Node {
		// The adjoint arriving at anchor comes only from link and is zero; the real one is the
		// concatenation of the slices' adjoints.
		parts := make([]*Node, n)
		for i, adj := range adjoints {
			if adj == nil {
				parts[i] = Zeros(g, partShape)
			} else {
				parts[i] = ExpandAxes(adj, axis)
			}
		}
		clear(adjoints) // ready for another Gradient call on the same graph
		return Concatenate(parts, axis)
	})
	out := make([]*Node, n)
	for i := range n {
		part := Squeeze(SliceAxis(anchor, axis, AxisElem(i)), axis)
		out[i] = IdentityWithCustomGradient(part, func(_, v *Node) *Node {
			adjoints[i] = v
			return nil
		})
	}
	if n == 0 {
		return out
	}
	flat := Reshape(anchor, x.Shape().Size())
	elem := Gather(flat, Const(g, []int32{0}))
	link := Where(Const(g, true), ScalarZero(g, x.DType()), elem)
	for i := range out {
		out[i] = Add(out[i], link)
	}
	return out
}
