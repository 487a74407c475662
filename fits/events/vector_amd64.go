//go:build goexperiment.simd && amd64

package events

import "simd/archsimd"

var hasAVX2 = archsimd.X86.AVX2()

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
		acc = acc.Sub(archsimd.LoadFloat32x8Slice(x[i : i+8]).NotEqual(zero).ToInt32x8())
	}
	if i < len(x) {
		acc = acc.Sub(archsimd.LoadFloat32x8SlicePart(x[i:]).NotEqual(zero).ToInt32x8())
	}
	acc.StoreSlice(lanes[:8])
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
		yv := archsimd.LoadFloat32x8Slice(y[i : i+8])
		yv.Add(av.Mul(archsimd.LoadFloat32x8Slice(x[i : i+8]))).StoreSlice(y[i : i+8])
	}
	if i < n {
		yv := archsimd.LoadFloat32x8SlicePart(y[i:])
		yv.Add(av.Mul(archsimd.LoadFloat32x8SlicePart(x[i:]))).StoreSlicePart(y[i:])
	}
	archsimd.ClearAVXUpperBits()
}
