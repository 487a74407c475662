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
