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

// tripCountDump is the folder where XLA writes the optimized HLO of the graphs named tripCountModule, for
// TestLoopTripCountKnown; "" when XLA_FLAGS was set from outside (the test then skips).
var tripCountDump string

// tripCountModule names the graphs whose optimized HLO XLA dumps (GoMLX names an XLA module after its Exec).
const tripCountModule = "scan_loop_trip_count"

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set: the
// unrolled graphs compile faster, and the tests check values, not speed. It also asks XLA to dump the
// optimized HLO of the graphs named tripCountModule (and of no other) into a temporary folder.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		flags := "--xla_backend_optimization_level=0"
		if dir, err := os.MkdirTemp("", "scan-hlo-"); err == nil {
			tripCountDump = dir
			flags += " --xla_dump_to=" + dir + " --xla_dump_hlo_as_text --xla_dump_hlo_module_re=" + tripCountModule
		}
		_ = os.Setenv("XLA_FLAGS", flags)
	}
	code := m.Run()
	if tripCountDump != "" {
		_ = os.RemoveAll(tripCountDump)
	}
	os.Exit(code)
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
