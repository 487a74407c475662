// Package scanstep is package step's chunked engine (a model.Net trained with the neuron recurrence called
// from Go in chunks of K steps) with each chunk's vector-Jacobian product taken from the hand-derived
// adjoint of package scan instead of GoMLX autodiff of the K unrolled steps. It implements step.Engine and
// gives the same numbers up to float32 rounding, so the two can be compared and timed side by side.
//
// Per spiking block it calls, from Go: the synapse over the whole sequence; a forward graph of K steps
// (scan.Forward) T/K times, keeping each chunk's starting state and, unless Options.Recompute, scan's
// saved tensor; and, in reverse, scan.Backward of each chunk, which returns the cotangents of the chunk's
// starting state and current and of the coefficients (shape P). The coefficient cotangents are summed
// over the chunks on the device and mapped once per block to the neurons' trainable variables
// (scan.VariableGrads of neuron.LayerCoefficients). The synapses, the join of the chunks, dropout and the
// head are package step's.
package scanstep

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/scan"
	"github.com/fits-snn/fits/fits/step"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Name is the engine's name.
const Name = "scan"

// Options configure the engine.
type Options struct {
	// Chunk is the number of time steps per call; 0 means step.DefaultChunk(T). It must divide T.
	Chunk int
	// Recompute makes the forward chunks keep nothing but their starting state and each backward chunk
	// recompute its forward values from it (scan.Backward with saved = nil), as package step's chunked
	// engine does. Without it the forward chunks keep scan.Forward's saved tensor
	// ([K, components+1, batch, OutDims...] per chunk and block) until the backward pass.
	Recompute bool
}

// engine runs each block's recurrence K steps per graph call with scan's forward and adjoint.
type engine struct {
	net         model.Net
	ctx         *context.Context
	opts        Options
	blocks      []*blockExecs
	head, score *context.Exec
	readout     []string
	k           int
	starts      []*tensors.Tensor
	times       timer
	mem         arena
	withDropout bool
}

// blockExecs are the compiled pieces of one block.
type blockExecs struct {
	b          model.Block
	states     int
	coefShapes []shapes.Shape      // the coefficient cotangents, in flatten's order
	saved      int                 // number of tensors each forward chunk keeps for its backward chunk
	synapse    *context.Exec       // h -> current [batch, T, out...]
	synapseVJP *context.Exec       // (h, cot current) -> synapse gradients..., cot h (blocks after the first)
	forward    *context.Exec       // (current, t0, state...) -> (spikes [batch, K, out...], final state..., saved...)
	vjp        *context.Exec       // (current, t0, cot h, [dropout mask], state..., saved..., cot final..., acc...) -> (cot state..., cot current chunk, acc...)
	varGrads   *context.Exec       // (coefficient cotangents...) -> neuron variable gradients...
	join       *context.Exec       // (example mask, [dropout mask], spike chunks...) -> (h = spikes·mask, rate sum)
	joinEval   *context.Exec       // (example mask, spike chunks...) -> (spikes, rate sum)
	concat     *context.Exec       // (chunks...) -> concatenation along time
	synParams  []string            // the synapse's trainable variables, in synapseVJP's output order
	neurParams []*context.Variable // the neurons' trainable variables, in varGrads' output order
	paramShape []int               // P
}

