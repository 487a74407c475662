// Package chunked computes the loss and the gradients of a feedforward network of fits/model
// (model.FeedForward with the mean readout and no dropout) without unrolling the whole time recurrence in
// one graph. Per hidden layer it calls, from Go: a dense map over the whole sequence written as one 2-D
// matrix product; a forward graph of K neuron steps T/K times, carrying the neuron state; and, in reverse,
// the vector-Jacobian product of each chunk, recomputed from the chunk's saved starting state. A head graph
// computes the readout, the masked cross-entropy, the metrics and the cotangent of the last layer's spikes.
//
// The variables are those of model.FeedForward, read from (never created in) the given context:
// "hidden_<i>/dense/{weights,biases}", "hidden_<i>/neuron/..." and "readout/dense/{weights,biases}".
// Shapes follow the toolkit: inputs [batch, time, features], spikes [batch, time, width].
package chunked

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Spec describes the network.
type Spec struct {
	// Layers is the number of hidden layers, each Width neurons configured by Neuron.
	Layers, Width int
	Neuron        neuron.Config
	// Classes is the number of classes of the mean readout.
	Classes int
	// Chunk is the number of time steps per call; 0 means DefaultChunk(T). It must divide T.
	Chunk int
}

// DefaultChunk returns the largest divisor of steps that is at most 25.
func DefaultChunk(steps int) int {
	for k := min(25, steps); k > 1; k-- {
		if steps%k == 0 {
			return k
		}
	}
	return 1
}

// Result is the outcome of one Step.
type Result struct {
	// LossSum is the cross-entropy summed over the valid examples (mask 1); the loss whose gradients are
	// returned is LossSum / max(Σ mask, 1).
	LossSum float64
	// Correct is the number of valid examples whose largest logit is their label.
	Correct float64
	// Rates are, per hidden layer, the per-example mean firing rate (spikes per neuron per bin) summed
	// over the valid examples.
	Rates []float64
	// Grads are the gradients of the loss by variable "scope/name" (as context.Variable.ScopeAndName),
	// on the device; the caller owns them.
	Grads map[string]*tensors.Tensor
}

type layer struct {
	dense, denseVJP, fwd, vjp, concat *context.Exec
	params, denseParams               []string
}

// Executor holds the compiled pieces for one input shape; graphs compile at their first call.
type Executor struct {
	spec    Spec
	backend backends.Backend
	ctx     *context.Context
	layers  []*layer
	head    *context.Exec
	chunk   int // steps per call, fixed at the first Step
	starts  []*tensors.Tensor
	keep    []*tensors.Tensor
}

// New returns an executor for the network whose variables are in ctx (scoped as model.FeedForward's).
func New(backend backends.Backend, ctx *context.Context, spec Spec) (*Executor, error) {
	if spec.Layers < 1 || spec.Width < 1 || spec.Classes < 2 || spec.Chunk < 0 {
		return nil, fmt.Errorf("chunked: invalid spec %+v", spec)
	}
	if err := spec.Neuron.Validate(); err != nil {
		return nil, err
	}
	e := &Executor{spec: spec, backend: backend, ctx: ctx.Checked(false)}
	return e, e.build()
}

func layerScope(i int) string { return fmt.Sprintf("hidden_%d", i) }

// SliceTime returns x[:, t0:t0+k, ...] for x [batch, time, ...] and an int32 scalar t0.
func SliceTime(x, t0 *Node, k int) *Node {
	g := x.Graph()
	starts := make([]*Node, x.Rank())
	for i := range starts {
		starts[i] = Const(g, int32(0))
	}
	starts[1] = t0
	dims := x.Shape().Clone().Dimensions
	dims[1] = k
	return DynamicSlice(x, starts, dims)
}

