//go:build !(goexperiment.simd && amd64)

package events

// Vector reports whether this build runs axpy with AVX2 (built with GOEXPERIMENT=simd on amd64).
func Vector() bool { return false }

// axpy adds a·x to y (len(y) ≥ len(x)).
func axpy(a float32, x, y []float32) { axpyScalar(a, x, y, 0) }

// countNonzero returns how many entries of x are not zero (NaN counts).
func countNonzero(x []float32) int { return countNonzeroScalar(x) }
