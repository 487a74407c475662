package theory

import (
	"math"
	"math/cmplx"
)

// CT is the continuous-time FS subsystem of Eq. 2, V̇ = −μV + I − ηa, ȧ = −ρa + γV, through its
// input-to-voltage response (Eq. 3). Mu = μ and Rho = ρ in 1/s, Kappa = κ = ηγ in 1/s².
type CT struct {
	Mu, Rho, Kappa float64
}

// TransferS returns H(s) = (s + ρ)/(s² + (μ+ρ)s + μρ + κ) and dH/ds at complex s (Eq. 3).
func (c CT) TransferS(s complex128) (h, dh complex128) {
	num := s + complex(c.Rho, 0)
	den := s*s + complex(c.Mu+c.Rho, 0)*s + complex(c.Mu*c.Rho+c.Kappa, 0)
	dden := 2*s + complex(c.Mu+c.Rho, 0)
	h = num / den
	dh = (den - num*dden) / (den * den)
	return h, dh
}

// Response returns H(jΩ) of Eq. 3 at Ω in rad/s.
func (c CT) Response(omega float64) complex128 {
	h, _ := c.TransferS(complex(0, omega))
	return h
}

// Magnitude returns |H(jΩ)| at Ω in rad/s (square root of Eq. app_fs_mag_sq).
func (c CT) Magnitude(omega float64) float64 { return cmplx.Abs(c.Response(omega)) }

// Phase returns φ(Ω) = arg H(jΩ) in radians at Ω in rad/s, principal value.
func (c CT) Phase(omega float64) float64 { return cmplx.Phase(c.Response(omega)) }

// GroupDelay returns −dφ/dΩ in seconds at Ω in rad/s, analytically: −Re(H'(s)/H(s)) at s = jΩ.
func (c CT) GroupDelay(omega float64) float64 {
	h, dh := c.TransferS(complex(0, omega))
	return -real(dh / h)
}

// Target returns the target frequency Ω* in rad/s (Theorem 1, Eq. 4); ok is false when |H(jΩ)| has no
// nonzero maximizer (x* ≤ 0 in Eq. app_fs_xstar), and then Ω* is 0.
func (c CT) Target() (omegaStar float64, ok bool) { return OmegaStar(c.Mu, c.Rho, c.Kappa) }

// TargetHz returns f* = Ω*/(2π) in Hz; see Target.
func (c CT) TargetHz() (fstar float64, ok bool) {
	w, ok := c.Target()
	return HzFromRadPerSec(w), ok
}

// Poles returns the roots of the characteristic polynomial s² + (μ+ρ)s + (μρ+κ) (Eq. app_char_poly),
// the one with the nonnegative imaginary part first.
func (c CT) Poles() (complex128, complex128) {
	b := c.Mu + c.Rho
	disc := b*b - 4*(c.Mu*c.Rho+c.Kappa)
	if disc >= 0 {
		r := math.Sqrt(disc)
		// Stable real roots: the larger-magnitude one first, then the product rule.
		q := -0.5 * (b + r)
		p2 := (c.Mu*c.Rho + c.Kappa) / q
		if q == 0 {
			p2 = 0
		}
		return complex(p2, 0), complex(q, 0)
	}
	im := 0.5 * math.Sqrt(-disc)
	return complex(-b/2, im), complex(-b/2, -im)
}

// PoleFrequency returns Ω_pole = ½√(4(μρ+κ) − (μ+ρ)²) in rad/s (Eq. app_pole_frequency); ok is false
// when the poles are real, i.e. the complex-pole condition 4(μρ+κ) > (μ+ρ)² (Eq.
// app_complex_pole_condition) fails (Appendix A.6).
func (c CT) PoleFrequency() (omegaPole float64, ok bool) {
	d := 4*(c.Mu*c.Rho+c.Kappa) - (c.Mu+c.Rho)*(c.Mu+c.Rho)
	if !(d > 0) {
		return 0, false
	}
	return 0.5 * math.Sqrt(d), true
}

// KappaThreshold returns κ₀ = −ρ(ρ+μ) + √(ρ²(ρ+μ)² + ρ⁴) in 1/s², the smallest κ with a nonzero
// target: Ω* of Eq. 4 is positive exactly when κ > κ₀ (Appendix A.1, x* > 0). Computed without
// cancellation as ρ⁴/(ρ(ρ+μ) + √(ρ²(ρ+μ)² + ρ⁴)).
func KappaThreshold(mu, rho float64) float64 {
	a := rho * (rho + mu)
	r4 := rho * rho * rho * rho
	return r4 / (a + math.Sqrt(a*a+r4))
}

// OmegaStar returns the target frequency Ω* = √(√(κ(2ρ² + 2ρμ + κ)) − ρ²) in rad/s (Theorem 1,
// Eq. 4) for μ, ρ > 0 in 1/s and κ in 1/s². When x* = Ω*² ≤ 0 the response has no nonzero maximizer
// (it is maximal at Ω = 0): OmegaStar then returns 0 and ok = false.
//
// x* is evaluated as (κ − κ₀)(κ − κ₁)/(√(κ(2ρ²+2ρμ+κ)) + ρ²), where κ₀ > 0 > κ₁ are the roots of
// κ² + 2ρ(ρ+μ)κ − ρ⁴, which avoids the cancellation of Eq. 4 near the threshold κ₀.
func OmegaStar(mu, rho, kappa float64) (omegaStar float64, ok bool) {
	p := kappa * (2*rho*rho + 2*rho*mu + kappa)
	if !(p > 0) {
		return 0, false
	}
	a := rho * (rho + mu)
	r4 := rho * rho * rho * rho
	k0 := KappaThreshold(mu, rho)
	k1 := -a - math.Sqrt(a*a+r4)
	x := (kappa - k0) * (kappa - k1) / (math.Sqrt(p) + rho*rho)
	if !(x > 0) {
		return 0, false
	}
	return math.Sqrt(x), true
}

// KappaStar returns κ* in 1/s² whose target frequency is Ω* rad/s (Theorem 1, Eq. 5):
// κ* = ρ(ρ+μ)[√(1 + (1 + (Ω*/ρ)²)²/(1 + μ/ρ)²) − 1], evaluated as ρ(ρ+μ)·q/(√(1+q) + 1) with
// q = (1 + (Ω*/ρ)²)²/(1 + μ/ρ)² to avoid cancellation. Ω* = 0 gives the limit KappaThreshold(μ, ρ);
// a negative or NaN Ω* gives NaN.
func KappaStar(mu, rho, omegaStar float64) float64 {
	if !(omegaStar >= 0) {
		return math.NaN()
	}
	u := omegaStar / rho
	v := (1 + u*u) / (1 + mu/rho)
	q := v * v
	return rho * (rho + mu) * q / (math.Sqrt(1+q) + 1)
}

// KappaStarHz is KappaStar with the target given as f* in Hz (Ω* = 2πf*).
func KappaStarHz(mu, rho, fstar float64) float64 { return KappaStar(mu, rho, RadPerSecFromHz(fstar)) }
