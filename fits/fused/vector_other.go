//go:build !(goexperiment.simd && amd64)

package fused

// vectorLanes is the number of neurons one vector instruction handles (1: this build has no vector code).
const vectorLanes = 1

// Vector reports whether this build runs the kernel's inner loops with SIMD instructions (built with
// GOEXPERIMENT=simd on amd64 and run on a CPU with AVX2).
func Vector() bool { return false }

// forwardVector is absent from this build: every neuron runs the scalar code.
func (x *expanded) forwardVector(_ Shape, _ int, _ []float32, _ *mask, _ []float32) (int, int) {
	return 0, 0
}

// backwardVector is absent from this build: every neuron runs the scalar code.
func (x *expanded) backwardVector(_ Shape, _ int, _ backwardIn, _, _ []float32) int {
	return 0
}
