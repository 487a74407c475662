package selftest

import (
	"fmt"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// result is one training step of an engine, copied to the host.
type result struct {
	// loss is the mean loss over the valid examples; rates the per-block firing rates summed over them.
	loss  float64
	rates []float64
	// grads are the gradients by variable path.
	grads map[string][]float32
}

// stepOnce builds engine name for net (whose variables live under scope's "model") and runs one training
// step of batch.
func stepOnce(backend compute.Backend, name string, scope *mlmodel.Scope, net model.Net, batch step.Batch, valid float64) (result, error) {
	e, err := step.New(name, backend, scope.At("model"), net, step.Options{})
	if err != nil {
		return result{}, err
	}
	defer e.Close()
	m, grads, err := e.Gradients(batch)
	if err != nil {
		return result{}, err
	}
	r := result{loss: m.LossSum / valid, rates: m.Rates, grads: map[string][]float32{}}
	for path, g := range grads {
		host, err := tensors.CopyFlatData[float32](g)
		g.MustFinalizeAll()
		if err != nil {
			return result{}, err
		}
		r.grads[path] = host
	}
	return r, nil
}

// tryTinyEngine builds engine name on a one-block LIF network and runs one training step of two time
// steps, to learn whether backend supports it.
func tryTinyEngine(backend compute.Backend, name string) error {
	net := model.Net{InputDims: []int{1}, Blocks: []model.Block{model.DenseBlock("hidden_0", 1, neuron.DefaultConfig(neuron.LIF, 0))},
		Classes: 2, Readout: model.ReadoutSum}
	scope := mlmodel.NewStore().RootScope()
	if err := step.InitVariables(backend, scope.At("model"), net); err != nil {
		return fmt.Errorf("selftest: %w", err)
	}
	batch := step.Batch{
		X:      tensors.FromFlatDataAndDimensions([]float32{1, 1}, 1, 2, 1),
		Labels: tensors.FromFlatDataAndDimensions([]int32{0}, 1),
		Mask:   tensors.FromFlatDataAndDimensions([]float32{1}, 1),
	}
	_, err := stepOnce(backend, name, scope, net, batch, 1)
	return err
}

// convertFloats converts values between float32 and float64.
func convertFloats[To, From float32 | float64](v []From) []To {
	out := make([]To, len(v))
	for i, x := range v {
		out[i] = To(x)
	}
	return out
}
