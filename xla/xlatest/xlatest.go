// Package xlatest gives tests the GoMLX backends they run on, chosen one way for every package: the XLA
// CPU backend when its PJRT plugin is installed (`make setup`), and SimpleGo in its sequential
// configuration. With FITS_REQUIRE_XLA=1 (as `make test` sets) a missing XLA CPU backend fails the test
// instead of skipping it. Only tests import it.
package xlatest

import (
	"os"
	"sync"
	"testing"

	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute"
)

// Backend is a backend the tests run on, with its configuration name ("xla:cpu", xla.SimpleGoConfig).
type Backend struct {
	Name    string
	Backend compute.Backend
}

var (
	once   sync.Once
	list   []Backend
	xlaErr string // why XLA CPU is missing, if it is
)

// discover finds the backends once; then, with FITS_REQUIRE_XLA=1, a missing XLA CPU backend fails tb.
func discover(tb testing.TB) {
	tb.Helper()
	once.Do(func() {
		xla.SetAnnounceWriter(nil)
		if _, ok := xla.Plugins()["cpu"]; !ok {
			xlaErr = "no XLA CPU PJRT plugin found (run `make setup`)"
		} else if b, err := xla.New("xla:cpu"); err != nil {
			xlaErr = "XLA CPU backend failed: " + err.Error()
		} else {
			list = append(list, Backend{"xla:cpu", b})
		}
		if b, err := xla.New(xla.SimpleGoConfig); err == nil {
			list = append(list, Backend{xla.SimpleGoConfig, b})
		}
	})
	if xlaErr != "" && os.Getenv("FITS_REQUIRE_XLA") == "1" {
		tb.Fatalf("FITS_REQUIRE_XLA=1: %s", xlaErr)
	}
}

// Backends returns XLA CPU (when available) and SimpleGo; without XLA the test still runs on SimpleGo and
// logs why, unless FITS_REQUIRE_XLA=1.
func Backends(tb testing.TB) []Backend {
	tb.Helper()
	discover(tb)
	if xlaErr != "" {
		tb.Logf("skipping XLA CPU: %s", xlaErr)
	}
	if len(list) == 0 {
		tb.Skip("no GoMLX backend available")
	}
	return list
}

// XLA returns the XLA CPU backend, skipping the test when it is unavailable (failing it with
// FITS_REQUIRE_XLA=1).
func XLA(tb testing.TB) compute.Backend {
	tb.Helper()
	discover(tb)
	for _, b := range list {
		if b.Name == "xla:cpu" {
			return b.Backend
		}
	}
	tb.Skipf("skipping: %s", xlaErr)
	return nil
}
