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

// The training check: a toy task (every input 0.6 for class 0, 1.2 for class 1), 8 examples of 50 steps
// and 6 features, two blocks of 16 FSTS neurons (M = 1) with per-step dropout 0.2, the sum readout, Adam
// at 1e-2 with the frequency guard for trainingSteps steps.
const (
	trainingSteps = 20
	// trainingTol is the largest ratio of the last step's loss to the first's that passes.
	trainingTol = 0.8
)

// runTraining trains the toy task with engine and returns the row of the loss ratio.
func runTraining(backend compute.Backend, engine string, perturb *Perturbation) Row {
	const name = "training/loss-ratio"
	ratio, err := trainToy(backend, engine)
	if err != nil {
		return failed(engine, name, err)
	}
	perturb.apply(engine, &ratio, nil)
	return check(engine, name, ratio, trainingTol)
}

// trainToy returns the toy task's last loss over its first.
func trainToy(backend compute.Backend, engine string) (float64, error) {
	cfg := neuron.DefaultConfig(neuron.FSTS, 1)
	net := model.Net{
		InputDims: []int{6},
		Blocks:    []model.Block{model.DenseBlock("hidden_0", 16, cfg), model.DenseBlock("hidden_1", 16, cfg)},
		Classes:   2, Readout: model.ReadoutSum, Dropout: 0.2, DropoutMode: model.DropoutStep,
	}
	scope := mlmodel.NewStore().RootScope()
	if err := scope.Store().SetRNGStateFromSeed(1); err != nil {
		return 0, err
	}
	mctx := scope.At("model")
	if err := step.InitVariables(backend, mctx, net); err != nil {
		return 0, err
	}
	e, err := step.New(engine, backend, mctx, net, step.Options{})
	if err != nil {
		return 0, err
	}
	defer e.Close()
	opt, err := step.NewOptimizer(backend, scope, 1e-2, trainingSteps)
	if err != nil {
		return 0, err
	}
	defer opt.Close()
	_, capValue, err := cfg.GuardCap(neuron.DefaultFreqGuardSafety)
	if err != nil {
		return 0, err
	}
	opt.Guard = map[string]float64{neuron.VarLogTargetHz: capValue}

	const batch, steps = 8, 50
	x := make([]float32, batch*steps*6)
	labels, mask := make([]int32, batch), make([]float32, batch)
	for b := range batch {
		labels[b], mask[b] = int32(b%2), 1
		for i := range steps * 6 {
			x[b*steps*6+i] = 0.6 * float32(1+b%2)
		}
	}
	b := step.Batch{
		X:      tensors.FromFlatDataAndDimensions(x, batch, steps, 6),
		Labels: tensors.FromFlatDataAndDimensions(labels, batch),
		Mask:   tensors.FromFlatDataAndDimensions(mask, batch),
	}
	var first, last float64
	for it := range trainingSteps {
		b.StepMasks = &step.StepMasks{Seed: 1, Step: int64(it)}
		m, grads, err := e.Gradients(b)
		if err != nil {
			return 0, err
		}
		_, err = opt.Apply(grads)
		for _, g := range grads {
			g.MustFinalizeAll()
		}
		if err != nil {
			return 0, err
		}
		loss := m.LossSum / batch
		if it == 0 {
			first = loss
		}
		last = loss
	}
	if !(first > 0) {
		return 0, fmt.Errorf("first loss %g", first)
	}
	return last / first, nil
}
