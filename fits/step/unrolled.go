package step

import (
	"github.com/fits-snn/fits/fits/model"
	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// unrolled builds the whole network in one graph (model.Net.Forward) with the time recurrence unrolled, and
// its gradients by autodiff: the oracle of the other engines.
type unrolled struct {
	net         model.Net
	ctx         *context.Context
	grad, eval  *context.Exec
	params      []string // trainable variables, in the order of the gradient outputs
	times       timer
	layers      int
	withDropout bool
}

func newUnrolled(backend backends.Backend, ctx *context.Context, net model.Net) (*unrolled, error) {
	e := &unrolled{net: net, ctx: ctx.Checked(false), times: timer{}, layers: len(net.Blocks), withDropout: net.Dropout > 0}
	var err error
	// [x, labels, mask, dropout masks...] -> [lossSum, correct, rates..., gradients...].
	e.grad, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, in []*Node) []*Node {
		x := in[0]
		ctx.SetTraining(x.Graph(), true)
		var masks []*Node
		if e.withDropout {
			masks = in[3:]
		}
		outs := e.forward(ctx, x, in[1], in[2], masks)
		lossSum, mask := outs[0], in[2]
		loss := Div(lossSum, MaxScalar(ReduceAllSum(mask), 1))
		vars := TrainableIn(ctx, ctx.Scope())
		e.params = names(vars)
		wrt := make([]*Node, len(vars))
		for i, v := range vars {
			wrt[i] = v.ValueGraph(x.Graph())
		}
		return append(outs, Gradient(loss, wrt...)...)
	})
	if err != nil {
		return nil, err
	}
	e.eval, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, x, labels, mask *Node) []*Node {
		ctx.SetTraining(x.Graph(), false)
		return e.forward(ctx, x, labels, mask, nil)
	})
	return e, err
}

// forward returns [lossSum, correct, rate sums per block...].
func (e *unrolled) forward(ctx *context.Context, x, labels, mask *Node, masks []*Node) []*Node {
	out := e.net.Forward(ctx, x, masks)
	last := len(out.Spikes) - 1
	h := model.ApplyMask(out.Spikes[last], maskAt(masks, last))
	lossSum, correct := e.net.Loss(out.Logits, h, labels, mask)
	outs := []*Node{lossSum, correct}
	for _, s := range out.Spikes {
		outs = append(outs, model.RateSum(s, mask))
	}
	return outs
}

func maskAt(masks []*Node, i int) *Node {
	if i < len(masks) {
		return masks[i]
	}
	return nil
}

func (e *unrolled) Name() string { return Unrolled }

func (e *unrolled) Gradients(b Batch) (Metrics, map[string]*tensors.Tensor, error) {
	if err := checkBatch(e.net, b, true); err != nil {
		return Metrics{}, nil, err
	}
	masks, owned, err := graphMasks(e.net, b)
	if owned {
		defer freeAll(masks)
	}
	if err != nil {
		return Metrics{}, nil, err
	}
	outs, err := e.times.exec(e.grad, append([]any{b.X, labelsOf(b), b.Mask}, asAny(masks)...)...)
	if err != nil {
		return Metrics{}, nil, err
	}
	n := 2 + e.layers
	vals, err := scalars(outs[:n])
	if err != nil {
		return Metrics{}, nil, err
	}
	grads := make(map[string]*tensors.Tensor, len(e.params))
	for i, name := range e.params {
		grads[name] = outs[n+i]
	}
	return metrics(vals), grads, nil
}

func (e *unrolled) Evaluate(b Batch) (Metrics, error) {
	if err := checkBatch(e.net, b, false); err != nil {
		return Metrics{}, err
	}
	outs, err := e.times.exec(e.eval, b.X, labelsOf(b), b.Mask)
	if err != nil {
		return Metrics{}, err
	}
	vals, err := scalars(outs)
	if err != nil {
		return Metrics{}, err
	}
	return metrics(vals), nil
}

func (e *unrolled) CompileSeconds() float64 { return e.times.compileSeconds() }

func (e *unrolled) Close() {
	e.grad.Finalize()
	e.eval.Finalize()
}
