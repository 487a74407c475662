package neuron

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// TargetFrequenciesHz returns the target frequencies f* in Hz that the layer in ctx's current scope
// realizes, flattened in row-major order of the parameter shape P: the value of VarOmegaStar (or
// VarOmegaStarDT with DTExact) divided by 2π, after the same clamp to [0, cfg.MaxTargetHz()] as the
// graph. They are continuous-time targets (Theorem 1), or realized discrete-time targets with DTExact.
func TargetFrequenciesHz(ctx *context.Context, cfg Config) ([]float64, error) {
	if !cfg.Kind.HasTargetFrequency() {
		return nil, fmt.Errorf("kind %s has no target frequency", cfg.Kind)
	}
	name := VarOmegaStar
	if cfg.DTExact {
		name = VarOmegaStarDT
	}
	omega, err := variableValues(ctx, name)
	if err != nil {
		return nil, err
	}
	fmax, err := cfg.MaxTargetHz()
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(omega))
	for i, w := range omega {
		out[i] = math.Min(math.Max(theory.HzFromRadPerSec(w), 0), fmax)
	}
	return out, nil
}

// TSCoefficients returns β = tanh(β̂) and λ = σ(λ̂) of the FSTS layer in ctx's current scope:
// beta[m−1] and lambda[m−1] hold stage m's coefficients, flattened in row-major order of P.
func TSCoefficients(ctx *context.Context, cfg Config) (beta, lambda [][]float64, err error) {
	if cfg.Kind != FSTS {
		return nil, nil, fmt.Errorf("kind %s has no TS module", cfg.Kind)
	}
	bh, err := variableValues(ctx, VarBetaHat)
	if err != nil {
		return nil, nil, err
	}
	lh, err := variableValues(ctx, VarLambdaHat)
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
			beta[j][i] = math.Tanh(bh[j*n+i])
			lambda[j][i] = 1 / (1 + math.Exp(-lh[j*n+i]))
		}
	}
	return beta, lambda, nil
}

// variableValues returns the values of the variable name in ctx's current scope as float64.
func variableValues(ctx *context.Context, name string) ([]float64, error) {
	v := ctx.GetVariableByScopeAndName(ctx.Scope(), name)
	if v == nil {
		return nil, fmt.Errorf("no variable %q in scope %q", name, ctx.Scope())
	}
	t, err := v.Value()
	if err != nil {
		return nil, fmt.Errorf("variable %q in scope %q: %w", name, ctx.Scope(), err)
	}
	return tensorValues(t)
}

func tensorValues(t *tensors.Tensor) ([]float64, error) {
	switch t.DType() {
	case dtypes.Float32:
		f, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(f))
		for i, x := range f {
			out[i] = float64(x)
		}
		return out, nil
	case dtypes.Float64:
		return tensors.CopyFlatData[float64](t)
	default:
		return nil, fmt.Errorf("unsupported dtype %s", t.DType())
	}
}
