package bench

import (
	"github.com/fits-snn/fits/fits/chunked"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// prepareChunked builds, for every hidden layer, the graphs the Stepwise and Chunked variants call from
// Go: the dense map over the whole sequence and its VJP, one chunk of r.chunk neuron steps and its VJP,
// and the concatenation of the chunks' outputs along time; and the readout with the loss and its gradient.
func (r *Runner) prepareChunked() error {
	s := r.spec
	k := r.chunk
	chunks := s.Time / k
	for c := range chunks {
		r.starts = append(r.starts, tensors.FromScalar(int32(c*k)))
	}
	n := neuron.StateComponents(s.Neuron)
	for i, w := range s.Widths {
		i, w := i, w
		l := &layerExecs{}
		scope := layerScope(i)
		zeros := make([]*tensors.Tensor, n)
		for j := range zeros {
			zeros[j] = tensors.FromShape(shapeF32(s.Batch, w))
		}
		r.zeroState = append(r.zeroState, zeros)

		var err error
		l.dense, err = context.NewExec(r.backend, r.ctx, func(ctx *context.Context, h *Node) *Node {
			return chunked.Dense(ctx.In(scope), h, w) // [batch, time, w]
		})
		if err != nil {
			return err
		}
		l.denseVJP, err = context.NewExec(r.backend, r.ctx, func(ctx *context.Context, h, cot *Node) []*Node {
			lctx := ctx.In(scope)
			cur := chunked.Dense(lctx, h, w)
			vars := chunked.TrainableIn(ctx, lctx.In("dense").Scope())
			l.denseParams = chunked.Names(vars)
			wrt := make([]*Node, 0, len(vars)+1)
			for _, v := range vars {
				wrt = append(wrt, v.ValueGraph(h.Graph()))
			}
			grads := Gradient(ReduceAllSum(Mul(cur, cot)), wrt...)
			if i > 0 {
				// cot h = cot·Wᵀ with Wᵀ materialized: the product that autodiff builds (contracting W's
				// output axis) ran about 50× slower on XLA CPU.
				wT := Transpose(lctx.In("dense").GetVariable("weights").ValueGraph(h.Graph()), 0, 1)
				dims := h.Shape().Dimensions
				rows := h.Shape().Size() / dims[len(dims)-1]
				c2 := Reshape(cot, rows, w)
				grads = append(grads, Reshape(Dot(c2, wT), dims...))
			}
			return grads // grads..., then cot h when i > 0
		})
		if err != nil {
			return err
		}
		// Forward chunk: inputs [current [batch, T, w], t0 int32, state...], outputs [spikes [batch, k, w],
		// final state...].
		l.fwd, err = context.NewExec(r.backend, r.ctx, func(ctx *context.Context, in []*Node) []*Node {
			cur := chunked.SliceTime(in[0], in[1], k)
			spikes, final := neuron.LayerFrom(ctx.In(scope).In("neuron"), cur, s.Neuron, in[2:])
			return append([]*Node{spikes}, final...)
		})
		if err != nil {
			return err
		}
		// Chunk VJP: inputs [current, t0, cot spikes [batch, T, w], state (n), cot final state (n),
		// gradient accumulators (one per trainable neuron variable)], outputs [cot state (n), cot current
		// [batch, k, w], accumulators + this chunk's gradients]. The chunk's forward is recomputed from its
		// starting state.
		l.vjp, err = context.NewExec(r.backend, r.ctx, func(ctx *context.Context, in []*Node) []*Node {
			g := in[0].Graph()
			cur := chunked.SliceTime(in[0], in[1], k)
			cotSpikes := chunked.SliceTime(in[2], in[1], k)
			state := in[3 : 3+n]
			cotFinal := in[3+n : 3+2*n]
			acc := in[3+2*n:]
			nctx := ctx.In(scope).In("neuron")
			spikes, final := neuron.LayerFrom(nctx, cur, s.Neuron, state)
			obj := ReduceAllSum(Mul(spikes, cotSpikes))
			for j := range final {
				obj = Add(obj, ReduceAllSum(Mul(final[j], cotFinal[j])))
			}
			vars := chunked.TrainableIn(ctx, nctx.Scope())
			l.params = chunked.Names(vars)
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
		l.concat, err = context.NewExec(r.backend, r.ctx, func(ctx *context.Context, parts []*Node) *Node {
			if len(parts) == 1 {
				return Identity(parts[0])
			}
			return Concatenate(parts, 1)
		})
		if err != nil {
			return err
		}
		r.layers = append(r.layers, l)
	}
	var err error
	r.head, err = context.NewExec(r.backend, r.ctx, func(ctx *context.Context, h, labels *Node) []*Node {
		if s.Classes == 0 {
			loss := ReduceAllSum(h)
			return []*Node{loss, Gradient(loss, h)[0]}
		}
		rctx := ctx.In("readout")
		// model.ApplyReadout's ReadoutMean, mean_t(W·s[t] + b), computed as W·mean_t(s[t]) + b: the same
		// linear map, one [batch, W]·[W, classes] product instead of [batch·time, W]·[W, classes], which
		// XLA CPU ran at a fraction of a GFLOP/s for 35 classes.
		logits := chunked.Dense(rctx, ReduceMean(h, 1), s.Classes)
		loss := lossOf(logits, h, labels, s.Classes)
		vars := chunked.TrainableIn(ctx, rctx.In("dense").Scope())
		r.trainable = chunked.Names(vars) // the readout's variables
		wrt := []*Node{h}
		for _, v := range vars {
			wrt = append(wrt, v.ValueGraph(h.Graph()))
		}
		return append([]*Node{loss}, Gradient(loss, wrt...)...) // loss, cot h, readout grads...
	})
	return err
}

func shapeF32(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }

func (r *Runner) iterateChunked() error {
	s := r.spec
	n := neuron.StateComponents(s.Neuron)
	chunks := s.Time / r.chunk
	hs := []*tensors.Tensor{r.x} // each layer's input
	curs := make([]*tensors.Tensor, len(s.Widths))
	saved := make([][][]*tensors.Tensor, len(s.Widths)) // [layer][chunk] starting state
	for i, l := range r.layers {
		outs, err := l.dense.Exec(hs[i])
		if err != nil {
			return err
		}
		curs[i] = outs[0]
		r.keep = append(r.keep, outs[0])
		state := r.zeroState[i]
		parts := make([]any, chunks)
		saved[i] = make([][]*tensors.Tensor, chunks)
		for c := range chunks {
			args := append([]any{curs[i], r.starts[c]}, asAny(state)...)
			outs, err := l.fwd.Exec(args...)
			if err != nil {
				return err
			}
			saved[i][c] = state
			parts[c] = outs[0]
			state = outs[1:]
			r.keep = append(r.keep, outs...)
		}
		outs, err = l.concat.Exec(parts...)
		if err != nil {
			return err
		}
		r.keep = append(r.keep, outs[0])
		hs = append(hs, outs[0])
	}
	if r.recordSpikes {
		r.spikes = hs[1:]
	}
	outs, err := r.head.Exec(hs[len(hs)-1], r.labels)
	if err != nil {
		return err
	}
	if r.loss, err = scalar(outs[0]); err != nil {
		return err
	}
	_ = outs[0].FinalizeAll()
	cot := outs[1]
	r.keep = append(r.keep, cot)
	if s.Classes > 0 {
		for j, name := range r.trainable {
			r.grads[name] = outs[2+j]
		}
	}
	for i := len(r.layers) - 1; i >= 0; i-- {
		l := r.layers[i]
		vars := chunked.TrainableIn(r.ctx, r.ctx.In(layerScope(i)).In("neuron").Scope())
		acc := make([]*tensors.Tensor, len(vars))
		for j, v := range vars {
			acc[j] = tensors.FromShape(v.Shape())
		}
		cotState := r.zeroState[i]
		cotParts := make([]any, chunks)
		for c := chunks - 1; c >= 0; c-- {
			args := append([]any{curs[i], r.starts[c], cot}, asAny(saved[i][c])...)
			args = append(args, asAny(cotState)...)
			args = append(args, asAny(acc)...)
			outs, err := l.vjp.Exec(args...)
			if err != nil {
				return err
			}
			for _, t := range acc {
				_ = t.FinalizeAll()
			}
			cotState = outs[:n]
			cotParts[c] = outs[n]
			acc = outs[n+1:]
			r.keep = append(r.keep, outs[:n+1]...)
		}
		for j, name := range l.params {
			r.grads[name] = acc[j]
		}
		outs, err := l.concat.Exec(cotParts...)
		if err != nil {
			return err
		}
		r.keep = append(r.keep, outs[0])
		outs, err = l.denseVJP.Exec(hs[i], outs[0])
		if err != nil {
			return err
		}
		for j, name := range l.denseParams {
			r.grads[name] = outs[j]
		}
		if i > 0 {
			cot = outs[len(l.denseParams)]
			r.keep = append(r.keep, cot)
		}
	}
	return nil
}

func asAny(ts []*tensors.Tensor) []any {
	out := make([]any, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}
