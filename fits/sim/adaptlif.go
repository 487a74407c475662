package sim

import "math/rand/v2"

// Names of the coupling variables η and γ (1/s) of the kinds that learn them directly.
const (
	varEta   = "eta"
	varGamma = "gamma"
)

// adaptLIFTwin is the twin of kind "adaptlif": η and γ are the variables eta and gamma, used as they are
// (the graph cell initializes them at zero, where training leaves them).
type adaptLIFTwin struct{}

func init() { RegisterTwin("adaptlif", adaptLIFTwin{}) }

func (adaptLIFTwin) Variables(Layer) []string { return []string{varEta, varGamma} }

func (t adaptLIFTwin) Params(l Layer, v Vars) (Params, error) {
	if err := v.checkNames(t.Variables(l)); err != nil {
		return Params{}, err
	}
	p, err := l.base()
	if err != nil {
		return Params{}, err
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
func (adaptLIFTwin) Sample(rng *rand.Rand, _ Layer) Vars {
	return Vars{varEta: {40 * rng.Float64()}, varGamma: {40 * rng.Float64()}}
}
