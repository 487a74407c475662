// Package scanstep is package chunked's training step (a feedforward network of fits/model with the mean
// readout and no dropout, the recurrence called from Go in chunks of K steps) with each chunk's
// vector-Jacobian product taken from the hand-derived adjoint of package scan instead of GoMLX autodiff of
// the K unrolled steps. Its Step takes the same inputs and returns the same chunked.Result, so the two
// can be compared and timed side by side.
//
// Per hidden layer it calls, from Go: the dense map over the whole sequence; a forward graph of K steps
// (scan.Forward) T/K times, keeping each chunk's starting state and its per-step saved state; and, in
// reverse, scan.Backward of each chunk, which returns the cotangents of the chunk's starting state and
// current and of the coefficients (shape P). The coefficient cotangents are summed over the chunks on
// the device and mapped once per layer to the neuron's variables (scan.VariableGrads). The head graph and
// the dense maps are package chunked's.
//
// The variables are model.FeedForward's and must exist in the context, the neuron's included (the
// coefficients are built from them): "hidden_<i>/dense/{weights,biases}", "hidden_<i>/neuron/..." and
// "readout/dense/{weights,biases}".
package scanstep

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/chunked"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/scan"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

type layer struct {
	dense, denseVJP, fwd, vjp, varGrads, concat *context.Exec
	params, denseParams                         []string
	coefGrads                                   []shapes.Shape // shapes of the accumulated coefficient cotangents
	saved                                       int            // number of tensors scan.Forward saves
}

// Options choose between the executor's two ways of giving each chunk's backward pass its forward
// values.
type Options struct {
	// Recompute makes the forward chunks keep nothing but their starting state, and each backward chunk
	// recompute its forward pass from it (scan.Backward with saved = nil), as package chunked does.
	// Without it the forward chunks keep scan.Forward's saved tensor ([K, components+1, batch, width] per
	// chunk and layer) until the backward pass.
	Recompute bool
}

// Executor holds the compiled pieces for one input shape; graphs compile at their first call.
type Executor struct {
	opts    Options
	spec    chunked.Spec
	backend backends.Backend
	ctx     *context.Context
	layers  []*layer
	head    *context.Exec
	chunk   int
	starts  []*tensors.Tensor
	keep    []*tensors.Tensor
}

// New returns an executor for the network whose variables are in ctx (scoped as model.FeedForward's; the
// neuron variables of every hidden layer must exist, with the layer's parameter shape [Width]).
func New(backend backends.Backend, ctx *context.Context, spec chunked.Spec, opts Options) (*Executor, error) {
	if spec.Layers < 1 || spec.Width < 1 || spec.Classes < 2 || spec.Chunk < 0 {
		return nil, fmt.Errorf("scanstep: invalid spec %+v", spec)
	}
	if err := spec.Neuron.Validate(); err != nil {
		return nil, err
	}
	if spec.Neuron.ChannelShared {
		return nil, fmt.Errorf("scanstep: channel-shared parameters need an input with channels; the feedforward network has none")
	}
	e := &Executor{opts: opts, spec: spec, backend: backend, ctx: ctx.Checked(false)}
	for i := range spec.Layers {
		nctx := e.ctx.In(layerScope(i)).In("neuron")
		for _, name := range variableNames(spec.Neuron) {
			if nctx.GetVariableByScopeAndName(nctx.Scope(), name) == nil {
				return nil, fmt.Errorf("scanstep: no variable %q in scope %q", name, nctx.Scope())
			}
		}
	}
	return e, e.build()
}

func layerScope(i int) string { return fmt.Sprintf("hidden_%d", i) }

// variableNames returns the names of the neuron variables that the coefficients of cfg are built from.
func variableNames(cfg neuron.Config) []string {
	switch cfg.Kind {
	case neuron.LIF:
		return nil
	case neuron.AdaptLIF:
		return []string{neuron.VarEta, neuron.VarGamma}
	}
	omega := neuron.VarOmegaStar
	if cfg.DTExact {
		omega = neuron.VarOmegaStarDT
	}
	if cfg.Kind == neuron.FSTS {
		return []string{omega, neuron.VarBetaHat, neuron.VarLambdaHat}
	}
	return []string{omega}
}

