package bench

import (
	"cmp"
	"fmt"
	"math/rand/v2"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/step"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Runner runs training iterations (forward and backward to every gradient, no optimizer update) of one
// Spec with one engine of package fits/step: the same engine, network (model.Net) and variable
// initialization that training uses. It builds no graph of its own.
type Runner struct {
	spec   Spec
	chunk  int
	engine step.Engine
	batch  step.Batch

	// Outputs of the last Iterate.
	loss  float64
	grads map[string]*tensors.Tensor // by variable scope and name
}

// Options tunes a Runner.
type Options struct {
	// Chunk is the number of steps per call of the Chunked variant; 0 means step.DefaultChunk(Spec.Time).
	// It must divide Spec.Time. Stepwise always uses 1; Unrolled ignores it.
	Chunk int
}

// Net returns the network of a Spec: one dense block "hidden_<i>" per width, per-step dropout of
// probability Dropout, and the readout (the sum over time by default) with the cross-entropy (Classes > 0)
// or the sum of the last layer's spikes as the loss (Classes = 0).
func (s Spec) Net() model.Net {
	readout := cmp.Or(s.Readout, model.ReadoutSum)
	net := model.Net{InputDims: []int{s.Inputs}, Classes: s.Classes, Readout: readout, Dropout: s.Dropout,
		DropoutMode: model.DropoutStep}
	for i, w := range s.Widths {
		net.Blocks = append(net.Blocks, model.DenseBlock(fmt.Sprintf("hidden_%d", i), w, s.Neuron))
	}
	return net
}

// NewRunner validates spec, creates its variables (as training does: model.FanInUniform weights, zero
// biases, the neurons' deterministic defaults; the random generator seeded by Spec.Seed) and the engine
// of the variant on backend. Compilation happens at the first Iterate.
func NewRunner(backend compute.Backend, spec Spec, variant Variant, opts Options) (*Runner, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if _, err := ParseVariant(string(variant)); err != nil {
		return nil, err
	}
	r := &Runner{spec: spec}
	switch variant {
	case Stepwise:
		r.chunk = 1
	case Chunked, Scan:
		r.chunk = opts.Chunk
		if r.chunk == 0 {
			r.chunk = step.DefaultChunk(spec.Time)
		}
	case Loop:
		r.chunk = spec.Time // one loop graph of T steps per layer and direction
	}
	if r.chunk < 0 || (r.chunk > 0 && spec.Time%r.chunk != 0) {
		return nil, fmt.Errorf("bench: chunk %d does not divide T = %d", r.chunk, spec.Time)
	}
	scope := mlmodel.NewStore().RootScope()
	if err := scope.Store().SetRNGStateFromSeed(int64(spec.Seed)); err != nil {
		return nil, err
	}
	net := spec.Net()
	if err := step.InitVariables(backend, scope, net); err != nil {
		return nil, err
	}
	var err error
	if r.engine, err = step.New(string(variant), backend, scope, net, step.Options{Chunk: r.chunk}); err != nil {
		return nil, err
	}
	r.makeInputs()
	return r, nil
}

// Chunk returns the steps per call: 1 for Stepwise, K for Chunked and Scan, T for Loop, 0 for Unrolled and
// Fused.
func (r *Runner) Chunk() int { return r.chunk }

// makeInputs draws x [batch, time, inputs] and labels [batch] from the seed; every example is valid.
func (r *Runner) makeInputs() {
	s := r.spec
	rng := rand.New(rand.NewPCG(s.Seed, 0x1a7a))
	scale := cmp.Or(s.InputScale, 1)
	x := make([]float32, s.Batch*s.Time*s.Inputs)
	for i := range x {
		if s.InputRate > 0 {
			if rng.Float64() < s.InputRate {
				x[i] = float32(scale)
			}
		} else {
			x[i] = float32(scale * rng.NormFloat64())
		}
	}
	labels := make([]int32, s.Batch)
	mask := make([]float32, s.Batch)
	for i := range labels {
		if s.Classes > 0 {
			labels[i] = int32(rng.IntN(s.Classes))
		}
		mask[i] = 1
	}
	r.batch = step.Batch{
		X:      tensors.FromFlatDataAndDimensions(x, s.Batch, s.Time, s.Inputs),
		Labels: tensors.FromFlatDataAndDimensions(labels, s.Batch),
		Mask:   tensors.FromFlatDataAndDimensions(mask, s.Batch),
	}
}

// Iterate runs one training iteration: the engine's forward and backward pass to the gradients of every
// trainable variable. The loss is the batch mean of the cross-entropy, or of the summed spikes.
func (r *Runner) Iterate() error {
	r.freeGrads()
	if r.spec.Dropout > 0 {
		// The same masks every iteration (the engine still draws them in every call), so that iterations
		// repeat exactly.
		r.batch.StepMasks = &step.StepMasks{Seed: int64(r.spec.Seed)}
	}
	m, grads, err := r.engine.Gradients(r.batch)
	if err != nil {
		return err
	}
	r.loss = m.LossSum / float64(r.spec.Batch)
	r.grads = grads
	return nil
}

func (r *Runner) freeGrads() {
	for _, g := range r.grads {
		g.MustFinalizeAll()
	}
	r.grads = nil
}

// Loss returns the loss of the last Iterate.
func (r *Runner) Loss() float64 { return r.loss }

// Gradients returns the gradients of the last Iterate, by variable scope and name, copied to the host.
func (r *Runner) Gradients() (map[string][]float32, error) {
	out := make(map[string][]float32, len(r.grads))
	for name, g := range r.grads {
		v, err := tensors.CopyFlatData[float32](g)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// CompileSeconds is the time the engine spent building and compiling its graphs so far.
func (r *Runner) CompileSeconds() float64 { return r.engine.CompileSeconds() }

// Close frees the engine's graphs and tensors.
func (r *Runner) Close() {
	r.freeGrads()
	r.engine.Close()
	for _, t := range []*tensors.Tensor{r.batch.X, r.batch.Labels, r.batch.Mask} {
		t.MustFinalizeAll()
	}
}
