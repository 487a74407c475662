package fused_test

import (
	"testing"

	"github.com/fits-snn/fits/fits/internal/vexcheck"
)

// TestNoLegacySSE disassembles the kernels as built with GOEXPERIMENT=simd for x86-64 (whatever this test
// binary's own build and CPU) and fails on any legacy-SSE instruction in a function of this package that
// holds vector code, the per-step loops and everything around them: on Intel CPUs each one between AVX
// instructions costs a transition of the vector registers' state (see vector_amd64.go).
func TestNoLegacySSE(t *testing.T) {
	vexcheck.Test(t, vexcheck.KernelsProgram, "github.com/fits-snn/fits/fits/fused",
		"(*expanded).forwardVector", "(*expanded).backwardVector", // the dispatchers (VZEROUPPER at the end)
		"(*expanded).forward8", "(*expanded).backward8", "(*expanded).forward16", "(*expanded).backward16",
		"fill16", "fill8", "sums16", "sums8", // the rank-one input's loops
		"timeSum16", "timeSum8") // ForwardTimeSum's
}
