package step

import (
	"fmt"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// InitVariables creates and initializes the network's variables in scope (the network's scope) as
// model.Net.Forward would, by building the network once on a single time step of a single example: the
// same variables, created in the same order from the same random number generator, as any full-size graph
// would create them, without compiling one. Variables that already exist (e.g. loaded from a checkpoint)
// are left as they are.
func InitVariables(backend compute.Backend, scope *mlmodel.Scope, net model.Net) error {
	if err := net.Validate(); err != nil {
		return err
	}
	exec, err := mlmodel.NewExec(backend, scope.Store(), func(_ *mlmodel.Scope, x *Node) *Node {
		neuron.SetTraining(scope, x.Graph(), false)
		out := net.Forward(scope, x, nil)
		last := out.Spikes[len(out.Spikes)-1]
		if out.Logits != nil {
			return ReduceAllSum(out.Logits)
		}
		return ReduceAllSum(last)
	})
	if err != nil {
		return err
	}
	defer exec.Finalize()
	x := tensors.FromShape(shapes.Make(dtypes.Float32, append([]int{1, 1}, net.InputDims...)...))
	defer x.MustFinalizeAll()
	outs, err := exec.Call(x)
	if err != nil {
		return fmt.Errorf("step: initializing the variables: %w", err)
	}
	for _, t := range outs {
		t.MustFinalizeAll()
	}
	return nil
}

// Masks draws the dropout masks of a network's training steps. In model.DropoutStep mode (the default) it
// names them, StepMasks{seed, step}, and every engine draws the masks it needs from package fits/dropmask:
// the same masks for the same (seed, step, block), whatever the engine, and a resumed run draws what an
// uninterrupted one would as long as the step is counted over the whole run. In model.DropoutShared mode it
// draws time-shared masks (model.Net.DropoutMasks) from the random number generator of the run's store,
// whose state is saved with the checkpoint.
type Masks struct {
	net  model.Net
	seed int64
	exec *mlmodel.Exec
}

// NewMasks returns the mask sampler of net for the run with this seed; scope is any scope of the run's store.
func NewMasks(backend compute.Backend, scope *mlmodel.Scope, net model.Net, seed int64) (*Masks, error) {
	m := &Masks{net: net, seed: seed}
	if net.Dropout <= 0 || net.StepDropout() {
		return m, nil
	}
	var err error
	m.exec, err = mlmodel.NewExec(backend, scope.Store(), func(_ *mlmodel.Scope, mask *Node) []*Node {
		return net.DropoutMasks(scope, mask.Graph(), dtypes.Float32, mask.Shape().Dimensions[0])
	})
	return m, err
}

// Draw sets the dropout of b, a batch of a training step, for the optimizer step step (0-based, counted over
// the whole run): b.StepMasks in model.DropoutStep mode, b.Dropout (one time-shared mask per block, drawn
// for a batch of the size of b.Mask, owned by the caller) in model.DropoutShared mode, where step is unused.
// Without dropout it leaves b as it is.
func (m *Masks) Draw(b *Batch, step int64) error {
	switch {
	case m.net.Dropout <= 0:
		return nil
	case m.net.StepDropout():
		if step < 0 {
			return fmt.Errorf("step: dropout masks of step %d", step)
		}
		b.StepMasks = &StepMasks{Seed: m.seed, Step: step}
		return nil
	case m.exec == nil:
		return fmt.Errorf("step: the mask sampler was not created by NewMasks")
	}
	ts, err := m.exec.Call(b.Mask)
	if err != nil {
		return err
	}
	b.Dropout = ts
	return nil
}

// Close frees the compiled graph.
func (m *Masks) Close() {
	if m.exec != nil {
		m.exec.Finalize()
	}
}

// StepMasks names the per-step dropout masks (model.DropoutStep) of one training step: block i's mask is
// D_i = dropmask.Mask(Seed, Step, i, p, batch, T, n_i) of shape [batch, T, OutDims_i...] (n_i the product of
// OutDims_i, p the network's Dropout), 1/(1 − p) for a kept unit and 0 for a dropped one; block i's output is
// h_i = s_i·D_i.
type StepMasks struct {
	// Seed is the run's seed.
	Seed int64
	// Step is the optimizer step, 0-based and counted over the whole run.
	Step int64
}

// Key returns the fits/dropmask key of block i's mask.
func (m StepMasks) Key(block int) uint32 { return dropmask.Key(m.Seed, m.Step, block) }

// Tensors returns the masks of net's blocks for a batch of batch examples of steps time steps, each
// [batch, steps, OutDims...] (float32), on the host; the caller owns them.
func (m StepMasks) Tensors(net model.Net, batch, steps int) ([]*tensors.Tensor, error) {
	out := make([]*tensors.Tensor, len(net.Blocks))
	for i, b := range net.Blocks {
		flat, err := dropmask.Mask(m.Seed, m.Step, i, net.Dropout, batch, steps, net.OutSize(i))
		if err != nil {
			return nil, fmt.Errorf("step: block %s: %w", b.Scope, err)
		}
		out[i] = tensors.FromFlatDataAndDimensions(flat, append([]int{batch, steps}, b.OutDims...)...)
	}
	return out, nil
}

// graphMasks returns the dropout masks of training batch b for an engine that applies them in its graphs:
// the batch's time-shared masks [batch, 1, OutDims...], or in model.DropoutStep mode the per-step masks
// [batch, T, OutDims...] of b.StepMasks, which the caller frees (owned); nil without dropout.
func graphMasks(net model.Net, b Batch) (masks []*tensors.Tensor, owned bool, err error) {
	switch {
	case net.Dropout <= 0:
		return nil, false, nil
	case net.StepDropout():
		d := b.inputDims()
		masks, err = b.StepMasks.Tensors(net, d[0], d[1])
		return masks, true, err
	}
	return b.Dropout, false, nil
}
