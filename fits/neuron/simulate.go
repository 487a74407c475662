package neuron

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// NeuronParams are explicit parameter values of one neuron, in the paper's coordinates.
type NeuronParams struct {
	FStarHz float64   // target frequency f* in Hz (continuous-time, or discrete-time with DTExact)
	Beta    []float64 // βm, |βm| < 1, m = 1..M
	Lambda  []float64 // λm ∈ [0, 1], m = 1..M
}

// Scope returns the root scope of a new store holding the variables of one neuron (batch 1) of a layer
// with configuration cfg, set to p in float32: the target variable at f* (TargetValue), β̂ = atanh(β) and
// λ̂ = logit(λ) (±∞ for λ = 0 or 1); and cfg with its target range [FMinHz, FMaxHz] narrowed to f*, for
// the graphs that run the neuron (`fits simulate --engine=graph`). cfg.Kind must have a target frequency; cfg.Order must equal len(p.Beta).
func (p NeuronParams) Scope(cfg Config) (*model.Scope, Config, error) {
	if !cfg.Kind.HasTargetFrequency() {
		return nil, cfg, fmt.Errorf("explicit neuron parameters need a kind with a target frequency, got %s", cfg.Kind)
	}
	if len(p.Beta) != cfg.Order || len(p.Lambda) != cfg.Order {
		return nil, cfg, fmt.Errorf("need %d betas and lambdas for order M = %d, got %d and %d",
			cfg.Order, cfg.Order, len(p.Beta), len(p.Lambda))
	}
	cfg.FMinHz, cfg.FMaxHz = p.FStarHz, p.FStarHz
	if err := cfg.Validate(); err != nil {
		return nil, cfg, err
	}
	for m := range p.Beta {
		if !(math.Abs(p.Beta[m]) < 1) {
			return nil, cfg, fmt.Errorf("beta[%d] must satisfy |beta| < 1, got %g", m+1, p.Beta[m])
		}
		if !(p.Lambda[m] >= 0 && p.Lambda[m] <= 1) {
			return nil, cfg, fmt.Errorf("lambda[%d] must lie in [0, 1], got %g", m+1, p.Lambda[m])
		}
	}
	scope := model.NewStore().RootScope()
	scope.VariableWithValue(TargetVariable(cfg), []float32{float32(TargetValue(cfg, p.FStarHz))})
	if m := cfg.Order; m > 0 {
		bh, lh := make([]float32, m), make([]float32, m)
		for j := range m {
			bh[j], lh[j] = float32(theory.BetaHatOf(p.Beta[j])), float32(theory.LambdaHatOf(p.Lambda[j]))
		}
		scope.VariableWithValue(VarBetaHat, tensors.FromFlatDataAndDimensions(bh, m, 1))
		scope.VariableWithValue(VarLambdaHat, tensors.FromFlatDataAndDimensions(lh, m, 1))
	}
	return scope, cfg, nil
}
