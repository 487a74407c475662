package scanstep

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set: the tests
// check values, not speed.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}

func testBackend(t testing.TB) backends.Backend {
	t.Helper()
	xla.SetAnnounceWriter(nil)
	if _, ok := xla.Plugins()["cpu"]; !ok {
		if os.Getenv("FITS_REQUIRE_XLA") == "1" {
			t.Fatal("FITS_REQUIRE_XLA=1: no XLA CPU PJRT plugin found (run `make setup`)")
		}
		t.Skip("no XLA CPU PJRT plugin found (run `make setup`)")
	}
	b, err := xla.New("xla:cpu")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// batchOf returns a deterministic batch: inputs in [0, 2) strong enough to make the neurons spike, labels
// cycling over the classes, and the last `padded` examples masked out.
func batchOf(batch, steps int, inputDims []int, classes, padded int) step.Batch {
	n := batch * steps
	for _, d := range inputDims {
		n *= d
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((i*7919)%13) / 6.5
	}
	labels := make([]int32, batch)
	mask := make([]float32, batch)
	for i := range labels {
		labels[i] = int32(i % max(classes, 1))
		if i < batch-padded {
			mask[i] = 1
		}
	}
	return step.Batch{
		X:      tensors.FromFlatDataAndDimensions(x, append([]int{batch, steps}, inputDims...)...),
		Labels: tensors.FromFlatDataAndDimensions(labels, batch),
		Mask:   tensors.FromFlatDataAndDimensions(mask, batch),
	}
}

func feedForwardNet(kind neuron.Kind, m int, readout model.Readout, dropout float64) model.Net {
	cfg := model.DefaultConfig(kind, m, 5, 3)
	cfg.Readout, cfg.Dropout = readout, dropout
	return cfg.Net(4)
}

func convNet(kind neuron.Kind, m int, dropout float64) model.Net {
	cfg := model.DefaultConvConfig(kind, m)
	cfg.Channels, cfg.Kernel, cfg.Pool, cfg.Hidden, cfg.Classes, cfg.Dropout = []int{2}, 3, 2, 4, 3, dropout
	net, err := cfg.Net([]int{2, 4, 4})
	if err != nil {
		panic(err)
	}
	return net
}

// result is one training step's metrics and gradients (on the host) and an evaluation's metrics.
type result struct {
	step, eval step.Metrics
	grads      map[string][]float32
}

func runEngine(t *testing.T, e step.Engine, batch step.Batch) result {
	t.Helper()
	defer e.Close()
	m, grads, err := e.Gradients(batch)
	if err != nil {
		t.Fatalf("%s: %v", e.Name(), err)
	}
	r := result{step: m, grads: map[string][]float32{}}
	for v, g := range grads {
		if r.grads[v], err = tensors.CopyFlatData[float32](g); err != nil {
			t.Fatal(err)
		}
		g.MustFinalizeAll()
	}
	if r.eval, err = e.Evaluate(step.Batch{X: batch.X, Labels: batch.Labels, Mask: batch.Mask}); err != nil {
		t.Fatalf("%s evaluate: %v", e.Name(), err)
	}
	return r
}

func near(a, b, rel, abs float64) bool { return math.Abs(a-b) <= abs+rel*math.Abs(b) }

func compareMetrics(t *testing.T, what string, got, want step.Metrics) {
	t.Helper()
	if !near(got.LossSum, want.LossSum, 1e-5, 1e-6) || got.Correct != want.Correct || len(got.Rates) != len(want.Rates) {
		t.Fatalf("%s: got %+v, chunked %+v", what, got, want)
	}
	for i := range got.Rates {
		if !near(got.Rates[i], want.Rates[i], 1e-5, 1e-7) {
			t.Fatalf("%s: rates %v, chunked %v", what, got.Rates, want.Rates)
		}
	}
}

// close32 compares two gradients elementwise: |a−b| ≤ abs + rel·max|b|; an all-zero b (a layer that does
// not fire, AdaptLIF's stationary zero initialization) needs an all-zero a.
func close32(a, b []float32, rel, abs float64) error {
	if len(a) != len(b) {
		return fmt.Errorf("length %d vs %d", len(a), len(b))
	}
	scale := 0.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i := range a {
		if d := math.Abs(float64(a[i]) - float64(b[i])); d > abs+rel*scale || math.IsNaN(d) {
			return fmt.Errorf("element %d: %g vs %g (scale %g)", i, a[i], b[i], scale)
		}
	}
	return nil
}

// TestMatchesChunked holds the engine, with the forward values saved and recomputed, to package step's
// chunked engine (autodiff of each chunk) on one training step and one evaluation: the same loss, metrics
// and gradient of every trainable variable within float32 rounding, with padded examples, for every
// registered kind in the feedforward network (dropout and the leaky-integrator readouts in some cases),
// and for the conv network (per-channel neuron parameters).
func TestMatchesChunked(t *testing.T) {
	b := testBackend(t)
	type engineCase struct {
		name  string
		net   model.Net
		steps int
		chunk int
	}
	var cases []engineCase
	readouts := []model.Readout{model.ReadoutMean, model.ReadoutLIMax, model.ReadoutLIMean}
	for i, kind := range neuron.Kinds() {
		m := 0
		if kind.CheckOrder(0) != nil {
			m = 2
		}
		dropout := []float64{0, 0.3}[i%2]
		net := feedForwardNet(kind, m, readouts[i%len(readouts)], dropout)
		cases = append(cases, engineCase{fmt.Sprintf("%s M=%d", kind, m), net, 6, 3})
	}
	cases = append(cases,
		engineCase{"fsts M=1 chunk 2", feedForwardNet(neuron.FSTS, 1, model.ReadoutMean, 0.5), 6, 2},
		engineCase{"conv fsts M=1", convNet(neuron.FSTS, 1, 0.25), 4, 2})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.New()
			if err := ctx.SetRNGStateFromSeed(7); err != nil {
				t.Fatal(err)
			}
			mctx := ctx.In("model")
			if err := step.InitVariables(b, mctx, tc.net); err != nil {
				t.Fatal(err)
			}
			batch := batchOf(6, tc.steps, tc.net.InputDims, tc.net.Classes, 2)
			masks, err := step.NewMasks(b, ctx, tc.net)
			if err != nil {
				t.Fatal(err)
			}
			defer masks.Close()
			if batch.Dropout, err = masks.Draw(batch.Mask); err != nil {
				t.Fatal(err)
			}
			ref, err := step.New(step.Chunked, b, mctx, tc.net, step.Options{Chunk: tc.chunk})
			if err != nil {
				t.Fatal(err)
			}
			want := runEngine(t, ref, batch)
			for _, recompute := range []bool{false, true} {
				e, err := New(b, mctx, tc.net, Options{Chunk: tc.chunk, Recompute: recompute})
				if err != nil {
					t.Fatal(err)
				}
				got := runEngine(t, e, batch)
				what := fmt.Sprintf("recompute=%v", recompute)
				compareMetrics(t, what+" step", got.step, want.step)
				compareMetrics(t, what+" eval", got.eval, want.eval)
				if len(got.grads) != len(want.grads) || len(want.grads) == 0 {
					t.Fatalf("%s: %d gradients, chunked %d", what, len(got.grads), len(want.grads))
				}
				for v, w := range want.grads {
					g, ok := got.grads[v]
					if !ok {
						t.Fatalf("%s: no gradient for %s", what, v)
					}
					if err := close32(g, w, 2e-5, 1e-6); err != nil {
						t.Errorf("%s: gradient of %s: %v", what, v, err)
					}
				}
			}
			if want.step.Rates[0] < 0.05*4 {
				t.Errorf("rates %v: the first block fires too little to test the surrogate and the reset", want.step.Rates)
			}
		})
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	b := testBackend(t)
	net := feedForwardNet(neuron.LIF, 0, model.ReadoutMean, 0)
	if _, err := New(b, context.New(), net, Options{Chunk: -1}); err == nil {
		t.Error("negative chunk accepted")
	}
	bad := net
	bad.Blocks = nil
	if _, err := New(b, context.New(), bad, Options{}); err == nil {
		t.Error("network without blocks accepted")
	}
	if _, err := New(nil, context.New(), net, Options{}); err == nil {
		t.Error("nil backend accepted")
	}
}
