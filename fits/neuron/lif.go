package neuron

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
)

// LIF is the plain leaky integrate-and-fire neuron (Eq. 1, η = 0): V0[k+1] = (1 − μΔt)V[k] + I[k]. It has
// no variables and carries only V.
const LIF Kind = "lif"

func init() { Register(LIF, 10, lifCell{noTS(LIF)}) }

type lifCell struct{ noTS }

func (lifCell) Summary() string {
	return "plain leaky integrate-and-fire (Eq. 1), no neuron parameter learned"
}

func (lifCell) Validate(Config) error { return nil }

func (lifCell) State(Config) StateLayout { return StateLayout{} }

func (lifCell) Variables(Config) []string { return nil }

func (lifCell) Coefficients(_ *model.Scope, _ *Graph, _ dtypes.DType, cfg Config, _ []int) Coefficients {
	return newCoefficients(cfg)
}
