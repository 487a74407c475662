package bench

import (
	"errors"
	"fmt"
	"github.com/fits-snn/fits/fits/chunked"
	"math"
	"math/rand/v2"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers"
)

// Runner runs training iterations of one Spec in one Variant. Its variables (identical for every variant
// given the same Spec.Seed) live in a context scoped like model.FeedForward's: "hidden_<i>/dense",
// "hidden_<i>/neuron" and "readout/dense".
type Runner struct {
	spec    Spec
	variant Variant
	chunk   int
	backend backends.Backend
	ctx     *context.Context

	x, labels *tensors.Tensor // [batch, time, inputs] float32, [batch] int32

	// Outputs of the last Iterate.
	loss   float64
	grads  map[string]*tensors.Tensor // by variable scope and name
	spikes []*tensors.Tensor          // per hidden layer [batch, time, width], with RecordSpikes
	keep   []*tensors.Tensor          // intermediate tensors freed before the next iteration

	recordSpikes bool
	unrolled     *context.Exec
	layers       []*layerExecs
	head         *context.Exec
	zeroState    [][]*tensors.Tensor // per layer, StateComponents zero tensors [batch, width]
	starts       []*tensors.Tensor   // chunk start indices, int32 scalars
	trainable    []string            // scope/name of the trainable variables, sorted
}

// layerExecs are the compiled pieces of one hidden layer for the Stepwise and Chunked variants.
type layerExecs struct {
	dense, denseVJP *context.Exec // h -> current; (h, cot current) -> (cot h, grads)
	fwd, vjp        *context.Exec // one chunk forward; its VJP
	concat          *context.Exec // chunk outputs -> [batch, time, width]
	params          []string      // trainable neuron variables, sorted
	denseParams     []string      // trainable dense variables, sorted
}

// Options tunes a Runner.
type Options struct {
	// Chunk is the number of steps per call of the Chunked variant; 0 means
	// chunked.DefaultChunk(Spec.Time). It must divide Spec.Time. Stepwise always uses 1; Unrolled ignores it.
	Chunk int
	// RecordSpikes keeps each hidden layer's spikes of the last iteration (Spikes).
	RecordSpikes bool
}

