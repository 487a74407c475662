package neuron

import (
	"fmt"
	"math"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// NeuronParams are explicit parameter values of one neuron, in the paper's coordinates.
type NeuronParams struct {
	FStarHz float64   // target frequency f* in Hz (continuous-time, or discrete-time with DTExact)
	Beta    []float64 // βm, |βm| < 1, m = 1..M
	Lambda  []float64 // λm ∈ [0, 1], m = 1..M
}

// SimulateNeuron runs one neuron (batch 1) of a layer with configuration cfg and parameters p on backend
// b, for the input currents I[0..T−1], and returns S[k+1] and the pre-reset mixed voltage ṼM[k+1] for
// k = 0..T−1. cfg.Kind must have a target frequency; cfg.Order must equal len(p.Beta). The variables
// are set to Ω* = 2πf*, β̂ = atanh(β) and λ̂ = logit(λ) (±∞ for λ = 0 or 1) in float32.
func SimulateNeuron(b compute.Backend, cfg Config, p NeuronParams, current []float64) (spikes []int, vPre []float64, err error) {
	if !cfg.Kind.HasTargetFrequency() {
		return nil, nil, fmt.Errorf("SimulateNeuron needs a kind with a target frequency, got %s", cfg.Kind)
	}
	if len(p.Beta) != cfg.Order || len(p.Lambda) != cfg.Order {
		return nil, nil, fmt.Errorf("need %d betas and lambdas for order M = %d, got %d and %d",
			cfg.Order, cfg.Order, len(p.Beta), len(p.Lambda))
	}
	if len(current) == 0 {
		return nil, nil, fmt.Errorf("no input currents")
	}
	cfg.FMinHz, cfg.FMaxHz = p.FStarHz, p.FStarHz
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	for m := range p.Beta {
		if !(math.Abs(p.Beta[m]) < 1) {
			return nil, nil, fmt.Errorf("beta[%d] must satisfy |beta| < 1, got %g", m+1, p.Beta[m])
		}
		if !(p.Lambda[m] >= 0 && p.Lambda[m] <= 1) {
			return nil, nil, fmt.Errorf("lambda[%d] must lie in [0, 1], got %g", m+1, p.Lambda[m])
		}
	}
	scope := model.NewStore().RootScope()
	scope.VariableWithValue(TargetVariable(cfg), []float32{float32(TargetValue(cfg, p.FStarHz))})
	if m := cfg.Order; m > 0 {
		bh, lh := make([]float32, m), make([]float32, m)
		for j := range m {
			bh[j] = float32(math.Atanh(p.Beta[j]))
			lh[j] = float32(math.Log(p.Lambda[j]) - math.Log1p(-p.Lambda[j]))
		}
		scope.VariableWithValue(VarBetaHat, tensors.FromFlatDataAndDimensions(bh, m, 1))
		scope.VariableWithValue(VarLambdaHat, tensors.FromFlatDataAndDimensions(lh, m, 1))
	}
	in := make([]float32, len(current))
	for k, c := range current {
		in[k] = float32(c)
	}
	exec, err := model.NewExec(b, scope.Store(), func(_ *model.Scope, x *Node) []*Node {
		s, v := LayerWithVoltage(scope, x, cfg)
		return []*Node{s, v}
	})
	if err != nil {
		return nil, nil, err
	}
	out, err := exec.Call(tensors.FromFlatDataAndDimensions(in, 1, len(in), 1))
	if err != nil {
		return nil, nil, err
	}
	s := tensors.MustCopyFlatData[float32](out[0])
	v := tensors.MustCopyFlatData[float32](out[1])
	spikes, vPre = make([]int, len(s)), make([]float64, len(v))
	for k := range s {
		spikes[k] = int(s[k])
		vPre[k] = float64(v[k])
	}
	return spikes, vPre, nil
}
