package dropmask

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
)

// MaskGraph returns the mask of key (a uint32 scalar node) and drop probability p with dimensions dims
// (row-major: element i as in Fill with first = 0), float32, drawn by the graph: the same values as Fill,
// with the same uint32 arithmetic (integer operations are exact on every backend), so a graph engine draws
// its per-step masks on the device from one scalar instead of receiving them from the host. For the mask of
// block i of a training step, key is StepMasks' Key(i) and dims are [batch, steps, OutDims...].
//
// It panics (graph-building code) when p is not a valid probability or the mask has 2³² elements or more.
func MaskGraph(key *Node, p float64, dims ...int) *Node {
	if err := Check(p); err != nil {
		panic(err)
	}
	if !key.Shape().Equal(shapes.Scalar[uint32]()) {
		panic(fmt.Errorf("dropmask: the key must be a uint32 scalar, got %s", key.Shape()))
	}
	n := 1.0
	for _, d := range dims {
		n *= float64(d)
	}
	if n > math.MaxUint32 { // as Mask: every element's counter fits in a uint32
		panic(fmt.Errorf("dropmask: mask %v has more than 2^32 - 1 elements", dims))
	}
	g := key.Graph()
	u := func(v uint32) *Node { return Const(g, v) }
	fmix := func(h *Node) *Node {
		h = BitwiseXor(h, BitwiseShiftRightLogical(h, u(16)))
		h = Mul(h, u(FmixMul1))
		h = BitwiseXor(h, BitwiseShiftRightLogical(h, u(13)))
		h = Mul(h, u(FmixMul2))
		return BitwiseXor(h, BitwiseShiftRightLogical(h, u(16)))
	}
	flat := Iota(g, shapes.Make(dtypes.Uint32, int(n)), 0)
	bits := fmix(BitwiseXor(fmix(Add(flat, key)), key)) // Bits(key, i)
	keep := GreaterOrEqual(bits, u(Threshold(p)))
	mask := Where(keep, Const(g, Scale(p)), Const(g, float32(0)))
	return Reshape(mask, dims...)
}
