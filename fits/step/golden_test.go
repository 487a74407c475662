package step

import (
	"fmt"
	"math"
	"testing"

	"github.com/fits-snn/fits/internal/golden"
	"github.com/fits-snn/fits/internal/goldennet"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// TestGoldenSteps holds every engine to the independent PyTorch implementation of the released code
// (internal/golden, steps.json, float64): for a two-layer network of each TS order M = 0–3, the sum and
// the mean readout, both target coordinates, with and without per-step dropout (the masks of
// fits/dropmask), one training step gives the golden loss and every golden gradient within float32
// rounding. The fused engine runs the AVX2 kernel or, built without GOEXPERIMENT=simd, the scalar one
// (the Makefile runs this test in both builds).
func TestGoldenSteps(t *testing.T) {
	cases, err := golden.Steps()
	if err != nil {
		t.Fatal(err)
	}
	b := testBackend(t)
	for _, c := range cases {
		for _, engine := range enginesBut(Stepwise) { // stepwise: chunked's graphs with K = 1

			t.Run(c.Name+"/"+engine, func(t *testing.T) {
				net, err := goldennet.Net(c)
				if err != nil {
					t.Fatal(err)
				}
				scope := mlmodel.NewStore().RootScope()
				mctx := scope.At("model")
				if err := InitVariables(b, mctx, net); err != nil {
					t.Fatal(err)
				}
				if err := goldennet.SetParams(scope.Store(), c); err != nil {
					t.Fatal(err)
				}
				e, err := New(engine, b, mctx, net, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				x, labels, mask := goldennet.Inputs(c)
				batch := Batch{X: x, Labels: labels, Mask: mask}
				if c.Dropout > 0 {
					batch.StepMasks = &StepMasks{Seed: c.MaskSeed, Step: c.MaskStep}
					ms, err := batch.StepMasks.Tensors(net, c.Batch, c.Time)
					if err != nil {
						t.Fatal(err)
					}
					for i, m := range ms {
						got, want := tensors.MustCopyFlatData[float32](m), c.Masks[fmt.Sprintf("layer%d", i)].Data
						for j := range want {
							if float64(got[j]) != float64(float32(want[j])) {
								t.Fatalf("layer %d mask element %d: %g, golden %g", i, j, got[j], want[j])
							}
						}
					}
				}
				m, grads, err := e.Gradients(batch)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					for _, g := range grads {
						g.MustFinalizeAll()
					}
				}()
				if loss := m.LossSum / float64(c.Batch); math.Abs(loss-c.Loss) > 2e-6*math.Max(1, c.Loss) {
					t.Errorf("loss %.9g, golden %.9g", loss, c.Loss)
				}
				if len(grads) != len(c.Grads) {
					t.Errorf("%d gradients, golden %d", len(grads), len(c.Grads))
				}
				for name, want := range c.Grads {
					scope, vn := goldennet.Variable(name)
					g, ok := grads[scope+"/"+vn]
					if !ok {
						t.Errorf("no gradient of %s (%s/%s)", name, scope, vn)
						continue
					}
					got := tensors.MustCopyFlatData[float32](g)
					scale := 0.0
					for _, w := range want.Data {
						scale = math.Max(scale, math.Abs(w))
					}
					for i, w := range want.Data {
						if d := math.Abs(float64(got[i]) - w); d > 2e-4*scale+1e-7 {
							t.Errorf("%s[%d] = %.7g, golden %.7g (largest |golden| %.3g)", name, i, got[i], w, scale)
							break
						}
					}
				}
			})
		}
	}
}
