package neuron

import (
	"os"
	"testing"
)

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set: the
// unrolled graphs of the tests compile faster at level 0 (docs/performance-notes.md), and the tests check
// values, not speed.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}
