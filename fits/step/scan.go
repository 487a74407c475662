package step

import (
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/scan"
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Scan is the chunked engine with each chunk's vector-Jacobian product from the hand-derived adjoint of
// Algorithm 1 (package fits/scan) instead of autodiff of the unrolled chunk.
const Scan = "scan"

func init() {
	register(registration{name: Scan, summary: "chunked with the hand-derived adjoint of Algorithm 1",
		rank: 3, needs: needsDynamicSlices(Scan),
		build: func(backend compute.Backend, scope *mlmodel.Scope, net model.Net, opts Options) (Engine, error) {
			return newChunked(Scan, backend, scope, net, opts.Chunk, recurrence{forward: layerForward, vjp: handVJP})
		}})
}

// handVJP returns the cotangents of the starting state, of the chunk's current and of the neurons'
// trainable variables vars, from the hand-derived adjoint of Algorithm 1 and the autodiff of the small map
// from the variables to the per-step coefficients (scan.VariableGrads): the same values autodiff of
// neuron.LayerFrom gives. Without saved (the scan engine) scan.Backward recomputes the chunk's forward
// values from its starting state; with saved (the loop engine: loopForward's saved steps) scan.BackwardLoop
// reads them and runs the reverse recurrence as a While loop.
func handVJP(scope *mlmodel.Scope, cfg neuron.Config, vars []*mlmodel.Variable, cur *Node, state []*Node, saved, cotSpikes *Node, cotFinal []*Node) []*Node {
	c := layerCoefficients(scope, cfg, cur)
	g := cur.Graph()
	var cotState []*Node
	var cotCur *Node
	var cg scan.CoefficientGrads
	if saved != nil {
		cotState, cotCur, cg = scan.BackwardLoop(c, cur, state, []*Node{saved}, cotSpikes, cotFinal)
	} else {
		cotState, cotCur, cg = scan.Backward(c, cur, state, nil, cotSpikes, cotFinal)
	}
	wrt := make([]*Node, len(vars))
	for i, v := range vars {
		wrt[i] = v.NodeValue(g)
	}
	return append(append(cotState, cotCur), scan.VariableGrads(c, cg, wrt...)...)
}
