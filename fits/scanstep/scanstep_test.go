package scanstep

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/fits-snn/fits/fits/chunked"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}

func xlaBackend(t testing.TB) backends.Backend {
	t.Helper()
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

func uniform(rng *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return out
}

// network creates the variables of a feedforward network (dense maps U(−2.5/√fanIn, 2.5/√fanIn), random
// biases, random neuron parameters) in a new context.
func network(t testing.TB, rng *rand.Rand, spec chunked.Spec, inputs int) *context.Context {
	t.Helper()
	ctx := context.New()
	dense := func(ctx *context.Context, in, out int) {
		lim := 2.5 / math.Sqrt(float64(in))
		ctx.In("dense").VariableWithValue("weights", tensors.FromFlatDataAndDimensions(uniform(rng, in*out, -lim, lim), in, out))
		ctx.In("dense").VariableWithValue("biases", tensors.FromFlatDataAndDimensions(uniform(rng, out, 0.2, 0.8), out))
	}
	cfg := spec.Neuron
	w := spec.Width
	in := inputs
	for i := range spec.Layers {
		lctx := ctx.In(layerScope(i))
		dense(lctx, in, w)
		in = w
		nctx := lctx.In("neuron")
		switch {
		case cfg.Kind == neuron.AdaptLIF:
			nctx.VariableWithValue(neuron.VarEta, tensors.FromFlatDataAndDimensions(uniform(rng, w, 5, 40), w))
			nctx.VariableWithValue(neuron.VarGamma, tensors.FromFlatDataAndDimensions(uniform(rng, w, 5, 40), w))
		case cfg.Kind.HasTargetFrequency():
			fmax, err := cfg.MaxTargetHz()
			if err != nil {
				t.Fatal(err)
			}
			omega := uniform(rng, w, theory.RadPerSecFromHz(1), theory.RadPerSecFromHz(math.Min(60, fmax)))
			nctx.VariableWithValue(neuron.VarOmegaStar, tensors.FromFlatDataAndDimensions(omega, w))
		}
		if m := cfg.Order; m > 0 {
			nctx.VariableWithValue(neuron.VarBetaHat, tensors.FromFlatDataAndDimensions(uniform(rng, m*w, -1.5, 1.5), m, w))
			nctx.VariableWithValue(neuron.VarLambdaHat, tensors.FromFlatDataAndDimensions(uniform(rng, m*w, -3, 2), m, w))
		}
	}
	dense(ctx.In("readout"), in, spec.Classes)
	return ctx
}

// batchOf draws x [batch, time, inputs] (Bernoulli spikes at rate 0.3), labels and a mask whose last two
// examples are padding.
func batchOf(rng *rand.Rand, batch, steps, inputs, classes int) (x, labels, mask *tensors.Tensor) {
	xv := make([]float32, batch*steps*inputs)
	for i := range xv {
		if rng.Float64() < 0.3 {
			xv[i] = 1
		}
	}
	lv := make([]int32, batch)
	mv := make([]float32, batch)
	for i := range lv {
		lv[i] = int32(rng.IntN(classes))
		if i < batch-2 {
			mv[i] = 1
		}
	}
	return tensors.FromFlatDataAndDimensions(xv, batch, steps, inputs),
		tensors.FromFlatDataAndDimensions(lv, batch), tensors.FromFlatDataAndDimensions(mv, batch)
}

// TestStepMatchesChunked holds one Step to package chunked's Step on the same variables and batch (two
// hidden layers, three chunks, two padded examples): the loss, the metrics and every gradient within
// float32 rounding.
func TestStepMatchesChunked(t *testing.T) {
	b := xlaBackend(t)
	const batch, steps, inputs = 5, 12, 7
	for _, tc := range []struct {
		name      string
		cfg       neuron.Config
		recompute bool
	}{
		{"lif", neuron.DefaultConfig(neuron.LIF, 0), false},
		{"adaptlif", neuron.DefaultConfig(neuron.AdaptLIF, 0), false},
		{"fsts M=2", neuron.DefaultConfig(neuron.FSTS, 2), false},
		{"fsts M=2 recomputed", neuron.DefaultConfig(neuron.FSTS, 2), true},
		{"fsts M=1 detached", func() neuron.Config {
			c := neuron.DefaultConfig(neuron.FSTS, 1)
			c.DetachReset = true
			return c
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := chunked.Spec{Layers: 2, Width: 6, Neuron: tc.cfg, Classes: 3, Chunk: 4}
			rng := rand.New(rand.NewPCG(5, 8))
			ctx := network(t, rng, spec, inputs)
			x, labels, mask := batchOf(rng, batch, steps, inputs, spec.Classes)
			ref, err := chunked.New(b, ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			want, err := ref.Step(x, labels, mask)
			if err != nil {
				t.Fatal(err)
			}
			hand, err := New(b, ctx, spec, Options{Recompute: tc.recompute})
			if err != nil {
				t.Fatal(err)
			}
			defer hand.Close()
			got, err := hand.Step(x, labels, mask)
			if err != nil {
				t.Fatal(err)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Abs(b)+1e-6 }
			if !near(got.LossSum, want.LossSum) || got.Correct != want.Correct {
				t.Errorf("loss sum %v, correct %v; chunked %v, %v", got.LossSum, got.Correct, want.LossSum, want.Correct)
			}
			for i := range want.Rates {
				if !near(got.Rates[i], want.Rates[i]) {
					t.Errorf("layer %d rate %v, chunked %v", i, got.Rates[i], want.Rates[i])
				}
				t.Logf("layer %d: mean rate %.3f", i, want.Rates[i]/float64(batch-2))
				if want.Rates[i] < 0.05*float64(batch-2) {
					t.Errorf("layer %d fires at a mean rate %v per example: too little to test anything", i, want.Rates[i]/float64(batch-2))
				}
			}
			if len(got.Grads) != len(want.Grads) {
				t.Errorf("%d gradients, chunked %d", len(got.Grads), len(want.Grads))
			}
			for name, w := range want.Grads {
				g, ok := got.Grads[name]
				if !ok {
					t.Errorf("no gradient of %s", name)
					continue
				}
				wv, gv := tensors.MustCopyFlatData[float32](w), tensors.MustCopyFlatData[float32](g)
				scale, norm := 0.0, 0.0
				for _, v := range wv {
					scale = math.Max(scale, math.Abs(float64(v)))
					norm += float64(v) * float64(v)
				}
				if norm == 0 {
					t.Errorf("gradient of %s is zero in the chunked step: the case tests nothing", name)
				}
				for i := range wv {
					if d := math.Abs(float64(gv[i] - wv[i])); d > 1e-5*math.Abs(float64(wv[i]))+1e-6*scale {
						t.Errorf("%s[%d] = %v, chunked %v", name, i, gv[i], wv[i])
						break
					}
				}
			}
		})
	}
}
