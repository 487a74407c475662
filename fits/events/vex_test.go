package events_test

import (
	"testing"

	"github.com/fits-snn/fits/fits/internal/vexcheck"
)

// TestNoLegacySSE disassembles axpyAVX2 as built with GOEXPERIMENT=simd for x86-64 (whatever this test binary's
// own build and CPU) and fails on any legacy-SSE instruction in a function of this package that holds vector
// code: on Intel CPUs each one between AVX instructions costs a transition of the vector registers' state.
func TestNoLegacySSE(t *testing.T) {
	vexcheck.Test(t, vexcheck.KernelsProgram, "github.com/fits-snn/fits/fits/events", "axpyAVX2", "countNonzeroAVX2", "compactAVX512", "forwardRow8", "gradRow8", "forwardRow16", "gradRow16", "dots8", "dots16")
}
