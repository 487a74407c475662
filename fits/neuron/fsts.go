package neuron

import (
	"fmt"
	"slices"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
)

// FSTS is FS followed by the TS module of order M ≥ 1 (Eqs. 8–10), with a learnable target (as in FS) and
// the TS variables VarBetaHat and VarLambdaHat of shape [M, P...]: β = tanh(β̂), λ = σ(λ̂), initialized at
// Config.BetaHatInit and Config.LambdaHatInit (Appendix B: β̂ = 0, λ̂ = −3). With the released code's
// nesting (Config.TSMix) the coefficients carry EffectiveLambdas of λ, so that every engine runs Eq. 10's
// recursion; TSCoefficients returns λ itself.
const FSTS Kind = "fsts"

func init() { Register(FSTS, 50, fstsCell{}) }

// FiTS returns the kind of the paper's FiTS neuron with TS order M = order: FS for M = 0, FSTS for M ≥ 1
// (the kernel-runtime table and `fits simulate` name the neuron by M alone).
func FiTS(order int) Kind {
	if order == 0 {
		return FS
	}
	return FSTS
}

type fstsCell struct{}

func (fstsCell) Summary() string {
	return "FS module followed by the TS module of order M >= 1 (learnable f*, beta, lambda)"
}

func (fstsCell) Defaults(cfg *Config, order int) { cfg.Order = order }

func (fstsCell) CheckOrder(order int) error {
	if order < 1 {
		return fmt.Errorf("kind fsts needs a TS order M >= 1, got %d", order)
	}
	return nil
}

func (fstsCell) Validate(cfg Config) error {
	if !finite(cfg.BetaHatInit) || !finite(cfg.LambdaHatInit) {
		return fmt.Errorf("beta-hat and lambda-hat initial values must be finite")
	}
	return cfg.validateTargetRange()
}

func (fstsCell) State(cfg Config) StateLayout {
	if cfg.Order < 1 {
		return StateLayout{Adaptation: true} // an invalid order: no cascade to carry
	}
	return StateLayout{Adaptation: true, Stages: cfg.Order + 1}
}

func (fstsCell) Variables(cfg Config) []string {
	return []string{TargetVariable(cfg), VarBetaHat, VarLambdaHat}
}

func (fstsCell) Coefficients(scope *model.Scope, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int) Coefficients {
	co := targetCoefficients(scope, g, dtype, cfg, paramShape, true)
	m, size := cfg.Order, paramSize(paramShape)
	tsShape := append([]int{m}, paramShape...)
	betaHat := scope.VariableWithValue(VarBetaHat, newTensor(dtype, slices.Repeat([]float64{cfg.BetaHatInit}, m*size), tsShape)).NodeValue(g)
	lambdaHat := scope.VariableWithValue(VarLambdaHat, newTensor(dtype, slices.Repeat([]float64{cfg.LambdaHatInit}, m*size), tsShape)).NodeValue(g)
	co.Beta = unstack(Tanh(betaHat), 0)
	co.Lambda = unstack(Sigmoid(lambdaHat), 0)
	if !cfg.TSMix.Paper() {
		co.Lambda = EffectiveLambdas(co.Lambda, unstack(Sigmoid(Neg(lambdaHat)), 0))
	}
	return co
}

func (fstsCell) TargetFrequenciesHz(scope *model.Scope, cfg Config) ([]float64, error) {
	return targetFrequenciesHz(scope, cfg)
}

func (fstsCell) TSCoefficients(scope *model.Scope, cfg Config) (beta, lambda [][]float64, err error) {
	bh, err := variableValues(scope, VarBetaHat)
	if err != nil {
		return nil, nil, err
	}
	lh, err := variableValues(scope, VarLambdaHat)
	if err != nil {
		return nil, nil, err
	}
	m := cfg.Order
	if m < 1 || len(bh)%m != 0 || len(lh) != len(bh) {
		return nil, nil, fmt.Errorf("TS variables have %d and %d values, not a multiple of M = %d", len(bh), len(lh), m)
	}
	n := len(bh) / m
	beta, lambda = make([][]float64, m), make([][]float64, m)
	for j := range m {
		beta[j], lambda[j] = make([]float64, n), make([]float64, n)
		for i := range n {
			beta[j][i] = theory.BetaOf(bh[j*n+i])
			lambda[j][i] = theory.LambdaOf(lh[j*n+i])
		}
	}
	return beta, lambda, nil
}

// EffectiveLambdas is theory.EffectiveLambdas in graph form: the weights λ′ with which Eq. 10's
// outermost-first recursion computes the released code's innermost-first mix of weights λ, given λ and
// 1 − λ (each M nodes of one shape; 1 − λ is passed in so that it keeps its precision where λ is near 1):
//
//	λ′_M = λ_1⋯λ_M,   λ′_m = c_m / (c_0 + … + c_m),   c_0 = 1 − λ_1,   c_m = λ_1⋯λ_m(1 − λ_{m+1}).
func EffectiveLambdas(lambda, oneMinusLambda []*Node) []*Node {
	m := len(lambda)
	out := make([]*Node, m)
	if m == 0 {
		return out
	}
	sum, prod := oneMinusLambda[0], lambda[0]
	tiny := Scalar(sum.Graph(), sum.DType(), 1e-30)
	for j := 1; j < m; j++ {
		c := Mul(prod, oneMinusLambda[j])
		sum = Add(sum, c)
		out[j-1] = Div(c, Max(sum, tiny)) // sum = 0 only where c = 0: those stages carry no weight
		prod = Mul(prod, lambda[j])
	}
	out[m-1] = prod
	return out
}
