//go:build goexperiment.simd && amd64

package events

import "simd/archsimd"

var hasAVX2 = archsimd.X86.AVX2()

// Vector reports whether this build runs axpy with AVX2 (built with GOEXPERIMENT=simd on amd64).
func Vector() bool { return hasAVX2 }

// axpy adds a·x to y (len(y) ≥ len(x)), 8 entries per instruction.
func axpy(a float32, x, y []float32) {
	n := len(x)
	i := 0
	if hasAVX2 {
		av := archsimd.BroadcastFloat32x8(a)
		for ; i+8 <= n; i += 8 {
			yv := archsimd.LoadFloat32x8Slice(y[i : i+8])
			yv.Add(av.Mul(archsimd.LoadFloat32x8Slice(x[i : i+8]))).StoreSlice(y[i : i+8])
		}
	}
	axpyScalar(a, x, y, i)
}
