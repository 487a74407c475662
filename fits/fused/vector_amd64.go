//go:build goexperiment.simd && amd64

package fused

import (
	"simd/archsimd"
	"unsafe"
)

// The vector code runs a group of neurons per instruction, 16 with AVX-512 (kernel16_amd64.go, generated
// from the 8-lane file) and 8 with AVX2 (kernel8_amd64.go; with AVX-512 for the neurons left after the
// groups of 16): the same operations as stepScalar and backwardScalar, in the same order, each an IEEE
// float32 operation (no fused multiply-add), so every ISA gives identical values. The per-step dropout mask
// is the same uint32 arithmetic as package dropmask's on a vector of counters.
//
// Time runs in the outer loop and the groups of a layer in the inner one (the backward pass in blocks of
// groups whose recomputed state fits histBudget): one group's step is a chain of dependent instructions,
// and the CPU overlaps the chains of the independent groups; each step reads and writes a contiguous row
// of the current and the spikes. Running one group over all T steps before the next is latency-bound and
// reads the [batch, T, N] arrays in strided columns (measured: docs/performance-notes.md). The exception is
// the assembly kernels of order-1 layers (forward16_amd64.go, adjoint16_amd64.go), which keep their state in
// registers and two groups' chains in flight: there one pair of groups over all T steps is faster.
//
// No legacy-SSE instruction: on Intel CPUs every legacy (non-VEX) SSE instruction that runs while the upper
// halves of the vector registers hold AVX data costs a transition of their state (AMD CPUs do not pay it),
// and one inside the time loop took the AVX2 kernel down to scalar speed. The Go compiler emits such
// instructions for a float broadcast of the constant 0 (XORPS), for zeroing or copying a struct or array of
// vectors in memory (MOVUPS through X15), for a shift by a constant count (MOVQ of the count) and for any
// scalar float operation. So the kernels broadcast their constants once per call, take 0 as the vector zero
// value, shift by vectors of counts, keep their vector arrays in the caller's buffer (vecWork) where they
// are set element by element, count spikes in an integer vector, and end with VZEROUPPER, so that the
// scalar Go code after them (the scalar neurons of a layer, the reductions, the runtime) runs with clean
// upper halves. TestNoLegacySSE disassembles every function of this package that holds vector code and
// fails on any legacy-SSE instruction in it.

var (
	hasAVX2   = archsimd.X86.AVX2()
	hasAVX512 = archsimd.X86.AVX512()
)

// maxLanes is the widest group of neurons a vector kernel runs.
const maxLanes = lanes16

// laneOffsets are the lane numbers, the per-step dropout counters' offsets within a group.
var laneOffsets = [maxLanes]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// supported reports whether this build and CPU run isa.
func supported(isa ISA) bool {
	switch isa {
	case Scalar:
		return true
	case AVX2:
		return hasAVX2
	case AVX512:
		return hasAVX512
	}
	return false
}

// backwardBlock returns how many groups of lanes neurons the backward kernels run together on a layer of n
// neurons, T = steps steps and vals values per step and neuron (the state components and the spike
// cotangent): all of the layer's groups, or as many as keep their values (T × vals × lanes a group) within
// histBudget; at least one.
func backwardBlock(n, steps, vals, lanes int) int {
	return max(1, min(n/lanes, histBudget/(4*steps*vals*lanes)))
}

// histSize is the size of a worker's buffer for the values the backward kernels keep per step (vals of
// them: the state components and the spike cotangent) on a layer of n neurons.
func histSize(n, steps, vals int) int {
	size := 2 * steps * adjointRowBytes / 4 // backwardM1x16's rows of two groups
	for _, lanes := range []int{lanes8, lanes16} {
		size = max(size, backwardBlock(n, steps, vals, lanes)*lanes*steps*vals)
	}
	return size
}

// alignedSlice returns n zero values of T (a type of vectors, without pointers) starting at an address that
// is a multiple of 64 bytes, as every vector within them is when T's size is a multiple of 64. A vector
// load or store that crosses a cache line costs two, and a store that does also stops the CPU from
// forwarding it to the next load of the same vector: with the kernels' constants and one step's temporaries
// at Go's default alignment (8 bytes), the backward kernel took about twice as long.
func alignedSlice[T any](n int) []T {
	var zero T
	size := unsafe.Sizeof(zero)
	buf := make([]byte, uintptr(n)*size+63)
	off := (64 - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64) % 64
	return unsafe.Slice((*T)(unsafe.Pointer(&buf[off])), n)
}

// vecWork is a worker's memory for the vector kernels.
type vecWork struct {
	w8  work8
	w16 work16
	// The order-1 assembly kernels' vectors (orderOneBlock) and arguments.
	adjoint16     *adjointBlock16
	adjointArgs16 *adjointArgs16
	forwardArgs16 *forwardArgs16
}

// forwardVector runs the vector groups of neurons of batch element b with isa (16 lanes, then 8 for the
// rest) and returns the first neuron it did not run and the number of spikes.
func (x *expanded) forwardVector(isa ISA, s Shape, b int, current []float32, drop *mask, out []float32, sel []uint64, w *vecWork) (int, int) {
	if isa == Scalar {
		return 0, 0
	}
	i, total := 0, 0
	if isa == AVX512 {
		if assemblyKernels {
			i, total = x.forwardM1x16(s, b, 0, current, drop, out, sel, w)
		}
		var count int
		i, count = x.forward16(s, b, i, current, drop, out, sel, &w.w16)
		total += count
	}
	i, count := x.forward8(s, b, i, current, drop, out, sel, &w.w8)
	archsimd.ClearAVXUpperBits()
	return i, total + count
}

// backwardVector runs the adjoint of the vector groups of neurons of batch element b with isa and returns
// the first neuron it did not run. hist holds at least histSize(N, T, components) values.
func (x *expanded) backwardVector(isa ISA, s Shape, b int, in *backwardIn, hist, acc []float32, w *vecWork) int {
	if isa == Scalar {
		return 0
	}
	i := 0
	if isa == AVX512 {
		if assemblyKernels {
			i = x.backwardM1x16(s, b, 0, in, hist, acc, w)
		}
		i = x.backward16(s, b, i, in, hist, acc, &w.w16)
	}
	i = x.backward8(s, b, i, in, hist, acc, &w.w8)
	archsimd.ClearAVXUpperBits()
	return i
}
