//go:build !(goexperiment.simd && amd64)

package events

// Vector reports whether this build runs axpy with AVX2 (built with GOEXPERIMENT=simd on amd64).
func Vector() bool { return false }

// axpy adds a·x to y (len(y) ≥ len(x)).
func axpy(a float32, x, y []float32) { axpyScalar(a, x, y, 0) }

// countNonzero returns how many entries of x are not zero (NaN counts).
func countNonzero(x []float32) int { return countNonzeroScalar(x) }

func compact(x []float32, e *rowEvents) int           { return compactScalar(x, e) }
func forwardRow(idx []int32, vals, w, b, y []float32) { forwardRowScalar(idx, vals, w, b, y) }
func gradRow(idx []int32, vals, c, g []float32)       { gradRowScalar(idx, vals, c, g) }

// rowKernelSet is one instruction set's row kernels, for the tests that hold each to the scalar code.
type rowKernelSet struct {
	name    string
	forward func(idx []int32, vals, w, b, y []float32)
	grad    func(idx []int32, vals, c, g []float32)
}

// rowKernelSets returns the row kernels this build can run: the scalar ones.
func rowKernelSets() []rowKernelSet {
	return []rowKernelSet{{"scalar", forwardRowScalar, gradRowScalar}}
}

func dots(c, w []float32, idx []int32, res []float32) { dotsScalar(c, w, idx, res) }
