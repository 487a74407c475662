package sim

import (
	"math"
	"math/rand/v2"
)

// Names of the coupling variables η and γ (1/s) of the kinds that learn them directly.
const (
	varEta   = "eta"
	varGamma = "gamma"
)

// adaptLIFTwin is the twin of kind "adaptlif": η = γ = √κ_CT(0), fixed (κ of Eq. 5 at Ω* = 0, the
// released code's adaptive LIF); with Layer.AdaptLIFLearnable η and γ are the variables eta and gamma, used
// as they are (the graph cell initializes them at zero, where training leaves them).
type adaptLIFTwin struct{}

func init() { RegisterTwin("adaptlif", adaptLIFTwin{}) }

func (adaptLIFTwin) Variables(l Layer) []string {
	if !l.AdaptLIFLearnable {
		return nil
	}
	return []string{varEta, varGamma}
}

func (t adaptLIFTwin) Params(l Layer, v Vars) (Params, error) {
	if err := v.checkNames(t.Variables(l)); err != nil {
		return Params{}, err
	}
	p, err := l.base()
	if err != nil {
		return Params{}, err
	}
	if !l.AdaptLIFLearnable {
		p.Eta = math.Sqrt(l.Constants().AdaptLIFKappa())
		p.Gamma = p.Eta
		return p, p.Validate()
	}
	if p.Eta, err = v.value(varEta); err != nil {
		return Params{}, err
	}
	if p.Gamma, err = v.value(varGamma); err != nil {
		return Params{}, err
	}
	return p, p.Validate()
}

// Sample draws η and γ uniformly in [0, 40] 1/s (κ ≤ 1600 1/s², far inside the Jury bound): not the
// zeros that training keeps, so that the test exercises the adaptation current.
func (adaptLIFTwin) Sample(rng *rand.Rand, l Layer) Vars {
	if !l.AdaptLIFLearnable {
		return Vars{}
	}
	return Vars{varEta: {40 * rng.Float64()}, varGamma: {40 * rng.Float64()}}
}
