package scan

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// TestLoopTripCountKnown compiles ForwardLoop and BackwardLoop on XLA CPU and reads XLA's optimized HLO:
// both While loops must carry a known trip count equal to K. It is what lets XLA GPU launch a loop's body K
// times without copying the loop condition to the host after each iteration (XLA's while-loop trip count
// analysis, which the GPU compiler runs too); a loop whose count XLA cannot infer would synchronise with the
// host at every time step.
func TestLoopTripCountKnown(t *testing.T) {
	if tripCountDump == "" {
		t.Skip("XLA_FLAGS was set from outside: no HLO dump to read")
	}
	backend := xlatest.XLA(t)
	const k = 37 // a count no other graph of the test has
	cfg := config(neuron.FSTS, 2, nil)
	dims := []int{2, k, 3}
	rng := rand.New(rand.NewPCG(5, 5))
	scope := model.NewStore().RootScope()
	setRandomVariables(t, scope.At("neuron"), rng, cfg, dtypes.Float32, dims[2:])
	cur := newTensor(dtypes.Float32, random(rng, size(dims), func() float64 { return 0.6 + 0.8*rng.NormFloat64() }), dims...)
	cot := newTensor(dtypes.Float32, random(rng, size(dims), rng.NormFloat64), dims...)
	exec := model.MustNewExec(backend, scope.Store(), func(_ *model.Scope, current, cotSpikes *Node) []*Node {
		c, _, _ := coefficientsOf(t, scope.At("neuron"), current.Graph(), cfg, dtypes.Float32, dims[2:])
		spikes, _, saved := ForwardLoop(c, current, nil)
		_, cotCurrent, _ := BackwardLoop(c, current, nil, saved, cotSpikes, nil)
		return []*Node{spikes, cotCurrent}
	}).WithName(tripCountModule)
	exec.MustCall(cur, cot)

	files, err := filepath.Glob(filepath.Join(tripCountDump, "*"+tripCountModule+"*after_optimizations.txt"))
	if err != nil || len(files) != 1 {
		t.Fatalf("want one optimized HLO dump of %s in %s, found %v (%v)", tripCountModule, tripCountDump, files, err)
	}
	hlo, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	whiles := regexp.MustCompile(`\) while\(`).FindAllString(string(hlo), -1) // "%while.4 = (s32[], …) while(%tuple…"
	known := strings.Count(string(hlo), `"known_trip_count":{"n":"37"}`)
	if len(whiles) != 2 || known != 2 {
		t.Fatalf("optimized HLO holds %d while loops and %d with the known trip count %d, want 2 and 2", len(whiles), known, k)
	}
}
