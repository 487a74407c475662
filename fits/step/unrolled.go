package step

import (
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Unrolled builds the whole network in one graph, differentiated by autodiff: the oracle the tests hold the
// other engines to.
const Unrolled = "unrolled"

func init() {
	register(registration{name: Unrolled, summary: "one graph differentiated by autodiff; the test oracle, slow to compile on long sequences",
		rank: 2,
		build: func(backend compute.Backend, scope *mlmodel.Scope, net model.Net, _ Options) (Engine, error) {
			return newUnrolled(backend, scope, net)
		}})
}

// unrolled builds the whole network in one graph (model.Net.Forward) with the time recurrence unrolled, and
// its gradients by autodiff: the oracle of the other engines.
type unrolled struct {
	net         model.Net
	scope       *mlmodel.Scope
	grad, eval  *mlmodel.Exec
	params      []string // trainable variables, in the order of the gradient outputs
	times       timer
	layers      int
	withDropout bool
}

func newUnrolled(backend compute.Backend, scope *mlmodel.Scope, net model.Net) (*unrolled, error) {
	e := &unrolled{net: net, scope: scope, times: timer{}, layers: len(net.Blocks), withDropout: net.Dropout > 0}
	var err error
	// [x, labels, mask, dropout masks...] -> [lossSum, correct, rates..., gradients...].
	e.grad, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, in []*Node) []*Node {
		scope := e.scope
		x := in[0]
		neuron.SetTraining(scope, x.Graph(), true)
		var masks []*Node
		if e.withDropout {
			masks = in[3:]
		}
		outs := e.forward(scope, x, in[1], in[2], masks)
		lossSum, mask := outs[0], in[2]
		loss := Div(lossSum, MaxScalar(ReduceAllSum(mask), 1))
		vars := TrainableIn(scope, scope.Scope())
		e.params = names(vars)
		wrt := make([]*Node, len(vars))
		for i, v := range vars {
			wrt[i] = v.NodeValue(x.Graph())
		}
		return append(outs, Gradient(loss, wrt...)...)
	})
	if err != nil {
		return nil, err
	}
	e.eval, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, x, labels, mask *Node) []*Node {
		scope := e.scope
		neuron.SetTraining(scope, x.Graph(), false)
		return e.forward(scope, x, labels, mask, nil)
	})
	return e, err
}

// forward returns [lossSum, correct, rate sums per block...].
func (e *unrolled) forward(scope *mlmodel.Scope, x, labels, mask *Node, masks []*Node) []*Node {
	out := e.net.Forward(scope, x, masks)
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
	if err := checkDenseBatch(e.net, b, true); err != nil {
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
	if err := checkDenseBatch(e.net, b, false); err != nil {
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
