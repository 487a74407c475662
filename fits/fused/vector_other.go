//go:build !(goexperiment.simd && amd64)

package fused

// supported reports whether this build and CPU run isa: only Scalar without GOEXPERIMENT=simd on amd64.
func supported(isa ISA) bool { return isa == Scalar }

// histSize is the size of a worker's buffer for the recomputed state of the vector kernels (none here).
func histSize(_, _, _ int) int { return 0 }

// vecWork is a worker's memory for the vector kernels (none in this build).
type vecWork struct{}

// forwardVector is absent from this build: every neuron runs the scalar code.
func (x *expanded) forwardVector(_ ISA, _ Shape, _ int, _ []float32, _ *mask, _ []float32, _ []uint64, _ *vecWork) (int, int) {
	return 0, 0
}

// backwardVector is absent from this build: every neuron runs the scalar code.
func (x *expanded) backwardVector(_ ISA, _ Shape, _ int, _ *backwardIn, _, _ []float32, _ *vecWork) int {
	return 0
}
