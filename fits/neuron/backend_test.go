package neuron

import (
	"testing"

	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/compute"
)

// testBackend is a backend the tests run on, by configuration name.
type testBackend struct {
	name string
	b    compute.Backend
}

// testBackends returns XLA CPU (when its PJRT plugin is installed) and SimpleGo (package xlatest).
func testBackends(t *testing.T) []testBackend {
	t.Helper()
	var out []testBackend
	for _, b := range xlatest.Backends(t) {
		out = append(out, testBackend{b.Name, b.Backend})
	}
	return out
}

// xlaBackend returns the XLA CPU backend, skipping the test (or failing it with FITS_REQUIRE_XLA=1) when
// it is unavailable.
func xlaBackend(t *testing.T) compute.Backend { return xlatest.XLA(t) }