// New returns the engine for the network net whose variables live in ctx (the network's scope, as given to
// model.Net.Forward; step.InitVariables creates them).
func New(backend backends.Backend, ctx *context.Context, net model.Net, opts Options) (step.Engine, error) {
	if backend == nil {
		return nil, fmt.Errorf("scanstep: no backend")
	}
	if err := net.Validate(); err != nil {
		return nil, err
	}
	if opts.Chunk < 0 {
		return nil, fmt.Errorf("scanstep: chunk length %d", opts.Chunk)
	}
	e := &engine{net: net, ctx: ctx.Checked(false), opts: opts, times: timer{}, withDropout: net.Dropout > 0}
	for i, b := range net.Blocks {
		be, err := e.buildBlock(backend, i, b)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.blocks = append(e.blocks, be)
	}
	var err error
	e.head, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, h, labels, mask *Node) []*Node {
		ctx.SetTraining(h.Graph(), true)
		lossSum, correct := net.Loss(net.Head(ctx, h), h, labels, mask)
		loss := Div(lossSum, MaxScalar(ReduceAllSum(mask), 1))
		vars := step.TrainableIn(ctx, ctx.In(model.ReadoutScope).Scope())
		e.readout = names(vars)
		wrt := []*Node{h}
		for _, v := range vars {
			wrt = append(wrt, v.ValueGraph(h.Graph()))
		}
		return append([]*Node{lossSum, correct}, Gradient(loss, wrt...)...)
	})
	if err != nil {
		e.Close()
		return nil, err
	}
	e.score, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, h, labels, mask *Node) []*Node {
		ctx.SetTraining(h.Graph(), false)
		lossSum, correct := net.Loss(net.Head(ctx, h), h, labels, mask)
		return []*Node{lossSum, correct}
	})
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// synapseVars returns the trainable variables of a block's synapse: those of its scope outside its
// neurons' scope.
func synapseVars(ctx *context.Context, b model.Block) []*context.Variable {
	bctx := ctx.In(b.Scope)
	neur := bctx.In("neuron").Scope()
	var out []*context.Variable
	for _, v := range step.TrainableIn(ctx, bctx.Scope()) {
		if !inScope(v.Scope(), neur) {
			out = append(out, v)
		}
	}
	return out
}

// flatten returns the coefficient cotangents present, in a fixed order: EtaDt, GammaDt, Beta..., Lambda...
func flatten(g scan.CoefficientGrads) []*Node {
	var out []*Node
	if g.EtaDt != nil {
		out = append(out, g.EtaDt, g.GammaDt)
	}
	out = append(out, g.Beta...)
	return append(out, g.Lambda...)
}

// unflatten is the inverse of flatten for the coefficients c.
func unflatten(c neuron.Coefficients, nodes []*Node) scan.CoefficientGrads {
	var g scan.CoefficientGrads
	if c.EtaDt != nil {
		g.EtaDt, g.GammaDt, nodes = nodes[0], nodes[1], nodes[2:]
	}
	if m := len(c.Beta); m > 0 {
		g.Beta, g.Lambda = nodes[:m], nodes[m:2*m]
	}
	return g
}

