package step

import (
	"github.com/fits-snn/fits/fits/model"
	"github.com/gomlx/compute"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Stepwise is the chunked engine with chunks of one step: one graph call per time step and layer, the
// form closest to the released code's Python loop.
const Stepwise = "stepwise"

func init() {
	register(registration{name: Stepwise, summary: "one step per graph call",
		rank: 1, needs: needsDynamicSlices(Stepwise),
		build: func(backend compute.Backend, scope *mlmodel.Scope, net model.Net, _ Options) (Engine, error) {
			return newChunked(Stepwise, backend, scope, net, 1, recurrence{forward: layerForward, vjp: autodiffVJP})
		}})
}
