package neuron

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/xslices"
)

// TargetFrequenciesHz returns the target frequencies f* in Hz that the layer in scope's current scope
// realizes, flattened in row-major order of the parameter shape P: the value of the target variable
// (TargetVariable: exp of VarLogTargetHz, or VarOmegaStar divided by 2π, or their DT-exact counterparts
// with DTExact), clamped to [0, cfg.MaxTargetHz()] with cfg.ForwardClip as the graph clamps it, and at 0
// otherwise. They are continuous-time targets (Theorem 1), or realized discrete-time targets with DTExact.
// It is an error for kinds without a target frequency (see TargetFrequencyCell).
func TargetFrequenciesHz(scope *model.Scope, cfg Config) ([]float64, error) {
	tc, err := cellAs[TargetFrequencyCell](cfg.Kind, "target frequency")
	if err != nil {
		return nil, err
	}
	return tc.TargetFrequenciesHz(scope, cfg)
}

// TSCoefficients returns β = tanh(β̂) and λ = σ(λ̂) of the layer in scope's current scope: beta[m−1] and
// lambda[m−1] hold stage m's coefficients, flattened in row-major order of P. It is an error for kinds
// without a TS module (see TSCell).
func TSCoefficients(scope *model.Scope, cfg Config) (beta, lambda [][]float64, err error) {
	tc, err := cellAs[TSCell](cfg.Kind, "TS module")
	if err != nil {
		return nil, nil, err
	}
	return tc.TSCoefficients(scope, cfg)
}

// cellAs returns k's cell as a T, or an error saying that kind k has no what.
func cellAs[T Cell](k Kind, what string) (T, error) {
	cell, err := k.Cell()
	tc, ok := cell.(T)
	if err == nil && !ok {
		err = fmt.Errorf("kind %s has no %s", k, what)
	}
	return tc, err
}

// variableValues returns the values of the variable name in scope's current scope as float64.
func variableValues(scope *model.Scope, name string) ([]float64, error) {
	v := scope.Store().GetVariable(model.JoinPath(scope.Scope(), name))
	if v == nil {
		return nil, fmt.Errorf("no variable %q in scope %q", name, scope.Scope())
	}
	t, err := v.Value()
	if err != nil {
		return nil, fmt.Errorf("variable %q in scope %q: %w", name, scope.Scope(), err)
	}
	return tensorValues(t)
}

func tensorValues(t *tensors.Tensor) ([]float64, error) {
	switch t.DType() {
	case dtypes.Float32:
		f, err := tensors.CopyFlatData[float32](t)
		return xslices.Map(f, func(v float32) float64 { return float64(v) }), err
	case dtypes.Float64:
		return tensors.CopyFlatData[float64](t)
	default:
		return nil, fmt.Errorf("unsupported dtype %s", t.DType())
	}
}
