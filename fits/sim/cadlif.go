package sim

import (
	"math"
	"math/rand/v2"
)

// cadlifTwin is the twin of kind "cadlif": η and γ are the variables eta and gamma, each clamped to
// [0, √KappaMax()] as the graph cell clamps them, so that κ = ηγ ≤ KappaMax().
type cadlifTwin struct{}

func init() { RegisterTwin("cadlif", cadlifTwin{}) }

func (cadlifTwin) Variables(Layer) []string { return []string{varEta, varGamma} }

func (t cadlifTwin) Params(l Layer, v Vars) (Params, error) {
	if err := v.checkNames(t.Variables(l)); err != nil {
		return Params{}, err
	}
	p, err := l.base()
	if err != nil {
		return Params{}, err
	}
	kmax, err := l.KappaMax()
	if err != nil {
		return Params{}, err
	}
	bound := math.Sqrt(kmax)
	if p.Eta, err = v.value(varEta); err != nil {
		return Params{}, err
	}
	if p.Gamma, err = v.value(varGamma); err != nil {
		return Params{}, err
	}
	p.Eta, p.Gamma = math.Min(math.Max(p.Eta, 0), bound), math.Min(math.Max(p.Gamma, 0), bound)
	return p, p.Validate()
}

// Sample draws η and γ uniformly in [0, 0.75·√KappaMax()], so κ = ηγ up to 0.56·KappaMax(), about the
// range the FS kinds are sampled in (f* up to 60 Hz). Closer to the Jury bound a pole approaches −1 and
// float32 rounding in the graph grows beyond the tests' tolerance; the clamp has its own tests.
func (cadlifTwin) Sample(rng *rand.Rand, l Layer) Vars {
	kmax, err := l.KappaMax()
	if err != nil {
		panic(err)
	}
	b := math.Sqrt(kmax)
	return Vars{varEta: {0.75 * b * rng.Float64()}, varGamma: {0.75 * b * rng.Float64()}}
}
