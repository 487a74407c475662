package step

import (
	"fmt"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/scan"
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Loop runs each layer's recurrence on the device: the synapse as one graph call, then the T steps as one
// XLA While loop forward (saving every step's state) and the hand-derived adjoint as one While loop in
// reverse (package fits/scan), both with a static trip count; nothing returns to the host between time
// steps, and compile time does not depend on T.
const Loop = "loop"

func init() {
	register(registration{name: Loop, summary: "each layer's recurrence and its adjoint as two XLA While loops on the device",
		rank: 5,
		needs: func(backend compute.Backend, _ model.Net) error {
			// XLA lists no While among its operations, only that it has functions (loop bodies).
			if c := backend.Capabilities(); !c.Functions ||
				!c.Operations[compute.OpTypeDynamicSlice] || !c.Operations[compute.OpTypeDynamicUpdateSlice] {
				return &UnsupportedError{Err: fmt.Errorf("step: engine %q needs a backend with While loops and dynamic slices (XLA); %q lacks them", Loop, backend.Name())}
			}
			return nil
		},
		build: func(backend compute.Backend, scope *mlmodel.Scope, net model.Net, _ Options) (Engine, error) {
			return newChunked(Loop, backend, scope, net, 0, recurrence{forward: loopForward, vjp: handVJP, saves: true})
		}})
}

// loopForward runs a layer's recurrence over cur [batch, T, out...] from state as one XLA While loop
// (scan.ForwardLoop) and returns its spikes, final state and saved steps [T, states + 1, batch, out...].
func loopForward(scope *mlmodel.Scope, cfg neuron.Config, cur *Node, state []*Node) (spikes *Node, final []*Node, saved *Node) {
	spikes, final, all := scan.ForwardLoop(layerCoefficients(scope, cfg, cur), cur, state)
	return spikes, final, all[0]
}