func (e *engine) buildBlock(backend backends.Backend, i int, b model.Block) (*blockExecs, error) {
	be := &blockExecs{b: b, states: neuron.StateComponents(b.Neuron)}
	n := be.states
	var err error
	if be.paramShape, err = neuron.ParamShape(append([]int{1, 1}, b.OutDims...), b.Neuron.ChannelShared); err != nil {
		return nil, err
	}
	cell, err := b.Neuron.Kind.Cell()
	if err != nil {
		return nil, err
	}
	layout := cell.State(b.Neuron)
	count := 2 * max(layout.Stages-1, 0) // β̄m and λ̄m
	if layout.Adaptation {
		count += 2 // ē and ḡ
	}
	for range count {
		be.coefShapes = append(be.coefShapes, shapes.Make(dtypes.Float32, be.paramShape...))
	}
	coefficients := func(ctx *context.Context, g *Graph) neuron.Coefficients {
		return neuron.LayerCoefficients(ctx.In(b.Scope).In("neuron"), g, dtypes.Float32, b.Neuron, be.paramShape)
	}
	if be.synapse, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, h *Node) *Node {
		return b.Synapse(ctx.In(b.Scope), h)
	}); err != nil {
		return nil, err
	}
	if be.synapseVJP, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, h, cot *Node) []*Node {
		bctx := ctx.In(b.Scope)
		cur := b.Synapse(bctx, h)
		vars := synapseVars(ctx, b)
		be.synParams = names(vars)
		wrt := make([]*Node, 0, len(vars)+1)
		for _, v := range vars {
			wrt = append(wrt, v.ValueGraph(h.Graph()))
		}
		wantInput := i > 0 && b.InputCotangent == nil
		if wantInput {
			wrt = append(wrt, h)
		}
		grads := Gradient(ReduceAllSum(Mul(cur, cot)), wrt...)
		if i > 0 && b.InputCotangent != nil {
			grads = append(grads, b.InputCotangent(bctx, h, cot))
		}
		return grads
	}); err != nil {
		return nil, err
	}
	if be.forward, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
		cur := sliceTime(in[0], in[1], e.k)
		spikes, final, saved := scan.Forward(coefficients(ctx, cur.Graph()), cur, in[2:])
		if e.opts.Recompute {
			saved = nil
		}
		be.saved = len(saved)
		return append(append([]*Node{spikes}, final...), saved...)
	}); err != nil {
		return nil, err
	}
	if be.vjp, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
		cur := sliceTime(in[0], in[1], e.k)
		cotSpikes := sliceTime(in[2], in[1], e.k)
		rest := in[3:]
		if e.withDropout {
			cotSpikes = Mul(cotSpikes, rest[0]) // h = spikes·mask, so cot spikes = cot h·mask
			rest = rest[1:]
		}
		ns := be.saved // set when the forward graph was built, at the first forward call
		state, saved, cotFinal, acc := rest[:n], rest[n:n+ns], rest[n+ns:2*n+ns], rest[2*n+ns:]
		if ns == 0 {
			saved = nil // recomputed
		}
		cotState, cotCur, grads := scan.Backward(coefficients(ctx, cur.Graph()), cur, state, saved, cotSpikes, cotFinal)
		outs := append(cotState, cotCur)
		for j, x := range flatten(grads) {
			outs = append(outs, Add(acc[j], x))
		}
		return outs
	}); err != nil {
		return nil, err
	}
	nctx := e.ctx.In(b.Scope).In("neuron")
	be.neurParams = step.TrainableIn(e.ctx, nctx.Scope())
	if len(be.neurParams) > 0 {
		if be.varGrads, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, acc []*Node) []*Node {
			g := acc[0].Graph()
			c := coefficients(ctx, g)
			wrt := make([]*Node, len(be.neurParams))
			for j, v := range be.neurParams {
				wrt[j] = v.ValueGraph(g)
			}
			return scan.VariableGrads(c, unflatten(c, acc), wrt...)
		}); err != nil {
			return nil, err
		}
	}
	join := func(mask, drop *Node, parts []*Node) []*Node {
		s := parts[0]
		if len(parts) > 1 {
			s = Concatenate(parts, 1)
		}
		return []*Node{model.ApplyMask(s, drop), model.RateSum(s, mask)}
	}
	if be.join, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
		if e.withDropout {
			return join(in[0], in[1], in[2:])
		}
		return join(in[0], nil, in[1:])
	}); err != nil {
		return nil, err
	}
	if be.joinEval, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
		return join(in[0], nil, in[1:])
	}); err != nil {
		return nil, err
	}
	be.concat, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, parts []*Node) *Node {
		if len(parts) == 1 {
			return Identity(parts[0])
		}
		return Concatenate(parts, 1)
	})
	return be, err
}

