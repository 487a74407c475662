package step

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/internal/golden"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// goldenNet returns the network of a golden training step (internal/golden, steps.json): two hidden
// layers of c.Hidden FiTS neurons of order c.M with the released semantics, c.Readout over time, c.Classes
// classes, per-step dropout of probability c.Dropout.
func goldenNet(t *testing.T, c golden.StepCase) model.Net {
	t.Helper()
	kind := neuron.FS
	if c.M > 0 {
		kind = neuron.FSTS
	}
	cfg := model.DefaultConfig(kind, c.M, c.Hidden, c.Classes)
	n := &cfg.Neuron
	n.TauM, n.TauA, n.Dt, n.Vth = c.TauM, c.TauA, c.Dt, c.Vth
	n.TSMix, n.Surrogate = neuron.TSMix(c.TSMix), neuron.TriangleSurrogate(c.SurrogateAlpha)
	tc, err := neuron.ParseTargetCoordinate(c.Target)
	if err != nil {
		t.Fatal(err)
	}
	n.TargetCoordinate = tc
	readout, err := model.ParseReadout(c.Readout)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Readout, cfg.Dropout, cfg.DropoutMode = readout, c.Dropout, model.DropoutStep
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg.Net(c.Inputs)
}

// goldenVariable returns the scope and name of the variable of a golden parameter name
// ("layer0/weight", "readout/bias", "layer1/f_raw", ...).
func goldenVariable(name string) (scope, varName string) {
	block, param, _ := strings.Cut(name, "/")
	scope = "/model/readout"
	if l, ok := strings.CutPrefix(block, "layer"); ok {
		scope = "/model/hidden_" + l
	}
	switch param {
	case "weight":
		return scope + "/dense", "weights"
	case "bias":
		return scope + "/dense", "biases"
	case "f_raw":
		return scope + "/neuron", neuron.VarLogTargetHz
	case "omega_star":
		return scope + "/neuron", neuron.VarOmegaStar
	}
	return scope + "/neuron", param // beta_hat, lambda_hat
}

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
		for _, engine := range []string{Unrolled, Chunked, Scan, Fused, Loop} {
			t.Run(c.Name+"/"+engine, func(t *testing.T) {
				net := goldenNet(t, c)
				scope := mlmodel.NewStore().RootScope()
				mctx := scope.At("model")
				if err := InitVariables(b, mctx, net); err != nil {
					t.Fatal(err)
				}
				for name, p := range c.Params {
					path, vn := goldenVariable(name)
					v := scope.Store().GetVariable(mlmodel.JoinPath(path, vn))
					if v == nil {
						t.Fatalf("golden parameter %s: no variable %s/%s", name, path, vn)
					}
					data := make([]float32, len(p.Data))
					for i, x := range p.Data {
						data[i] = float32(x)
					}
					v.MustSetValue(tensors.FromFlatDataAndDimensions(data, p.Shape...))
				}
				e, err := New(engine, b, mctx, net, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				x := make([]float32, len(c.Input.Data))
				for i, v := range c.Input.Data {
					x[i] = float32(v)
				}
				labels, mask := make([]int32, c.Batch), make([]float32, c.Batch)
				for i, l := range c.Labels {
					labels[i], mask[i] = int32(l), 1
				}
				batch := Batch{
					X:      tensors.FromFlatDataAndDimensions(x, c.Input.Shape...),
					Labels: tensors.FromFlatDataAndDimensions(labels, c.Batch),
					Mask:   tensors.FromFlatDataAndDimensions(mask, c.Batch),
				}
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
					scope, vn := goldenVariable(name)
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
