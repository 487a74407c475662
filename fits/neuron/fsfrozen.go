package neuron

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
)

// FSFrozen is the FS module with target frequencies initialized on a log scale and frozen: the variable
// Ω* (as in FS) exists but is not trainable.
const FSFrozen Kind = "fs-frozen"

func init() { Register(FSFrozen, 30, fsFrozenCell{}) }

type fsFrozenCell struct{}

func (fsFrozenCell) Summary() string {
	return "FS module, target frequency f* fixed at its log-spaced initialization"
}

func (fsFrozenCell) Defaults(*Config, int) {}

func (fsFrozenCell) CheckOrder(order int) error { return noTSModule(FSFrozen, order) }

func (fsFrozenCell) Validate(cfg Config) error { return cfg.validateTargetRange() }

func (fsFrozenCell) State(Config) StateLayout { return StateLayout{Adaptation: true} }

func (fsFrozenCell) Variables(cfg Config) []string { return []string{TargetVariable(cfg)} }

func (fsFrozenCell) Coefficients(scope *model.Scope, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int) Coefficients {
	return targetCoefficients(scope, g, dtype, cfg, paramShape, false)
}

func (fsFrozenCell) TargetFrequenciesHz(scope *model.Scope, cfg Config) ([]float64, error) {
	return targetFrequenciesHz(scope, cfg)
}