// coefficientsOf returns the coefficients of the layer whose variables are in ctx's current scope, built
// from them as package neuron's layer builds them (Ω* clamped to [0, MaxTargetHz], κ̄ by Theorem 1 or the
// DT-exact inverse, ηΔt = √(κ̄r), γΔt = √(κ̄/r), β = tanh(β̂), λ = σ(λ̂)). The stages are taken out of
// [M, P…] by a one-hot contraction (exact), whose gradient needs no Pad.
func coefficientsOf(ctx *context.Context, g *Graph, cfg neuron.Config) neuron.Coefficients {
	k := cfg.Constants()
	c := neuron.Coefficients{
		MuBar: k.MuBar(), RhoBar: k.RhoBar(), Vth: cfg.Vth, Surrogate: cfg.Surrogate, DetachReset: cfg.DetachReset,
	}
	get := func(name string) *Node {
		v := ctx.GetVariableByScopeAndName(ctx.Scope(), name)
		if v == nil {
			panic(fmt.Errorf("scanstep: no variable %q in scope %q", name, ctx.Scope()))
		}
		return v.ValueGraph(g)
	}
	switch cfg.Kind {
	case neuron.LIF:
		return c
	case neuron.AdaptLIF:
		c.EtaDt = MulScalar(get(neuron.VarEta), cfg.Dt)
		c.GammaDt = MulScalar(get(neuron.VarGamma), cfg.Dt)
		return c
	}
	names := variableNames(cfg)
	fmax, err := cfg.MaxTargetHz()
	if err != nil {
		panic(err)
	}
	omega := ClipScalar(get(names[0]), 0, 2*math.Pi*fmax)
	var kappaBar *Node
	if cfg.DTExact {
		kappaBar = neuron.KappaBarDTExact(MulScalar(omega, cfg.Dt), k.MuBar(), k.RhoBar())
	} else {
		kappaBar = MulScalar(neuron.KappaStar(omega, k.Mu(), k.Rho()), cfg.Dt*cfg.Dt)
	}
	sq := Sqrt(kappaBar)
	r := cfg.Ratio()
	c.EtaDt, c.GammaDt = MulScalar(sq, math.Sqrt(r)), DivScalar(sq, math.Sqrt(r))
	if cfg.Kind != neuron.FSTS {
		return c
	}
	beta, lambda := Tanh(get(neuron.VarBetaHat)), Sigmoid(get(neuron.VarLambdaHat))
	m := cfg.Order
	for j := range m {
		mask := make([]float64, m)
		mask[j] = 1
		dims := make([]int, beta.Rank())
		for i := range dims {
			dims[i] = 1
		}
		dims[0] = m
		oneHot := BroadcastToDims(Reshape(ConvertDType(Const(g, mask), beta.DType()), dims...), beta.Shape().Dimensions...)
		c.Beta = append(c.Beta, ReduceSum(Mul(beta, oneHot), 0))
		c.Lambda = append(c.Lambda, ReduceSum(Mul(lambda, oneHot), 0))
	}
	return c
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
	m := len(c.Beta)
	if m > 0 {
		g.Beta, g.Lambda = nodes[:m], nodes[m:2*m]
	}
	return g
}

