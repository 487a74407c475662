// Package goldennet builds the network of a golden training step of the released code's semantics
// (internal/golden, steps.json) as data for the step engines: two hidden layers of FiTS neurons, the
// readout, the golden parameters in the engines' variables, and the golden batch as host slices. The
// engine tests of fits/step and `fits selftest` (fits/selftest) both hold the engines to these cases.
package goldennet

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/internal/golden"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Net returns the network of a golden training step: two hidden layers of c.Hidden FiTS neurons of order
// c.M with the released semantics (FS for M = 0, FSTS otherwise), c.Readout over time, c.Classes classes,
// per-step dropout of probability c.Dropout, for c.Inputs input features.
func Net(c golden.StepCase) (model.Net, error) {
	kind := neuron.FS
	if c.M > 0 {
		kind = neuron.FSTS
	}
	cfg := model.DefaultConfig(kind, c.M, c.Hidden, c.Classes)
	n := &cfg.Neuron
	n.TauM, n.TauA, n.Dt, n.Vth = c.TauM, c.TauA, c.Dt, c.Vth
	n.TSMix, n.Surrogate = neuron.TSMix(c.TSMix), neuron.TriangleSurrogate(c.SurrogateAlpha)
	tc, err := neuron.ParseTargetCoordinate(c.Target)
	readout, rerr := model.ParseReadout(c.Readout)
	n.TargetCoordinate, cfg.Readout, cfg.Dropout, cfg.DropoutMode = tc, readout, c.Dropout, model.DropoutStep
	if err = cmp.Or(err, rerr); err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return model.Net{}, fmt.Errorf("golden case %s: %w", c.Name, err)
	}
	return cfg.Net(c.Inputs), nil
}

// Variable returns the scope and the name of the engines' variable of a golden parameter name
// ("layer0/weight", "readout/bias", "layer1/f_raw", ...); the gradient of that variable is keyed
// scope + "/" + name.
func Variable(name string) (scope, varName string) {
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

// SetParams writes the golden parameters of c, rounded to float32, into the variables of store (created
// beforehand under the scope "model", e.g. by step.InitVariables).
func SetParams(store *mlmodel.Store, c golden.StepCase) error {
	for name, p := range c.Params {
		path, vn := Variable(name)
		v := store.GetVariable(mlmodel.JoinPath(path, vn))
		if v == nil {
			return fmt.Errorf("golden case %s: parameter %s has no variable %s/%s", c.Name, name, path, vn)
		}
		if err := v.SetValue(tensors.FromFlatDataAndDimensions(Float32s(p.Data), p.Shape...)); err != nil {
			return fmt.Errorf("golden case %s: parameter %s: %w", c.Name, name, err)
		}
	}
	return nil
}

// Inputs returns the golden batch on the host: the input [B, T, F] rounded to float32, the labels [B] and
// the example mask [B] (all ones).
func Inputs(c golden.StepCase) (x *tensors.Tensor, labels *tensors.Tensor, mask *tensors.Tensor) {
	ls, ms := make([]int32, c.Batch), make([]float32, c.Batch)
	for i, l := range c.Labels {
		ls[i], ms[i] = int32(l), 1
	}
	return tensors.FromFlatDataAndDimensions(Float32s(c.Input.Data), c.Input.Shape...),
		tensors.FromFlatDataAndDimensions(ls, c.Batch), tensors.FromFlatDataAndDimensions(ms, c.Batch)
}

// Float32s rounds values to float32.
func Float32s(values []float64) []float32 {
	out := make([]float32, len(values))
	for i, v := range values {
		out[i] = float32(v)
	}
	return out
}
