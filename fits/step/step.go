// Package step computes the loss and the gradients of one training step, and evaluates, for a network
// described as data (model.Net), with interchangeable engines that all give the same numbers up to float32
// rounding: fused (the default on CPU, Default: each layer's recurrence as one call of the host kernel of
// package fits/fused), chunked (the default on other backends: the recurrence in chunks of K steps called
// from Go), loop (the recurrence and its hand-derived adjoint as two XLA While loops; written for GPUs),
// stepwise (chunked with K = 1), scan (chunked with the hand-derived adjoint of package fits/scan) and
// unrolled (the whole network in one graph, differentiated by autodiff: the oracle the tests hold the others
// to). docs/engines.md compares them.
//
// Use: create the network's variables (InitVariables), an engine (New; the name "" picks Default) and an
// Optimizer (Adam with a cosine-annealed learning rate and the frequency guard, the released recipe), then
// run Engine.Gradients and Optimizer.Apply in your own loop (Example); package fits/train is that loop with
// checkpoints and the paper's protocols. Dropout masks are inputs of a step, drawn once per step by Masks
// (per step from package fits/dropmask, or time-shared), so every engine applies the same masks in its
// forward pass and in the recomputed backward. Shapes: inputs [batch, time, features...] float32, labels
// [batch] int32, example mask [batch] float32 (1 for real examples, 0 for padding). Measured times are in
// docs/performance.md.
package step

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fits-snn/fits/fits/events"
	"github.com/fits-snn/fits/fits/model"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Default returns the engine New builds for the name "", chosen by measurement on each kind of backend:
//   - Fused where the backend's device memory is host memory (backend.HasSharedBuffers: XLA CPU, SimpleGo),
//     so the host kernel reads and writes the device's tensors in place (measured against chunked in
//     docs/performance.md);
//   - Loop on the other XLA backends (CUDA), where a host kernel would copy the activations to the host and
//     back on every call: the time loop and its adjoint stay on the device, and compile time does not depend
//     on T. On an NVIDIA H200 it was faster than chunked in every cell measured: the 12 kernel-table cells
//     (1.4-4.5x), the Open Neuromorphic shape at n = 4 096 and 16 384, and a whole SHD epoch (3.6 s against
//     5.6 s), docs/performance.md, section "CUDA";
//   - Chunked elsewhere (a backend without While loops or shared memory).
func Default(backend compute.Backend) string {
	switch {
	case backend == nil:
		return Chunked
	case backend.HasSharedBuffers():
		return Fused
	case backend.Name() == "xla":
		return Loop
	}
	return Chunked
}

// DefaultChunkMax bounds the default chunk length: DefaultChunk(T) is the largest divisor of T that is at
// most DefaultChunkMax (5 for T = 250, 100 and 50, 4 for T = 784 and 28).
//
// Longer chunks compile longer and build larger graphs per call, shorter ones pay the per-call overhead
// more often; 5 is the length that was best or level at the measured cells on XLA CPU (docs/performance.md,
// section "Chunk length"). On CUDA it has not been timed (Options.Chunk and `fits train --chunk` set it).
const DefaultChunkMax = 5

// DefaultChunk returns the largest divisor of steps that is at most DefaultChunkMax.
func DefaultChunk(steps int) int {
	for k := min(DefaultChunkMax, steps); k > 1; k-- {
		if steps%k == 0 {
			return k
		}
	}
	return 1
}

// Batch is one batch of examples.
type Batch struct {
	// X is the input [batch, time, InputDims...] (float32). It may be nil when Events holds the input and
	// the engine takes it that way (AcceptsInputEvents).
	X *tensors.Tensor
	// Events is the input as events instead of values, or nil: the nonzero entries of each of its
	// batch·time rows of features (InputEvents). Set it without X for an engine that AcceptsInputEvents, so
	// that no dense [batch, time, features] array is made (the whole point for spike inputs).
	Events *InputEvents
	// Labels are the classes [batch] (int32); ignored without a classifier.
	Labels *tensors.Tensor
	// Mask is 1 for real examples and 0 for padding, [batch] (float32).
	Mask *tensors.Tensor
	// Dropout holds one time-shared mask per block, [batch, 1, OutDims...] (Masks.Draw), for a training
	// step of a network with dropout in model.DropoutShared mode; nil otherwise (evaluation, no dropout, or
	// per-step dropout).
	Dropout []*tensors.Tensor
	// StepMasks names the per-step masks of a training step of a network with dropout in model.DropoutStep
	// mode (Masks.Draw); nil otherwise.
	StepMasks *StepMasks
}

// Metrics are a step's values summed over the batch's valid examples.
type Metrics struct {
	// LossSum is the loss summed over the valid examples; the loss whose gradients Gradients returns is
	// LossSum / max(Σ mask, 1).
	LossSum float64
	// Correct is the number of valid examples whose largest logit is their label.
	Correct float64
	// Rates are, per block, the per-example mean firing rate (spikes per neuron per bin) summed over the
	// valid examples.
	Rates []float64
}