func (e *Executor) build() error {
	s := e.spec
	n := neuron.StateComponents(s.Neuron)
	for i := range s.Layers {
		w := s.Width
		l := &layer{}
		scope := layerScope(i)
		var err error
		l.dense, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, h *Node) *Node {
			return chunked.Dense(ctx.Checked(false).In(scope), h, w)
		})
		if err != nil {
			return err
		}
		l.denseVJP, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, h, cot *Node) []*Node {
			ctx = ctx.Checked(false)
			lctx := ctx.In(scope)
			cur := chunked.Dense(lctx, h, w)
			vars := chunked.TrainableIn(ctx, lctx.In("dense").Scope())
			l.denseParams = chunked.Names(vars)
			wrt := make([]*Node, 0, len(vars))
			for _, v := range vars {
				wrt = append(wrt, v.ValueGraph(h.Graph()))
			}
			grads := Gradient(ReduceAllSum(Mul(cur, cot)), wrt...)
			if i > 0 {
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
		// [current [batch, T, w], t0, state (n)] -> [spikes [batch, K, w], final state (n), saved...].
		l.fwd, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
			cur := chunked.SliceTime(in[0], in[1], e.chunk)
			c := coefficientsOf(ctx.Checked(false).In(scope).In("neuron"), cur.Graph(), s.Neuron)
			spikes, final, saved := scan.Forward(c, cur, in[2:])
			if e.opts.Recompute {
				saved = nil
			}
			l.saved = len(saved)
			return append(append([]*Node{spikes}, final...), saved...)
		})
		if err != nil {
			return err
		}
		// [current, t0, cot spikes [batch, T, w], state (n), saved..., cot final state (n), accumulators] ->
		// [cot state (n), cot current [batch, K, w], accumulators + this chunk's coefficient cotangents].
		l.vjp, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
			cur := chunked.SliceTime(in[0], in[1], e.chunk)
			cotSpikes := chunked.SliceTime(in[2], in[1], e.chunk)
			ns := l.saved // set when the forward graph was built, at the first forward call
			state, saved, cotFinal, acc := in[3:3+n], in[3+n:3+n+ns], in[3+n+ns:3+2*n+ns], in[3+2*n+ns:]
			c := coefficientsOf(ctx.Checked(false).In(scope).In("neuron"), cur.Graph(), s.Neuron)
			if ns == 0 {
				saved = nil // recomputed
			}
			cotState, cotCur, grads := scan.Backward(c, cur, state, saved, cotSpikes, cotFinal)
			outs := append(cotState, cotCur)
			for j, x := range flatten(grads) {
				outs = append(outs, Add(acc[j], x))
			}
			return outs
		})
		if err != nil {
			return err
		}
		// [coefficient cotangents] -> [gradients of the neuron's trainable variables].
		l.varGrads, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, acc []*Node) []*Node {
			ctx = ctx.Checked(false)
			g := acc[0].Graph()
			nctx := ctx.In(scope).In("neuron")
			c := coefficientsOf(nctx, g, s.Neuron)
			vars := chunked.TrainableIn(ctx, nctx.Scope())
			l.params = chunked.Names(vars)
			wrt := make([]*Node, len(vars))
			for j, v := range vars {
				wrt[j] = v.ValueGraph(g)
			}
			return scan.VariableGrads(c, unflatten(c, acc), wrt...)
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
		// The coefficient cotangents have the parameter shape [w].
		if s.Neuron.Kind != neuron.LIF {
			l.coefGrads = append(l.coefGrads, shapes.Make(dtypes.Float32, w), shapes.Make(dtypes.Float32, w))
		}
		for range 2 * s.Neuron.Order {
			l.coefGrads = append(l.coefGrads, shapes.Make(dtypes.Float32, w))
		}
		e.layers = append(e.layers, l)
	}
	var err error
	e.head, err = context.NewExec(e.backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
		ctx = ctx.Checked(false)
		spikes := in[:s.Layers]
		labels, mask := in[s.Layers], in[s.Layers+1]
		h := spikes[len(spikes)-1]
		g := h.Graph()
		rctx := ctx.In("readout")
		logits := chunked.Dense(rctx, ReduceMean(h, 1), s.Classes)
		ce := Neg(ReduceSum(Mul(OneHot(labels, s.Classes, logits.DType()), LogSoftmax(logits, -1)), -1))
		lossSum := ReduceAllSum(Mul(ce, mask))
		loss := Div(lossSum, MaxScalar(ReduceAllSum(mask), 1))
		hit := ConvertDType(Equal(ArgMax(logits, -1, dtypes.Int32), labels), mask.DType())
		outs := []*Node{lossSum, ReduceAllSum(Mul(hit, mask))}
		for _, sp := range spikes {
			outs = append(outs, ReduceAllSum(Mul(ReduceMean(sp, 1, 2), mask)))
		}
		vars := chunked.TrainableIn(ctx, rctx.In("dense").Scope())
		wrt := []*Node{h}
		for _, v := range vars {
			wrt = append(wrt, v.ValueGraph(g))
		}
		return append(outs, Gradient(loss, wrt...)...)
	})
	return err
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
		return 0, fmt.Errorf("scanstep: expected a scalar, got %s", t.Shape())
	}
	return float64(v[0]), nil
}

