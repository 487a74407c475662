package neuron

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
)

// AdaptLIF is the paper's adaptive-LIF baseline. By default it is the released code's: the FS update of
// Eq. 6 with one fixed coupling η = γ = √κ_CT(0) for every neuron (κ of Eq. 5 at Ω* = 0; 34.1 1/s at the
// SHD/SSC constants), nothing of the neuron learned. With Config.AdaptLIFLearnable it is this toolkit's
// first form, the "Adapt. LIF (frozen zero init.)": η and γ (1/s, variables VarEta and VarGamma of shape
// P) trainable and initialized at zero. Zero is a stationary point: with γ = 0 the adaptation current a stays 0, so
// ∂L/∂η = 0, and with η = 0 nothing depends on a, so ∂L/∂γ = 0. Gradient-based training therefore leaves
// both at zero (the adaptation is frozen at its zero initialization) and the spikes equal LIF's, at the
// computational cost of the adaptive neuron.
const AdaptLIF Kind = "adaptlif"

func init() { Register(AdaptLIF, 20, adaptLIFCell{noTS(AdaptLIF)}) }

type adaptLIFCell struct{ noTS }

func (adaptLIFCell) Summary() string {
	return "adaptive LIF, adaptation coupling eta, gamma trainable but initialized at zero (a stationary point)"
}

func (adaptLIFCell) Validate(Config) error { return nil }

func (adaptLIFCell) State(Config) StateLayout { return StateLayout{Adaptation: true} }

func (adaptLIFCell) Variables(cfg Config) []string {
	if !cfg.AdaptLIFLearnable {
		return nil
	}
	return []string{VarEta, VarGamma}
}

func (adaptLIFCell) Coefficients(scope *model.Scope, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int) Coefficients {
	co := newCoefficients(cfg)
	if !cfg.AdaptLIFLearnable {
		co.EtaDt = BroadcastToDims(Scalar(g, dtype, math.Sqrt(cfg.Constants().AdaptLIFKappa())*cfg.Dt), paramShape...)
		co.GammaDt = co.EtaDt
		return co
	}
	zeros := make([]float64, paramSize(paramShape))
	eta := scope.VariableWithValue(VarEta, newTensor(dtype, zeros, paramShape)).NodeValue(g)
	gamma := scope.VariableWithValue(VarGamma, newTensor(dtype, zeros, paramShape)).NodeValue(g)
	co.EtaDt = MulScalar(eta, cfg.Dt)
	co.GammaDt = MulScalar(gamma, cfg.Dt)
	return co
}