// Engine computes a network's training gradients and evaluates it. The network's variables must exist in
// the engine's store (InitVariables creates them); engines read them and never create them.
type Engine interface {
	// Name is the engine's name (Names).
	Name() string
	// Gradients runs the forward and backward pass of one batch in training mode and returns the metrics
	// and the gradient of the mean loss for every trainable variable, by model.Variable.Path (GoMLX),
	// on the device; the caller owns (and finalizes) the gradient tensors.
	Gradients(b Batch) (Metrics, map[string]*tensors.Tensor, error)
	// Evaluate runs the forward pass of one batch in inference mode (no dropout).
	Evaluate(b Batch) (Metrics, error)
	// CompileSeconds estimates the time spent building and compiling its graphs so far.
	CompileSeconds() float64
	// Close frees the compiled graphs and intermediate tensors (not the store's variables).
	Close()
}

// Options configure an engine.
type Options struct {
	// Chunk is the number of time steps per call of the chunked engine; 0 means DefaultChunk(T). It must
	// divide T. The stepwise engine always uses 1; the unrolled engine ignores it.
	Chunk int
}

// UnsupportedError reports an engine that cannot run on the backend it was asked for (the caller has to
// choose another engine or backend).
type UnsupportedError struct{ Err error }

func (e *UnsupportedError) Error() string { return e.Err.Error() }

func (e *UnsupportedError) Unwrap() error { return e.Err }

// New returns the engine name ("" for Default(backend)) for the network net whose variables live in scope
// (the network's scope, as given to model.Net.Forward).
func New(name string, backend compute.Backend, scope *mlmodel.Scope, net model.Net, opts Options) (Engine, error) {
	if backend == nil {
		return nil, fmt.Errorf("step: no backend")
	}
	if err := net.Validate(); err != nil {
		return nil, err
	}
	if opts.Chunk < 0 {
		return nil, fmt.Errorf("step: chunk length %d", opts.Chunk)
	}
	if name == "" {
		name = Default(backend)
	}
	r, err := lookup(name)
	if err != nil {
		return nil, err
	}
	if r.needs != nil {
		if err := r.needs(backend, net); err != nil {
			return nil, err
		}
	}
	return r.build(backend, scope, net, opts)
}

// CheckSupported returns an *UnsupportedError when engine name cannot run net on backend, as New would,
// without building anything: callers that run the engine later (in another process) check it first.
func CheckSupported(name string, backend compute.Backend, net model.Net) error {
	if name == "" {
		name = Default(backend)
	}
	r, err := lookup(name)
	if err != nil || r.needs == nil {
		return err
	}
	return r.needs(backend, net)
}

// TrainableIn returns the trainable variables of scope whose scope is scope or below it, sorted by
// Path ("" means every scope).
func TrainableIn(store mlmodel.StoreProvider, scope string) []*mlmodel.Variable {
	var vars []*mlmodel.Variable
	for v := range store.Store().IterVariables() {
		if v.Trainable && inScope(v.Scope(), scope) {
			vars = append(vars, v)
		}
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].Path() < vars[j].Path() })
	return vars
}

func inScope(varScope, scope string) bool {
	return scope == "" || scope == mlmodel.RootScopePath || varScope == scope ||
		strings.HasPrefix(varScope, scope+mlmodel.ScopeSeparator)
}

// Names returns the variables' paths, in order.
func names(vars []*mlmodel.Variable) []string {
	out := make([]string, len(vars))
	for i, v := range vars {
		out[i] = v.Path()
	}
	return out
}

// timer records the wall time of each call of its executors and, separately, the time spent building and
// compiling each executor's graph for each new set of argument shapes (Exec.Compile, timed before the call
// that needs it). The zero value is ready to use.
type timer struct {
	calls    map[*mlmodel.Exec][]time.Duration
	compiled map[*mlmodel.Exec][]compilation
}

// compilation is one compilation of an executor: the argument shapes it was compiled for and how long it took.
type compilation struct {
	shapes []shapes.Shape
	took   time.Duration
}

// exec calls e and records the call's wall time, compiling its graph first (timed on its own) when the
// arguments' shapes are new to it.
func (t *timer) exec(e *mlmodel.Exec, args ...any) ([]*tensors.Tensor, error) {
	if t.calls == nil {
		t.calls, t.compiled = map[*mlmodel.Exec][]time.Duration{}, map[*mlmodel.Exec][]compilation{}
	}
	if argShapes, ok := shapesOf(args); ok && !slices.ContainsFunc(t.compiled[e], func(c compilation) bool {
		return slices.EqualFunc(c.shapes, argShapes, shapes.Shape.Equal)
	}) {
		start := time.Now()
		if _, err := e.Compile(argShapes...); err != nil {
			return nil, err
		}
		t.compiled[e] = append(t.compiled[e], compilation{argShapes, time.Since(start)})
	}
	start := time.Now()
	outs, err := e.Call(args...)
	t.calls[e] = append(t.calls[e], time.Since(start))
	return outs, err
}

// shapesOf returns the shapes of args when every one is a tensor.
func shapesOf(args []any) ([]shapes.Shape, bool) {
	out := make([]shapes.Shape, len(args))
	for i, a := range args {
		x, ok := a.(*tensors.Tensor)
		if !ok || x == nil {
			return nil, false
		}
		out[i] = x.Shape()
	}
	return out, true
}