// sliceTime returns x[:, t0:t0+k, ...] for x [batch, time, ...] and an int32 scalar t0.
func sliceTime(x, t0 *Node, k int) *Node {
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

func (e *engine) Name() string { return Name }

// prepare fixes the chunk length at the first call and checks T at the later ones.
func (e *engine) prepare(steps int) error {
	if e.k == 0 {
		e.k = e.opts.Chunk
		if e.k == 0 {
			e.k = step.DefaultChunk(steps)
		}
		if steps%e.k != 0 {
			k := e.k
			e.k = 0
			return fmt.Errorf("scanstep: chunk %d does not divide T = %d", k, steps)
		}
		for c := range steps / e.k {
			e.starts = append(e.starts, tensors.FromScalar(int32(c*e.k)))
		}
		return nil
	}
	if len(e.starts)*e.k != steps {
		return fmt.Errorf("scanstep: T = %d differs from the first call's %d", steps, len(e.starts)*e.k)
	}
	return nil
}

// zeroState returns a block's zero neuron state for a batch.
func (e *engine) zeroState(be *blockExecs, batch int) []*tensors.Tensor {
	z := make([]*tensors.Tensor, be.states)
	dims := append([]int{batch}, be.b.OutDims...)
	for j := range z {
		z[j] = tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
	}
	e.mem.keep(z...)
	return z
}

// forwardPass runs every block forward. It returns each block's input h (x first, then each block's output
// after dropout), each block's current, per block and chunk the starting state followed by the forward
// chunk's saved tensors (when save), and the rate sums.
func (e *engine) forwardPass(b step.Batch, training, save bool) (hs, curs []*tensors.Tensor, saved [][][]*tensors.Tensor, rates []float64, err error) {
	batch, steps := b.X.Shape().Dimensions[0], b.X.Shape().Dimensions[1]
	if err = e.prepare(steps); err != nil {
		return
	}
	chunks := len(e.starts)
	hs = []*tensors.Tensor{b.X}
	saved = make([][][]*tensors.Tensor, len(e.blocks))
	rateTensors := make([]*tensors.Tensor, 0, len(e.blocks))
	for i, be := range e.blocks {
		var outs []*tensors.Tensor
		if outs, err = e.times.exec(be.synapse, hs[i]); err != nil {
			return
		}
		cur := outs[0]
		e.mem.keep(cur)
		curs = append(curs, cur)
		state := e.zeroState(be, batch)
		parts := make([]any, chunks)
		if save {
			saved[i] = make([][]*tensors.Tensor, chunks)
		}
		for c := range chunks {
			if outs, err = e.times.exec(be.forward, append([]any{cur, e.starts[c]}, asAny(state)...)...); err != nil {
				return
			}
			e.mem.keep(outs...)
			if save {
				saved[i][c] = append(slices.Clone(state), outs[1+be.states:]...)
			}
			parts[c] = outs[0]
			state = outs[1 : 1+be.states]
		}
		args := []any{b.Mask}
		exec := be.joinEval
		if training {
			exec = be.join
			if e.withDropout {
				args = append(args, b.Dropout[i])
			}
		}
		if outs, err = e.times.exec(exec, append(args, parts...)...); err != nil {
			return
		}
		e.mem.keep(outs[0])
		hs = append(hs, outs[0])
		rateTensors = append(rateTensors, outs[1])
	}
	rates, err = scalars(rateTensors)
	return
}

func (e *engine) Gradients(b step.Batch) (m step.Metrics, grads map[string]*tensors.Tensor, err error) {
	if err = checkBatch(e.net, b, true); err != nil {
		return
	}
	defer e.mem.free()
	hs, curs, saved, rates, err := e.forwardPass(b, true, true)
	if err != nil {
		return
	}
	outs, err := e.times.exec(e.head, hs[len(hs)-1], labelsOf(b), b.Mask)
	if err != nil {
		return
	}
	vals, err := scalars(outs[:2])
	if err != nil {
		return
	}
	m = step.Metrics{LossSum: vals[0], Correct: vals[1], Rates: rates}
	grads = map[string]*tensors.Tensor{}
	defer func() {
		if err != nil {
			for _, t := range grads {
				_ = t.FinalizeAll()
			}
			grads = nil
		}
	}()
	cot := outs[2]
	e.mem.keep(cot)
	for j, name := range e.readout {
		grads[name] = outs[3+j]
	}
	batch := b.X.Shape().Dimensions[0]
	for i := len(e.blocks) - 1; i >= 0; i-- {
		be := e.blocks[i]
		acc := make([]*tensors.Tensor, len(be.coefShapes))
		for j, s := range be.coefShapes {
			acc[j] = tensors.FromShape(s)
		}
		cotState := e.zeroState(be, batch)
		cotParts := make([]any, len(e.starts))
		for c := len(e.starts) - 1; c >= 0; c-- {
			args := []any{curs[i], e.starts[c], cot}
			if e.withDropout {
				args = append(args, b.Dropout[i])
			}
			args = append(args, asAny(saved[i][c])...) // starting state, then scan's saved tensors
			args = append(args, asAny(cotState)...)
			args = append(args, asAny(acc)...)
			var outs []*tensors.Tensor
			if outs, err = e.times.exec(be.vjp, args...); err != nil {
				return
			}
			for _, t := range acc {
				_ = t.FinalizeAll()
			}
			n := be.states
			cotState, cotParts[c], acc = outs[:n], outs[n], outs[n+1:]
			e.mem.keep(outs[:n+1]...)
		}
		e.mem.keep(acc...)
		if be.varGrads != nil {
			var outs []*tensors.Tensor
			if outs, err = e.times.exec(be.varGrads, asAny(acc)...); err != nil {
				return
			}
			for j, v := range be.neurParams {
				grads[v.ScopeAndName()] = outs[j]
			}
		}
		var outs []*tensors.Tensor
		if outs, err = e.times.exec(be.concat, cotParts...); err != nil {
			return
		}
		e.mem.keep(outs[0])
		if outs, err = e.times.exec(be.synapseVJP, hs[i], outs[0]); err != nil {
			return
		}
		for j, name := range be.synParams {
			grads[name] = outs[j]
		}
		if i > 0 {
			cot = outs[len(be.synParams)]
			e.mem.keep(cot)
		}
	}
	return m, grads, nil
}

func (e *engine) Evaluate(b step.Batch) (step.Metrics, error) {
	if err := checkBatch(e.net, b, false); err != nil {
		return step.Metrics{}, err
	}
	defer e.mem.free()
	hs, _, _, rates, err := e.forwardPass(b, false, false)
	if err != nil {
		return step.Metrics{}, err
	}
	outs, err := e.times.exec(e.score, hs[len(hs)-1], labelsOf(b), b.Mask)
	if err != nil {
		return step.Metrics{}, err
	}
	vals, err := scalars(outs)
	if err != nil {
		return step.Metrics{}, err
	}
	return step.Metrics{LossSum: vals[0], Correct: vals[1], Rates: rates}, nil
}

func (e *engine) CompileSeconds() float64 { return e.times.compileSeconds() }

func (e *engine) execs() []*context.Exec {
	var out []*context.Exec
	for _, x := range []*context.Exec{e.head, e.score} {
		if x != nil {
			out = append(out, x)
		}
	}
	for _, be := range e.blocks {
		out = append(out, be.synapse, be.synapseVJP, be.forward, be.vjp, be.varGrads, be.join, be.joinEval, be.concat)
	}
	return out
}

func (e *engine) Close() {
	e.mem.free()
	for _, x := range e.execs() {
		if x != nil {
			x.Finalize()
		}
	}
}

// The helpers below are package step's unexported ones (a copy while this engine lives outside it).

func inScope(varScope, scope string) bool {
	return scope == "" || scope == context.RootScope || varScope == scope ||
		strings.HasPrefix(varScope, scope+context.ScopeSeparator)
}

func names(vars []*context.Variable) []string {
	out := make([]string, len(vars))
	for i, v := range vars {
		out[i] = v.ScopeAndName()
	}
	return out
}

// timer records the wall time of each call of its executors; the first call includes compilation.
type timer map[*context.Exec][]time.Duration

func (t timer) exec(e *context.Exec, args ...any) ([]*tensors.Tensor, error) {
	start := time.Now()
	outs, err := e.Exec(args...)
	t[e] = append(t[e], time.Since(start))
	return outs, err
}

// compileSeconds estimates the compile time: for each executor, its first call's time minus the median of
// the later calls (the first call alone when there is no later one).
func (t timer) compileSeconds() float64 {
	total := 0.0
	for _, d := range t {
		if len(d) == 0 {
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
			return nil, fmt.Errorf("scanstep: expected a scalar, got %s", t.Shape())
		}
		out[i] = float64(v[0])
		t.MustFinalizeAll()
	}
	return out, nil
}

func asAny(ts []*tensors.Tensor) []any {
	out := make([]any, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
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

func labelsOf(b step.Batch) *tensors.Tensor {
	if b.Labels == nil {
		return noLabels
	}
	return b.Labels
}

// checkBatch validates a batch against the network.
func checkBatch(net model.Net, b step.Batch, training bool) error {
	if b.X == nil || b.Mask == nil || (net.Classes > 0 && b.Labels == nil) {
		return fmt.Errorf("scanstep: a batch needs inputs, a mask and (with a classifier) labels")
	}
	dims := b.X.Shape().Dimensions
	if len(dims) != 2+len(net.InputDims) || !slices.Equal(dims[2:], net.InputDims) {
		return fmt.Errorf("scanstep: input %s does not match [batch, time, %v]", b.X.Shape(), net.InputDims)
	}
	if training && net.Dropout > 0 && len(b.Dropout) != len(net.Blocks) {
		return fmt.Errorf("scanstep: a training step with dropout needs %d masks, got %d", len(net.Blocks), len(b.Dropout))
	}
	return nil
}
