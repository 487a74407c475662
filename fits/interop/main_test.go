package interop

import (
	"os"
	"testing"
)

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set (the graphs
// compile faster; the tests check values, not speed).
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}
