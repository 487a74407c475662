package step

import (
	"math"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// TestOptimizerScales checks the per-variable learning-rate multipliers: from the same variables and the
// same gradients, an optimizer with Scales{omega_star: 10} moves every Ω* exactly 10 times as far as the
// plain one does (Adam's step is the same, only its size differs), and every other variable the same.
func TestOptimizerScales(t *testing.T) {
	b := testBackend(t)
	net := feedForwardNet(neuron.FS, 0, model.ReadoutMean, 0)
	newCtx := func() *context.Context {
		ctx := context.New()
		if err := ctx.SetRNGStateFromSeed(3); err != nil {
			t.Fatal(err)
		}
		if err := InitVariables(b, ctx.In("model"), net); err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	plain, scaled := newCtx(), newCtx()
	e, err := New(Chunked, b, plain.In("model"), net, Options{Chunk: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, grads, err := e.Gradients(batchOf(6, 4, net.InputDims, net.Classes, 1))
	if err != nil {
		t.Fatal(err)
	}
	values := func(ctx *context.Context) map[string][]float32 {
		out := map[string][]float32{}
		for _, v := range TrainableIn(ctx, "") {
			x, err := tensors.CopyFlatData[float32](v.MustValue())
			if err != nil {
				t.Fatal(err)
			}
			out[v.ScopeAndName()] = x
		}
		return out
	}
	before := values(plain)
	for _, c := range []struct {
		ctx    *context.Context
		scales map[string]float64
	}{{plain, nil}, {scaled, map[string]float64{neuron.VarOmegaStar: 10}}} {
		opt, err := NewOptimizer(b, c.ctx, 1e-2, 100)
		if err != nil {
			t.Fatal(err)
		}
		opt.Scales = c.scales
		if _, err := opt.Apply(grads); err != nil {
			t.Fatal(err)
		}
		opt.Close()
	}
	afterPlain, afterScaled := values(plain), values(scaled)
	sawTarget, movedTargets := false, 0
	for name, x0 := range before {
		scale := 1.0
		if strings.HasSuffix(name, "/"+neuron.VarOmegaStar) {
			scale, sawTarget = 10, true
		}
		for i := range x0 {
			dp := float64(afterPlain[name][i] - x0[i])
			ds := float64(afterScaled[name][i] - x0[i])
			if dp != 0 && scale != 1 {
				movedTargets++
			}
			// float32 variables: the difference of two values near x0 carries x0's rounding.
			tol := 4e-7*math.Abs(float64(x0[i]))*scale + 1e-9
			if math.Abs(ds-scale*dp) > tol {
				t.Errorf("%s[%d]: scaled step %g, plain step %g, want ×%g", name, i, ds, dp, scale)
			}
		}
	}
	if !sawTarget || movedTargets == 0 {
		t.Fatalf("%s: present %v, %d elements moved by the plain step", neuron.VarOmegaStar, sawTarget, movedTargets)
	}
}
