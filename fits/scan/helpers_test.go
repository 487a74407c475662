package scan

import (
	"os"
	"sync"
	"testing"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set: the
// unrolled graphs compile faster, and the tests check values, not speed.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}

type testBackend struct {
	name string
	b    backends.Backend
}

var (
	backendsOnce sync.Once
	backendsList []testBackend
	backendsErr  string
)

// testBackends returns XLA CPU (when its PJRT plugin is installed) and SimpleGo in its sequential
// configuration; with FITS_REQUIRE_XLA=1 a missing XLA fails the test.
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

// coefficientsOf returns the coefficients of the layer whose variables are in ctx's current scope, from
// neuron.LayerCoefficients (the producer every engine uses), and the nodes and names of the variables its
// cell declares (all of them, trainable or not), which the coefficients are computed from.
func coefficientsOf(t testing.TB, ctx *context.Context, g *Graph, cfg neuron.Config, dtype dtypes.DType, pshape []int) (neuron.Coefficients, []*Node, []string) {
	t.Helper()
	c := neuron.LayerCoefficients(ctx, g, dtype, cfg, pshape)
	cell, err := cfg.Kind.Cell()
	if err != nil {
		t.Fatal(err)
	}
	names := cell.Variables(cfg)
	vars := make([]*Node, len(names))
	for i, name := range names {
		v := ctx.GetVariableByScopeAndName(ctx.Scope(), name)
		if v == nil {
			t.Fatalf("no variable %q in scope %q", name, ctx.Scope())
		}
		vars[i] = v.ValueGraph(g)
	}
	return c, vars, names
}
