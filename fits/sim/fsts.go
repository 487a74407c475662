package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/fits-snn/fits/fits/theory"
)

// Names of the TS variables β̂ and λ̂ (M values per neuron).
const (
	varBetaHat   = "beta_hat"
	varLambdaHat = "lambda_hat"
)

// fstsTwin is the twin of kind "fsts": the FS map of "fs", and βm = tanh(β̂m), λm = σ(λ̂m), m = 1..M.
type fstsTwin struct{}

func init() { RegisterTwin("fsts", fstsTwin{}) }

func (fstsTwin) Variables(l Layer) []string {
	return []string{targetVariable(l), varBetaHat, varLambdaHat}
}

func (t fstsTwin) Params(l Layer, v Vars) (Params, error) {
	if err := v.checkNames(t.Variables(l)); err != nil {
		return Params{}, err
	}
	p, err := targetParams(l, v)
	if err != nil {
		return Params{}, err
	}
	bh, lh := v[varBetaHat], v[varLambdaHat]
	if l.Order < 1 || len(bh) != l.Order || len(lh) != l.Order {
		return Params{}, fmt.Errorf("TS order M = %d needs M >= 1 values of %s and %s, got %d and %d",
			l.Order, varBetaHat, varLambdaHat, len(bh), len(lh))
	}
	for m := range l.Order {
		p.Beta = append(p.Beta, theory.BetaOf(bh[m]))
		p.Lambda = append(p.Lambda, theory.LambdaOf(lh[m]))
	}
	return p, p.Validate()
}

// Sample draws the target as "fs" does, β̂m uniformly in [−1.5, 1.5] (|β| ≤ 0.91) and λ̂m in [−3, 2]
// (λ from 0.05 to 0.88).
func (fstsTwin) Sample(rng *rand.Rand, l Layer) Vars {
	v := sampleTarget(rng, l)
	bh, lh := make([]float64, l.Order), make([]float64, l.Order)
	for m := range l.Order {
		bh[m] = 3*rng.Float64() - 1.5
		lh[m] = 5*rng.Float64() - 3
	}
	v[varBetaHat], v[varLambdaHat] = bh, lh
	return v
}