// NewRunner validates spec, creates its variables with seeded initial values and prepares (without
// compiling) the graphs of the variant on backend. Compilation happens at the first Iterate.
func NewRunner(backend backends.Backend, spec Spec, variant Variant, opts Options) (*Runner, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if _, err := ParseVariant(string(variant)); err != nil {
		return nil, err
	}
	r := &Runner{spec: spec, variant: variant, backend: backend, recordSpikes: opts.RecordSpikes}
	switch variant {
	case Stepwise:
		r.chunk = 1
	case Chunked:
		r.chunk = opts.Chunk
		if r.chunk == 0 {
			r.chunk = chunked.DefaultChunk(spec.Time)
		}
	}
	if r.chunk < 0 || (r.chunk > 0 && spec.Time%r.chunk != 0) {
		return nil, fmt.Errorf("bench: chunk %d does not divide T = %d", r.chunk, spec.Time)
	}
	r.ctx = context.New().Checked(false) // graphs of several shapes share the variables
	r.initVariables()
	r.makeInputs()
	var err error
	if variant == Unrolled {
		err = r.prepareUnrolled()
	} else {
		err = r.prepareChunked()
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Spec returns the runner's network.
func (r *Runner) Spec() Spec { return r.spec }

// Variant returns the runner's variant.
func (r *Runner) Variant() Variant { return r.variant }

// Chunk returns the steps per call (0 for Unrolled).
func (r *Runner) Chunk() int { return r.chunk }

func layerScope(i int) string { return fmt.Sprintf("hidden_%d", i) }

// initVariables creates the dense weights (U(−1/√fanIn, 1/√fanIn), as model.FanInUniform) and zero
// biases from the seed; the neuron variables take their deterministic defaults when first used.
func (r *Runner) initVariables() {
	rng := rand.New(rand.NewPCG(r.spec.Seed, 0x5eed))
	dense := func(ctx *context.Context, in, out int) {
		w := make([]float32, in*out)
		limit := 1 / math.Sqrt(float64(in))
		for i := range w {
			w[i] = float32((2*rng.Float64() - 1) * limit)
		}
		dctx := ctx.In("dense")
		dctx.VariableWithValue("weights", tensors.FromFlatDataAndDimensions(w, in, out))
		dctx.VariableWithValue("biases", tensors.FromFlatDataAndDimensions(make([]float32, out), out))
	}
	in := r.spec.Inputs
	for i, w := range r.spec.Widths {
		dense(r.ctx.In(layerScope(i)), in, w)
		in = w
	}
	if r.spec.Classes > 0 {
		dense(r.ctx.In("readout"), in, r.spec.Classes)
	}
}

// makeInputs draws x [batch, time, inputs] and labels [batch] from the seed.
func (r *Runner) makeInputs() {
	s := r.spec
	rng := rand.New(rand.NewPCG(s.Seed, 0x1a7a))
	scale := s.InputScale
	if scale == 0 {
		scale = 1
	}
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
	for i := range labels {
		if s.Classes > 0 {
			labels[i] = int32(rng.IntN(s.Classes))
		}
	}
	r.x = tensors.FromFlatDataAndDimensions(x, s.Batch, s.Time, s.Inputs)
	r.labels = tensors.FromFlatDataAndDimensions(labels, s.Batch)
}

// loss returns the scalar loss of the network's output: the mean cross-entropy of the logits
// [batch, classes] against labels, or the sum of the last hidden layer's spikes when there is no readout.
func lossOf(logits, lastSpikes, labels *Node, classes int) *Node {
	if classes == 0 {
		return ReduceAllSum(lastSpikes)
	}
	ce := Neg(ReduceSum(Mul(OneHot(labels, classes, logits.DType()), LogSoftmax(logits, -1)), -1))
	return ReduceAllMean(ce)
}

// prepareUnrolled builds the one-graph iteration: loss, gradients of all trainable variables (sorted by
// name) and, with RecordSpikes, the hidden spikes.
func (r *Runner) prepareUnrolled() error {
	s := r.spec
	exec, err := context.NewExec(r.backend, r.ctx, func(ctx *context.Context, x, labels *Node) []*Node {
		var logits *Node
		var spikes []*Node
		if s.Classes > 0 {
			cfg := model.Config{Neuron: s.Neuron, Width: s.Widths[0], Layers: len(s.Widths), Classes: s.Classes, Readout: model.ReadoutMean}
			if !sameWidths(s.Widths) {
				panic(errors.New("bench: the unrolled classification network uses model.FeedForward, which needs equal widths"))
			}
			out := model.FeedForward(ctx, cfg, x)
			logits, spikes = out.Logits, out.Spikes
		} else {
			h := x
			for i, w := range s.Widths {
				lctx := ctx.In(layerScope(i))
				h = neuron.Layer(lctx.In("neuron"), layers.DenseWithBias(lctx, h, w), s.Neuron)
				spikes = append(spikes, h)
			}
		}
		loss := lossOf(logits, spikes[len(spikes)-1], labels, s.Classes)
		vars := chunked.TrainableIn(ctx, "")
		r.trainable = chunked.Names(vars)
		nodes := make([]*Node, len(vars))
		for i, v := range vars {
			nodes[i] = v.ValueGraph(x.Graph())
		}
		outs := append([]*Node{loss}, Gradient(loss, nodes...)...)
		if r.recordSpikes {
			outs = append(outs, spikes...)
		}
		return outs
	})
	if err != nil {
		return err
	}
	r.unrolled = exec
	return nil
}

func sameWidths(w []int) bool {
	for _, x := range w {
		if x != w[0] {
			return false
		}
	}
	return true
}

// Iterate runs one training iteration (forward, loss, backward to every trainable parameter) and waits
// for its result. The first call compiles.
func (r *Runner) Iterate() error {
	for _, t := range r.keep {
		_ = t.FinalizeAll()
	}
	r.keep = r.keep[:0]
	for _, t := range r.grads {
		_ = t.FinalizeAll()
	}
	r.grads = map[string]*tensors.Tensor{}
	r.spikes = nil
	var err error
	if r.variant == Unrolled {
		err = r.iterateUnrolled()
	} else {
		err = r.iterateChunked()
	}
	if err != nil {
		return err
	}
	if math.IsNaN(r.loss) || math.IsInf(r.loss, 0) {
		return fmt.Errorf("bench: loss is %v", r.loss)
	}
	return nil
}

func (r *Runner) iterateUnrolled() error {
	outs, err := r.unrolled.Exec(r.x, r.labels)
	if err != nil {
		return err
	}
	r.loss, err = scalar(outs[0])
	_ = outs[0].FinalizeAll()
	if err != nil {
		return err
	}
	for i, name := range r.trainable {
		r.grads[name] = outs[1+i]
	}
	if r.recordSpikes {
		r.spikes = outs[1+len(r.trainable):]
	}
	return nil
}

// scalar reads a float scalar tensor to the host (which waits for the computation).
func scalar(t *tensors.Tensor) (float64, error) {
	v, err := tensors.CopyFlatData[float32](t)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("bench: expected a scalar, got %s", t.Shape())
	}
	return float64(v[0]), nil
}

// Loss returns the loss of the last iteration.
func (r *Runner) Loss() float64 { return r.loss }

// Gradients returns the gradients of the last iteration by variable ("scope/name"), copied to the host.
func (r *Runner) Gradients() (map[string][]float32, error) {
	out := make(map[string][]float32, len(r.grads))
	for name, t := range r.grads {
		v, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, fmt.Errorf("gradient of %s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// Spikes returns each hidden layer's spikes [batch, time, width] of the last iteration, flattened, when
// the runner was created with RecordSpikes.
func (r *Runner) Spikes() ([][]float32, error) {
	if !r.recordSpikes {
		return nil, errors.New("bench: runner created without RecordSpikes")
	}
	out := make([][]float32, len(r.spikes))
	for i, t := range r.spikes {
		v, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Close frees the runner's compiled graphs and device tensors.
func (r *Runner) Close() {
	for _, t := range r.keep {
		_ = t.FinalizeAll()
	}
	for _, t := range r.grads {
		_ = t.FinalizeAll()
	}
	if r.unrolled != nil {
		r.unrolled.Finalize()
	}
	if r.head != nil {
		r.head.Finalize()
	}
	for _, l := range r.layers {
		for _, e := range []*context.Exec{l.dense, l.denseVJP, l.fwd, l.vjp, l.concat} {
			e.Finalize()
		}
	}
	r.ctx.Finalize()
}