// Dense is layers.DenseWithBias (variables "dense/weights" [in, out] and "dense/biases" [out] in ctx)
// computed as one 2-D matrix product over [batch·time, in]. Its weight gradient is then a plain
// [in, batch·time]·[batch·time, out] product; the einsum form that DenseWithBias uses on
// [batch, time, in] contracts two axes in the backward pass, which XLA CPU ran 5–20× slower (2 cores).
func Dense(ctx *context.Context, x *Node, out int) *Node {
	dctx := ctx.In("dense")
	dims := x.Shape().Dimensions
	in := dims[len(dims)-1]
	g := x.Graph()
	w := dctx.VariableWithShape("weights", shapes.Make(x.DType(), in, out)).ValueGraph(g)
	b := dctx.VariableWithShape("biases", shapes.Make(x.DType(), out)).ValueGraph(g)
	rows := x.Shape().Size() / in
	y := Add(Dot(Reshape(x, rows, in), w), Reshape(b, 1, out))
	outDims := append(append([]int{}, dims[:len(dims)-1]...), out)
	return Reshape(y, outDims...)
}

// TrainableIn returns the trainable variables of ctx whose scope is scope or below it, sorted by
// ScopeAndName.
func TrainableIn(ctx *context.Context, scope string) []*context.Variable {
	var vars []*context.Variable
	for v := range ctx.IterVariables() {
		if !v.Trainable {
			continue
		}
		if scope != "" && v.Scope() != scope && !strings.HasPrefix(v.Scope(), scope+context.ScopeSeparator) {
			continue
		}
		vars = append(vars, v)
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].ScopeAndName() < vars[j].ScopeAndName() })
	return vars
}

// Names returns the variables' ScopeAndName, in order.
func Names(vars []*context.Variable) []string {
	out := make([]string, len(vars))
	for i, v := range vars {
		out[i] = v.ScopeAndName()
	}
	return out
}

func (e *Executor) build() error {
	s := e.spec
	n := neuron.StateComponents(s.Neuron)
	for i := range s.Layers {
		i := i
		w := s.Width
		l := &layer{}
		scope := layerScope(i)
		var err error
		// h [batch, time, in] -> current [batch, time, w].
		l.dense, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, h *Node) *Node {
			return Dense(ctx.Checked(false).In(scope), h, w)
		})
		if err != nil {
			return err
		}
		// (h, cot current) -> dense gradients..., then cot h [batch, time, in] when i > 0.
		l.denseVJP, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, h, cot *Node) []*Node {
			ctx = ctx.Checked(false)
			lctx := ctx.In(scope)
			cur := Dense(lctx, h, w)
			vars := TrainableIn(ctx, lctx.In("dense").Scope())
			l.denseParams = Names(vars)
			wrt := make([]*Node, 0, len(vars))
			for _, v := range vars {
				wrt = append(wrt, v.ValueGraph(h.Graph()))
			}
			grads := Gradient(ReduceAllSum(Mul(cur, cot)), wrt...)
			if i > 0 {
				// cot h = cot·Wᵀ with Wᵀ materialized (the autodiff form ran far slower on XLA CPU).
				wT := Transpose(lctx.In("dense").GetVariable("weights").ValueGraph(h.Graph()), 0, 1)
				dims := h.Shape().Dimensions
				rows := h.Shape().Size() / dims[len(dims)-1]
				grads = append(grads, Reshape(Dot(Reshape(cot, rows, w), wT), dims...))
			}
			return grads
		})
		if err != nil {
			return err
		}
		// [current [batch, T, w], t0, state...] -> [spikes [batch, K, w], final state...].
		l.fwd, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
			cur := SliceTime(in[0], in[1], e.chunk)
			spikes, final := neuron.LayerFrom(ctx.Checked(false).In(scope).In("neuron"), cur, s.Neuron, in[2:])
			return append([]*Node{spikes}, final...)
		})
		if err != nil {
			return err
		}
		// [current, t0, cot spikes [batch, T, w], state (n), cot final state (n), accumulators] ->
		// [cot state (n), cot current [batch, K, w], accumulators + this chunk's neuron gradients].
		l.vjp, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
			ctx = ctx.Checked(false)
			g := in[0].Graph()
			cur := SliceTime(in[0], in[1], e.chunk)
			cotSpikes := SliceTime(in[2], in[1], e.chunk)
			state := in[3 : 3+n]
			cotFinal := in[3+n : 3+2*n]
			acc := in[3+2*n:]
			nctx := ctx.In(scope).In("neuron")
			spikes, final := neuron.LayerFrom(nctx, cur, s.Neuron, state)
			obj := ReduceAllSum(Mul(spikes, cotSpikes))
			for j := range final {
				obj = Add(obj, ReduceAllSum(Mul(final[j], cotFinal[j])))
			}
			vars := TrainableIn(ctx, nctx.Scope())
			l.params = Names(vars)
			wrt := append(append([]*Node{}, state...), cur)
			for _, v := range vars {
				wrt = append(wrt, v.ValueGraph(g))
			}
			grads := Gradient(obj, wrt...)
			outs := grads[:n+1]
			for j := range vars {
				outs = append(outs, Add(acc[j], grads[n+1+j]))
			}
			return outs
		})
		if err != nil {
			return err
		}
		l.concat, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, parts []*Node) *Node {
			if len(parts) == 1 {
				return Identity(parts[0])
			}
			return Concatenate(parts, 1)
		})
		if err != nil {
			return err
		}
		e.layers = append(e.layers, l)
	}
	var err error
	// [spikes of each layer [batch, T, w]..., labels [batch] int32, mask [batch]] ->
	// [loss sum, correct, rates (one per layer), cot last spikes, readout gradients...].
	e.head, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
		ctx = ctx.Checked(false)
		spikes := in[:s.Layers]
		labels, mask := in[s.Layers], in[s.Layers+1]
		h := spikes[len(spikes)-1]
		g := h.Graph()
		rctx := ctx.In("readout")
		logits := Dense(rctx, ReduceMean(h, 1), s.Classes) // [batch, classes]
		ce := Neg(ReduceSum(Mul(OneHot(labels, s.Classes, logits.DType()), LogSoftmax(logits, -1)), -1))
		lossSum := ReduceAllSum(Mul(ce, mask))
		loss := Div(lossSum, MaxScalar(ReduceAllSum(mask), 1))
		hit := ConvertDType(Equal(ArgMax(logits, -1, dtypes.Int32), labels), mask.DType())
		outs := []*Node{lossSum, ReduceAllSum(Mul(hit, mask))}
		for _, sp := range spikes {
			outs = append(outs, ReduceAllSum(Mul(ReduceMean(sp, 1, 2), mask)))
		}
		vars := TrainableIn(ctx, rctx.In("dense").Scope())
		wrt := []*Node{h}
		for _, v := range vars {
			wrt = append(wrt, v.ValueGraph(g))
		}
		return append(outs, Gradient(loss, wrt...)...)
	})
	return err
}

