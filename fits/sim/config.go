package sim

import (
	"cmp"
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
)

// Config describes a FiTS neuron the way the paper does (Appendix B): time constants, timestep, target
// frequency, η/γ ratio, TS coefficients and threshold. Params converts it into the constants of
// Algorithm 1.
type Config struct {
	TauM  float64 // membrane time constant τm, seconds
	TauA  float64 // adaptation time constant τa, seconds
	Dt    float64 // timestep Δt, seconds
	FStar float64 // continuous-time target frequency f* = Ω*/(2π), Hz (Theorem 1)
	// EtaGammaRatio is r = η/γ > 0; η = √(κ·r), γ = √(κ/r). Zero means 1, the paper's choice.
	EtaGammaRatio float64
	Beta          []float64 // βm, |βm| < 1, m = 1..M
	Lambda        []float64 // λm ∈ [0, 1], m = 1..M
	Vth           float64   // threshold, > 0
	// Nesting is the λ-mix's nesting (Params.Nesting); the zero value is the released code's.
	Nesting theory.Nesting
}

// Params returns the constants of Algorithm 1 for c: μ = 1/τm, ρ = 1/τa, κ = κ*(2πf*) from the inverse
// map of Theorem 1 (Eq. 5, theory.KappaStar), η = √(κr) and γ = √(κ/r). It fails for non-positive or
// non-finite τm, τa, Δt, f*, r or Vth, for Δt not below both time constants, for |βm| ≥ 1 or λm ∉ [0, 1],
// and when κ violates the Jury stability bound of the semi-implicit FS update (Appendix A.2), i.e. f*
// lies above the largest stable target frequency (about 77.2 Hz for τm = 0.04 s, τa = 0.2 s, Δt = 4 ms).
func (c Config) Params() (Params, error) {
	k := theory.Constants{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt}
	if err := k.Validate(); err != nil {
		return Params{}, err
	}
	r := cmp.Or(c.EtaGammaRatio, 1)
	if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
		return Params{}, fmt.Errorf("eta/gamma ratio must be a positive finite number, got %g", c.EtaGammaRatio)
	}
	kappa, err := k.KappaForTargetHz(c.FStar)
	if err != nil {
		return Params{}, err
	}
	if kmax := theory.KappaMaxSemiImplicit(k.Mu(), k.Rho(), c.Dt); !(kappa < kmax) {
		return Params{}, fmt.Errorf("target frequency %g Hz is above the stability bound of the semi-implicit "+
			"update, %.4g Hz (kappa = %g >= %g 1/s^2, Appendix A.2)", c.FStar, k.Jury().FStarMaxSemiImplicitHz, kappa, kmax)
	}
	p := Params{
		Mu: k.Mu(), Rho: k.Rho(), Dt: c.Dt,
		Eta: math.Sqrt(kappa * r), Gamma: math.Sqrt(kappa / r),
		Beta:   append([]float64(nil), c.Beta...),
		Lambda: append([]float64(nil), c.Lambda...),
		Vth:    c.Vth, Nesting: c.Nesting,
	}
	if err := p.Validate(); err != nil {
		return Params{}, err
	}
	return p, nil
}
