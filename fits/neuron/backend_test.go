package neuron

import (
	"os"
	"sync"
	"testing"

	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/gomlx/backends"
)

// testBackend is a backend the tests run on, by configuration name.
type testBackend struct {
	name string
	b    backends.Backend
}

var (
	backendsOnce sync.Once
	backendsList []testBackend
	backendsErr  string // why XLA CPU is missing, if it is
)

// testBackends returns XLA CPU (when its PJRT plugin is installed) and SimpleGo in its sequential
// configuration. Without XLA the tests still run on SimpleGo and say so; with FITS_REQUIRE_XLA=1 a
// missing XLA fails the test.
func testBackends(t *testing.T) []testBackend {
	t.Helper()
	backendsOnce.Do(func() {
		if _, ok := xla.Plugins()["cpu"]; !ok {
			backendsErr = "no XLA CPU PJRT plugin found (run `make setup`)"
		} else if b, err := xla.New("xla:cpu"); err != nil {
			backendsErr = "XLA CPU backend failed: " + err.Error()
		} else {
			backendsList = append(backendsList, testBackend{"xla:cpu", b})
		}
		if b, err := xla.New(xla.SimpleGoConfig); err == nil {
			backendsList = append(backendsList, testBackend{xla.SimpleGoConfig, b})
		}
	})
	if backendsErr != "" {
		if os.Getenv("FITS_REQUIRE_XLA") == "1" {
			t.Fatalf("FITS_REQUIRE_XLA=1: %s", backendsErr)
		}
		t.Logf("skipping XLA CPU: %s", backendsErr)
	}
	if len(backendsList) == 0 {
		t.Skip("no GoMLX backend available")
	}
	return backendsList
}

// xlaBackend returns the XLA CPU backend, skipping the test (or failing it with FITS_REQUIRE_XLA=1) when
// it is unavailable.
func xlaBackend(t *testing.T) backends.Backend {
	t.Helper()
	for _, tb := range testBackends(t) {
		if tb.name == "xla:cpu" {
			return tb.b
		}
	}
	t.Skipf("XLA CPU unavailable: %s", backendsErr)
	return nil
}