// ReadoutParams returns the readout's trainable variables, sorted, in the order Step reads the head's
// gradients.
func (e *Executor) readoutParams() []string {
	return Names(TrainableIn(e.ctx, e.ctx.In("readout").In("dense").Scope()))
}

func asAny(ts []*tensors.Tensor) []any {
	out := make([]any, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

func scalar(t *tensors.Tensor) (float64, error) {
	v, err := tensors.CopyFlatData[float32](t)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("chunked: expected a scalar, got %s", t.Shape())
	}
	return float64(v[0]), nil
}

// Step runs the forward and backward pass of one batch: x [batch, time, features] float32, labels [batch]
// int32, mask [batch] float32 (1 for real examples, 0 for padding). The variables must exist in the
// context. It returns the metrics and the gradients of every trainable variable of the network.
func (e *Executor) Step(x, labels, mask *tensors.Tensor) (res Result, err error) {
	for _, t := range e.keep {
		_ = t.FinalizeAll()
	}
	e.keep = e.keep[:0]
	s := e.spec
	dims := x.Shape().Dimensions
	if len(dims) != 3 {
		return res, fmt.Errorf("chunked: input must be [batch, time, features], got %s", x.Shape())
	}
	batch, steps := dims[0], dims[1]
	if e.chunk == 0 {
		e.chunk = s.Chunk
		if e.chunk == 0 {
			e.chunk = DefaultChunk(steps)
		}
		if steps%e.chunk != 0 {
			return res, fmt.Errorf("chunked: chunk %d does not divide T = %d", e.chunk, steps)
		}
		for c := range steps / e.chunk {
			e.starts = append(e.starts, tensors.FromScalar(int32(c*e.chunk)))
		}
	} else if len(e.starts)*e.chunk != steps {
		return res, fmt.Errorf("chunked: T = %d differs from the first step's %d", steps, len(e.starts)*e.chunk)
	}
	chunks := len(e.starts)
	n := neuron.StateComponents(s.Neuron)
	zero := func() []*tensors.Tensor {
		z := make([]*tensors.Tensor, n)
		for j := range z {
			z[j] = tensors.FromShape(shapes.Make(dtypes.Float32, batch, s.Width))
			e.keep = append(e.keep, z[j])
		}
		return z
	}
	hs := []*tensors.Tensor{x}
	curs := make([]*tensors.Tensor, s.Layers)
	saved := make([][][]*tensors.Tensor, s.Layers) // [layer][chunk] starting state
	for i, l := range e.layers {
		outs, err := l.dense.Exec(hs[i])
		if err != nil {
			return res, err
		}
		curs[i] = outs[0]
		e.keep = append(e.keep, outs[0])
		state := zero()
		parts := make([]any, chunks)
		saved[i] = make([][]*tensors.Tensor, chunks)
		for c := range chunks {
			outs, err := l.fwd.Exec(append([]any{curs[i], e.starts[c]}, asAny(state)...)...)
			if err != nil {
				return res, err
			}
			saved[i][c] = state
			parts[c] = outs[0]
			state = outs[1:]
			e.keep = append(e.keep, outs...)
		}
		outs, err = l.concat.Exec(parts...)
		if err != nil {
			return res, err
		}
		e.keep = append(e.keep, outs[0])
		hs = append(hs, outs[0])
	}
	outs, err := e.head.Exec(append(asAny(hs[1:]), labels, mask)...)
	if err != nil {
		return res, err
	}
	vals := make([]float64, 2+s.Layers)
	for j := range vals {
		if vals[j], err = scalar(outs[j]); err != nil {
			return res, err
		}
		_ = outs[j].FinalizeAll()
	}
	res.LossSum, res.Correct, res.Rates = vals[0], vals[1], vals[2:]
	res.Grads = map[string]*tensors.Tensor{}
	defer func() {
		if err != nil {
			for _, t := range res.Grads {
				_ = t.FinalizeAll()
			}
			res.Grads = nil
		}
	}()
	cot := outs[len(vals)]
	e.keep = append(e.keep, cot)
	for j, name := range e.readoutParams() {
		res.Grads[name] = outs[len(vals)+1+j]
	}
	for i := s.Layers - 1; i >= 0; i-- {
		l := e.layers[i]
		vars := TrainableIn(e.ctx, e.ctx.In(layerScope(i)).In("neuron").Scope())
		acc := make([]*tensors.Tensor, len(vars))
		for j, v := range vars {
			acc[j] = tensors.FromShape(v.Shape())
		}
		cotState := zero()
		cotParts := make([]any, chunks)
		for c := chunks - 1; c >= 0; c-- {
			args := append([]any{curs[i], e.starts[c], cot}, asAny(saved[i][c])...)
			args = append(args, asAny(cotState)...)
			args = append(args, asAny(acc)...)
			outs, err := l.vjp.Exec(args...)
			if err != nil {
				return res, err
			}
			for _, t := range acc {
				_ = t.FinalizeAll()
			}
			cotState = outs[:n]
			cotParts[c] = outs[n]
			acc = outs[n+1:]
			e.keep = append(e.keep, outs[:n+1]...)
		}
		for j, name := range l.params {
			res.Grads[name] = acc[j]
		}
		outs, err := l.concat.Exec(cotParts...)
		if err != nil {
			return res, err
		}
		e.keep = append(e.keep, outs[0])
		outs, err = l.denseVJP.Exec(hs[i], outs[0])
		if err != nil {
			return res, err
		}
		for j, name := range l.denseParams {
			res.Grads[name] = outs[j]
		}
		if i > 0 {
			cot = outs[len(l.denseParams)]
			e.keep = append(e.keep, cot)
		}
	}
	return res, nil
}

// Execs returns the executor's compiled graphs (for timing by the caller).
func (e *Executor) Execs() []*context.Exec {
	out := []*context.Exec{e.head}
	for _, l := range e.layers {
		out = append(out, l.dense, l.denseVJP, l.fwd, l.vjp, l.concat)
	}
	return out
}

// Close frees the executor's compiled graphs and intermediate tensors (not the context's variables).
func (e *Executor) Close() {
	for _, t := range e.keep {
		_ = t.FinalizeAll()
	}
	e.keep = nil
	for _, ex := range e.Execs() {
		ex.Finalize()
	}
}