// Step runs the forward and backward pass of one batch: x [batch, time, features] float32, labels [batch]
// int32, mask [batch] float32 (1 for real examples, 0 for padding), as chunked.Executor.Step does.
func (e *Executor) Step(x, labels, mask *tensors.Tensor) (res chunked.Result, err error) {
	for _, t := range e.keep {
		_ = t.FinalizeAll()
	}
	e.keep = e.keep[:0]
	s := e.spec
	dims := x.Shape().Dimensions
	if len(dims) != 3 {
		return res, fmt.Errorf("scanstep: input must be [batch, time, features], got %s", x.Shape())
	}
	batch, steps := dims[0], dims[1]
	if e.chunk == 0 {
		e.chunk = s.Chunk
		if e.chunk == 0 {
			e.chunk = chunked.DefaultChunk(steps)
		}
		if steps%e.chunk != 0 {
			return res, fmt.Errorf("scanstep: chunk %d does not divide T = %d", e.chunk, steps)
		}
		for c := range steps / e.chunk {
			e.starts = append(e.starts, tensors.FromScalar(int32(c*e.chunk)))
		}
	} else if len(e.starts)*e.chunk != steps {
		return res, fmt.Errorf("scanstep: T = %d differs from the first step's %d", steps, len(e.starts)*e.chunk)
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
	starts := make([][][]*tensors.Tensor, s.Layers) // [layer][chunk] starting state
	saved := make([][][]*tensors.Tensor, s.Layers)  // [layer][chunk] state before each step
	for i, l := range e.layers {
		outs, err := l.dense.Exec(hs[i])
		if err != nil {
			return res, err
		}
		curs[i] = outs[0]
		e.keep = append(e.keep, outs[0])
		state := zero()
		parts := make([]any, chunks)
		starts[i] = make([][]*tensors.Tensor, chunks)
		saved[i] = make([][]*tensors.Tensor, chunks)
		for c := range chunks {
			outs, err := l.fwd.Exec(append([]any{curs[i], e.starts[c]}, asAny(state)...)...)
			if err != nil {
				return res, err
			}
			e.keep = append(e.keep, outs...)
			starts[i][c] = state
			parts[c] = outs[0]
			state = outs[1 : 1+n]
			saved[i][c] = outs[1+n:]
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
	readout := chunked.Names(chunked.TrainableIn(e.ctx, e.ctx.In("readout").In("dense").Scope()))
	for j, name := range readout {
		res.Grads[name] = outs[len(vals)+1+j]
	}
	for i := s.Layers - 1; i >= 0; i-- {
		l := e.layers[i]
		acc := make([]*tensors.Tensor, len(l.coefGrads))
		for j, sh := range l.coefGrads {
			acc[j] = tensors.FromShape(sh)
		}
		cotState := zero()
		cotParts := make([]any, chunks)
		for c := chunks - 1; c >= 0; c-- {
			args := append([]any{curs[i], e.starts[c], cot}, asAny(starts[i][c])...)
			args = append(args, asAny(saved[i][c])...)
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
		if len(chunked.TrainableIn(e.ctx, e.ctx.In(layerScope(i)).In("neuron").Scope())) > 0 {
			grads, err := l.varGrads.Exec(asAny(acc)...)
			if err != nil {
				return res, err
			}
			for j, name := range l.params {
				res.Grads[name] = grads[j]
			}
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
		e.keep = append(e.keep, acc...)
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
		out = append(out, l.dense, l.denseVJP, l.fwd, l.vjp, l.varGrads, l.concat)
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