// compileSeconds returns the compile time: the timed compilations, plus, for an executor whose graph was
// compiled inside a call (arguments that are not all tensors), its first call's time minus the median of
// the later calls (the first call alone when there is no later one).
func (t *timer) compileSeconds() float64 {
	total := 0.0
	for _, cs := range t.compiled {
		for _, c := range cs {
			total += c.took.Seconds()
		}
	}
	for e, d := range t.calls {
		if len(d) == 0 || len(t.compiled[e]) > 0 {
			continue
		}
		first := d[0]
		if len(d) > 1 {
			rest := slices.Clone(d[1:])
			slices.Sort(rest)
			first -= rest[len(rest)/2]
		}
		total += max(first, 0).Seconds()
	}
	return total
}

// scalars copies float32 scalar outputs to float64 and finalizes them.
func scalars(ts []*tensors.Tensor) ([]float64, error) {
	out := make([]float64, len(ts))
	for i, t := range ts {
		v, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		if len(v) != 1 {
			return nil, fmt.Errorf("step: expected a scalar, got %s", t.Shape())
		}
		out[i] = float64(v[0])
		t.MustFinalizeAll()
	}
	return out, nil
}

// metrics builds Metrics from [lossSum, correct, rates...].
func metrics(vals []float64) Metrics {
	return Metrics{LossSum: vals[0], Correct: vals[1], Rates: vals[2:]}
}

func asAny(ts []*tensors.Tensor) []any {
	out := make([]any, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

// freeAll finalizes ts.
func freeAll(ts []*tensors.Tensor) {
	for _, t := range ts {
		if t != nil {
			_ = t.FinalizeAll()
		}
	}
}

// arena collects a call's intermediate tensors, freed at the end of the call.
type arena []*tensors.Tensor

func (a *arena) keep(ts ...*tensors.Tensor) { *a = append(*a, ts...) }

func (a *arena) free() {
	for _, t := range *a {
		_ = t.FinalizeAll()
	}
	*a = (*a)[:0]
}

// noLabels stands for the labels of a network without a classifier (whose graphs ignore them).
var noLabels = tensors.FromScalar(int32(0))

// labelsOf returns the batch's labels, or noLabels when it has none.
func labelsOf(b Batch) *tensors.Tensor {
	if b.Labels == nil {
		return noLabels
	}
	return b.Labels
}

// InputEvents is a batch's input [batch, time, InputDims...] given as the events of its batch·time rows:
// the positions and values of each row's nonzero features, as events.Record writes them (its Shape: Rows =
// batch·time, In = the product of InputDims, Out = the first block's output width).
type InputEvents struct {
	Dims []int // [batch, time, InputDims...]
	Rec  events.Recorded
}

// AcceptsInputEvents reports whether engine e runs a batch given as Events without X: the fused engine on a
// network whose first block is dense (its event-driven synapse reads the events; when they are too dense
// for it, the engine expands them).
func AcceptsInputEvents(e Engine) bool {
	c, ok := e.(*chunked)
	return ok && len(c.blocks) > 0 && c.eventCapable(c.blocks[0])
}

// inputDims returns the dimensions of b's input, [batch, time, InputDims...].
func (b Batch) inputDims() []int {
	if b.X == nil && b.Events != nil {
		return b.Events.Dims
	}
	return b.X.Shape().Dimensions
}

// checkDenseBatch is checkBatch for an engine that reads the input as X only.
func checkDenseBatch(net model.Net, b Batch, training bool) error {
	if b.X == nil && b.Events != nil {
		return fmt.Errorf("step: this engine needs the batch's input as X, not as events")
	}
	return checkBatch(net, b, training)
}

// checkBatch validates a batch against the network.
func checkBatch(net model.Net, b Batch, training bool) error {
	if (b.X == nil && b.Events == nil) || b.Mask == nil || (net.Classes > 0 && b.Labels == nil) {
		return fmt.Errorf("step: a batch needs inputs, a mask and (with a classifier) labels")
	}
	dims := b.inputDims()
	if len(dims) != 2+len(net.InputDims) || !slices.Equal(dims[2:], net.InputDims) {
		return fmt.Errorf("step: input %v does not match [batch, time, %v]", dims, net.InputDims)
	}
	if b.X == nil {
		rs := b.Events.Rec.Shape()
		if in := shapes.Make(dtypes.Float32, dims[2:]...).Size(); rs.Rows != dims[0]*dims[1] || rs.In != in {
			return fmt.Errorf("step: input events of shape %+v for an input %v", rs, dims)
		}
	}
	if training && net.StepDropout() && b.StepMasks == nil {
		return fmt.Errorf("step: a training step with per-step dropout needs its StepMasks (Masks.Draw)")
	}
	if training && net.Dropout > 0 && !net.StepDropout() && len(b.Dropout) != len(net.Blocks) {
		return fmt.Errorf("step: a training step with time-shared dropout needs %d masks, got %d", len(net.Blocks), len(b.Dropout))
	}
	return nil
}
