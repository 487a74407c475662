//go:build goexperiment.simd && amd64

package events

import (
	"math/bits"
	"simd/archsimd"
)

var (
	hasAVX2   = archsimd.X86.AVX2()
	hasAVX512 = archsimd.X86.AVX512()
)

// lanePositions are the positions 0-15 of a vector of 16 within its row; laneStride is 16 in every lane.
var (
	lanePositions = []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	laneStride    = []int32{16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16}
)

// Vector reports whether this build runs axpy with AVX2 (built with GOEXPERIMENT=simd on amd64).
func Vector() bool { return hasAVX2 }

// axpy adds a·x to y (len(y) ≥ len(x)), with AVX2 where the CPU has it.
func axpy(a float32, x, y []float32) {
	if hasAVX2 {
		axpyAVX2(a, x, y)
		return
	}
	axpyScalar(a, x, y, 0)
}

// countNonzero returns how many entries of x are not zero (NaN counts), with AVX2 where the CPU has it.
func countNonzero(x []float32) int {
	if !hasAVX2 {
		return countNonzeroScalar(x)
	}
	lanes := make([]int32, 8)
	n := 0
	for len(x) > 0 {
		part := x[:min(len(x), 1<<30)] // a lane counts at most 2^27 entries of it: no int32 overflow
		x = x[len(part):]
		countNonzeroAVX2(part, lanes)
		for _, c := range lanes {
			n += int(c)
		}
	}
	return n
}

// countNonzeroAVX2 stores in lanes[k] how many of the entries k, k + 8, k + 16, ... of x are not zero (or
// NaN): a lane's compare with zero (the unordered predicate) is all ones, −1 as an integer, where the entry is
// not zero, and is subtracted from the lane's counter; the last len(x) mod 8 entries are loaded with zeros
// after them. Same vector-code rules as axpyAVX2 (no legacy SSE: the zero is the vector zero value, not a
// broadcast; VZEROUPPER at the end; never inlined).
//
//go:noinline
func countNonzeroAVX2(x []float32, lanes []int32) {
	var zero archsimd.Float32x8
	var acc archsimd.Int32x8
	i := 0
	for ; i+8 <= len(x); i += 8 {
		acc = acc.Sub(archsimd.LoadFloat32x8(x[i : i+8]).NotEqual(zero).ToInt32x8())
	}
	if i < len(x) {
		acc = acc.Sub(loadPart8(x[i:]).NotEqual(zero).ToInt32x8())
	}
	acc.Store(lanes[:8])
	archsimd.ClearAVXUpperBits()
}

// axpyAVX2 adds a·x to y (len(y) ≥ len(x)), 8 entries per instruction, the last len(x) mod 8 with masked
// loads and stores: the same float32 operations as axpyScalar, so the same values.
//
// It holds no legacy-SSE instruction (TestNoLegacySSE), ends with VZEROUPPER and is never inlined: the scalar
// float code of its callers, which runs between calls, then runs with clean upper halves of the vector
// registers. On Intel CPUs a legacy-SSE instruction between AVX ones, or after them with dirty upper halves,
// costs a state transition.
//
//go:noinline
func axpyAVX2(a float32, x, y []float32) {
	n := len(x)
	y = y[:n]
	av := archsimd.BroadcastFloat32x8(a)
	i := 0
	for ; i+8 <= n; i += 8 {
		yv := archsimd.LoadFloat32x8(y[i : i+8])
		yv.Add(av.Mul(archsimd.LoadFloat32x8(x[i : i+8]))).Store(y[i : i+8])
	}
	if i < n {
		yv, _ := archsimd.LoadFloat32x8Part(y[i:])
		xv, _ := archsimd.LoadFloat32x8Part(x[i:])
		yv.Add(av.Mul(xv)).StorePart(y[i:])
	}
	archsimd.ClearAVXUpperBits()
}

// compact stores the positions and values of the nonzero entries of x in e, in increasing position, and
// returns how many there are: 16 entries per instruction with AVX-512's compress where the CPU has it.
func compact(x []float32, e *rowEvents) int {
	if hasAVX512 {
		return compactAVX512(x, e.idx, e.vals)
	}
	return compactScalar(x, e)
}

// compactAVX512 is compact for 16 entries at a time: the lanes that are not zero (NaN counts) are packed
// to the front (VCOMPRESSPS, VPCOMPRESSD) and stored whole at the end of what is stored so far, the next
// store overwriting what lies past it; the last len(x) mod 16 entries are loaded with zeros after them.
// idx and vals hold at least len(x) + 16 entries. Same vector-code rules as axpyAVX2.
//
//go:noinline
func compactAVX512(x []float32, idx []int32, vals []float32) int {
	var zero archsimd.Float32x16
	pos := archsimd.LoadInt32x16(lanePositions)
	stride := archsimd.LoadInt32x16(laneStride)
	n, i := 0, 0
	for ; i+16 <= len(x); i += 16 {
		v := archsimd.LoadFloat32x16(x[i : i+16])
		m := v.NotEqual(zero)
		v.Compress(m).Store(vals[n : n+16])
		pos.Compress(m).Store(idx[n : n+16])
		n += bits.OnesCount16(m.ToBits())
		pos = pos.Add(stride)
	}
	if i < len(x) {
		v := loadPart16(x[i:])
		m := v.NotEqual(zero)
		v.Compress(m).Store(vals[n : n+16])
		pos.Compress(m).Store(idx[n : n+16])
		n += bits.OnesCount16(m.ToBits())
	}
	archsimd.ClearAVXUpperBits()
	return n
}

// forwardRow is forwardRowScalar with AVX-512 or AVX2 where the CPU has it.
func forwardRow(idx []int32, vals, w, b, y []float32) {
	if hasAVX512 {
		forwardRow16(idx, vals, w, b, y)
		return
	}
	if hasAVX2 {
		forwardRow8(idx, vals, w, b, y)
		return
	}
	forwardRowScalar(idx, vals, w, b, y)
}

// gradRow is gradRowScalar with AVX-512 or AVX2 where the CPU has it.
func gradRow(idx []int32, vals, c, g []float32) {
	if hasAVX512 {
		gradRow16(idx, vals, c, g)
		return
	}
	if hasAVX2 {
		gradRow8(idx, vals, c, g)
		return
	}
	gradRowScalar(idx, vals, c, g)
}

// rowKernelSet is one instruction set's row kernels, for the tests that hold each to the scalar code.
type rowKernelSet struct {
	name    string
	forward func(idx []int32, vals, w, b, y []float32)
	grad    func(idx []int32, vals, c, g []float32)
}

// rowKernelSets returns the row kernels this build and CPU can run.
func rowKernelSets() []rowKernelSet {
	sets := []rowKernelSet{{"scalar", forwardRowScalar, gradRowScalar}}
	if hasAVX2 {
		sets = append(sets, rowKernelSet{"avx2", forwardRow8, gradRow8})
	}
	if hasAVX512 {
		sets = append(sets, rowKernelSet{"avx512", forwardRow16, gradRow16})
	}
	return sets
}
