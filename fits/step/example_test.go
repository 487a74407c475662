package step_test

import (
	"fmt"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Training a user-defined stack of FiTS blocks with a fast engine in the user's own loop: the network is
// data (model.Net: blocks of a synapse and a neuron layer, then a readout), the engine computes one step's
// gradients (step.Default: the fused host kernel on XLA CPU, which runs each layer's recurrence as one
// call forward and one backward), and the optimizer applies them (Adam, the released code's ε, the
// frequency guard on ln f*).
func Example() {
	backend, err := xla.Backend()
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := neuron.DefaultConfig(neuron.FSTS, 1)
	net := model.Net{
		InputDims: []int{6},
		Blocks:    []model.Block{model.DenseBlock("hidden_0", 16, cfg), model.DenseBlock("hidden_1", 16, cfg)},
		Classes:   2, Readout: model.ReadoutSum, Dropout: 0.2, DropoutMode: model.DropoutStep,
	}
	scope := mlmodel.NewStore().RootScope()
	if err := scope.Store().SetRNGStateFromSeed(1); err != nil {
		fmt.Println(err)
		return
	}
	mctx := scope.At("model")
	if err := step.InitVariables(backend, mctx, net); err != nil {
		fmt.Println(err)
		return
	}
	engine, err := step.New("", backend, mctx, net, step.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer engine.Close()
	opt, err := step.NewOptimizer(backend, scope, 1e-2, 20)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer opt.Close()
	_, capValue, _ := cfg.GuardCap(neuron.DefaultFreqGuardSafety)
	opt.Guard = map[string]float64{neuron.VarLogTargetHz: capValue}

	// A toy task: class 1 sees a 6-channel input twice as strong as class 0; 8 examples, 50 steps.
	const batch, steps = 8, 50
	x := make([]float32, batch*steps*6)
	labels, mask := make([]int32, batch), make([]float32, batch)
	for b := range batch {
		labels[b], mask[b] = int32(b%2), 1
		for i := range steps * 6 {
			x[b*steps*6+i] = 0.3 * float32(1+b%2)
		}
	}
	var first, last float64
	for it := range 20 {
		b := step.Batch{
			X:         tensors.FromFlatDataAndDimensions(x, batch, steps, 6),
			Labels:    tensors.FromFlatDataAndDimensions(labels, batch),
			Mask:      tensors.FromFlatDataAndDimensions(mask, batch),
			StepMasks: &step.StepMasks{Seed: 1, Step: int64(it)},
		}
		m, grads, err := engine.Gradients(b)
		if err != nil {
			fmt.Println(err)
			return
		}
		_, err = opt.Apply(grads)
		for _, g := range grads { // the caller owns the gradients and the batch
			g.MustFinalizeAll()
		}
		for _, t := range []*tensors.Tensor{b.X, b.Labels, b.Mask} {
			t.MustFinalizeAll()
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		loss := m.LossSum / batch
		if it == 0 {
			first = loss
		}
		last = loss
	}
	fmt.Println("engine:", engine.Name())
	fmt.Println("loss went down:", last < first)
	// Output:
	// engine: fused
	// loss went down: true
}

// The chunked engine's default chunk length: the largest divisor of the number of time steps T that is
// at most DefaultChunkMax, for the paper's sequence lengths (SHD/SSC 250 bins, GSC 100 frames, DVS 50,
// pixel-wise sMNIST 784, row-wise 28) and a prime length.
func ExampleDefaultChunk() {
	for _, steps := range []int{250, 100, 50, 784, 28, 7} {
		fmt.Printf("T = %d: K = %d\n", steps, step.DefaultChunk(steps))
	}
	// Output:
	// T = 250: K = 5
	// T = 100: K = 5
	// T = 50: K = 5
	// T = 784: K = 4
	// T = 28: K = 4
	// T = 7: K = 1
}
