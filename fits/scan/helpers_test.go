package scan

import (
	"os"
	"testing"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set: the
// unrolled graphs compile faster, and the tests check values, not speed.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}

// testBackends returns XLA CPU (when its PJRT plugin is installed) and SimpleGo (package xlatest).
func testBackends(t *testing.T) []xlatest.Backend { return xlatest.Backends(t) }

// coefficientsOf returns the coefficients of the layer whose variables are in scope's current scope, from
// neuron.LayerCoefficients (the producer every engine uses), and the nodes and names of the variables its
// cell declares (all of them, trainable or not), which the coefficients are computed from.
func coefficientsOf(t testing.TB, scope *model.Scope, g *Graph, cfg neuron.Config, dtype dtypes.DType, pshape []int) (neuron.Coefficients, []*Node, []string) {
	t.Helper()
	c := neuron.LayerCoefficients(scope, g, dtype, cfg, pshape)
	cell, err := cfg.Kind.Cell()
	if err != nil {
		t.Fatal(err)
	}
	names := cell.Variables(cfg)
	vars := make([]*Node, len(names))
	for i, name := range names {
		v := scope.Store().GetVariable(model.JoinPath(scope.Scope(), name))
		if v == nil {
			t.Fatalf("no variable %q in scope %q", name, scope.Scope())
		}
		vars[i] = v.NodeValue(g)
	}
	return c, vars, names
}
