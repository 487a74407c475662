package theory

import (
	"errors"
	"fmt"
	"math"
)

// FS is the discrete-time FS module of Eq. 6 (semi-implicit Euler) in the barred coordinates of
// Theorem 2: MuBar = μ̄ = 1 − μΔt, RhoBar = ρ̄ = 1 − ρΔt, KappaBar = κ̄ = ηγΔt².
//
// Its transfer function from I to V (with V[k+1] ≡ V0[k+1], no spikes) is
//
//	H_d(z) = (z − ρ̄) / ((z − μ̄)(z − ρ̄) + κ̄z)
//
// (proof of Theorem 2, Appendix A.3), with I[k] entering V[k+1].
type FS struct {
	MuBar, RhoBar, KappaBar float64
}

// EvalZ returns H_d(z) and dH_d/dz.
func (f FS) EvalZ(z complex128) (h, dh complex128) {
	mb, rb, kb := complex(f.MuBar, 0), complex(f.RhoBar, 0), complex(f.KappaBar, 0)
	num := z - rb
	den := (z-mb)*(z-rb) + kb*z
	dden := (z - rb) + (z - mb) + kb
	return num / den, (den - num*dden) / (den * den)
}

// Response returns H_d(e^{jω}) at ω in rad/sample (Eq. app_fs_dt_transfer_uc_bar).
func (f FS) Response(omega float64) complex128 { return FrequencyResponse(f, omega) }

// Magnitude returns |H_d(e^{jω})| at ω in rad/sample.
func (f FS) Magnitude(omega float64) float64 { return Magnitude(f, omega) }

// Phase returns φ_FS(ω) = arg H_d(e^{jω}) in radians (Eq. 7), principal value.
func (f FS) Phase(omega float64) float64 { return Phase(f, omega) }

// GroupDelay returns τ_FS(ω) = −dφ_FS/dω in samples (Eq. 7), analytic.
func (f FS) GroupDelay(omega float64) float64 { return GroupDelay(f, omega) }

// MagnitudeSquaredX returns M(x) = |H_d(e^{jω})|² as a function of x = cos ω
// (Eq. app_fs_dt_Mx).
func (f FS) MagnitudeSquaredX(x float64) float64 {
	mb, rb, kb := f.MuBar, f.RhoBar, f.KappaBar
	c := kb - mb - rb
	num := 1 + rb*rb - 2*rb*x
	den := 1 + c*c + mb*mb*rb*rb - 2*mb*rb + 2*c*(1+mb*rb)*x + 4*mb*rb*x*x
	return num / den
}

// Stationary returns the left side of the stationarity quadratic of Theorem 2 at x = cos ω
// (Eq. app_fs_dt_stationary_quad_bar):
// 4μ̄ρ̄²x² − 4μ̄ρ̄(1+ρ̄²)x + μ̄(1+ρ̄²)² − κ̄((1−ρ̄²)(1−μ̄ρ̄) + κ̄ρ̄).
// dM/dx has the sign of this quadratic.
func (f FS) Stationary(x float64) float64 {
	mb, rb, kb := f.MuBar, f.RhoBar, f.KappaBar
	n := 1 + rb*rb - 2*rb*x
	return mb*n*n - kb*((1-rb*rb)*(1-mb*rb)+kb*rb)
}

// Stable reports whether both poles of H_d lie strictly inside the unit circle (second-order Jury
// criterion on z² − (μ̄ + ρ̄ − κ̄)z + μ̄ρ̄, Appendix A.2).
func (f FS) Stable() bool { return juryStable(f.MuBar+f.RhoBar-f.KappaBar, f.MuBar*f.RhoBar) }

// DTTarget is the closed-form realized discrete-time target frequency of Theorem 2 (Appendix A.3).
type DTTarget struct {
	// XMinus, XPlus are the stationary candidates x± of Eq. app_fs_dt_stationary_roots_bar_theorem
	// (x = cos ω); NaN when the discriminant is negative (outside the theorem's assumptions).
	XMinus, XPlus float64
	// OmegaMinus, OmegaPlus are ω± = arccos(x±) in rad/sample (Eq.
	// app_fs_dt_stationary_freqs_bar_theorem); NaN when x± ∉ (−1, 1).
	OmegaMinus, OmegaPlus float64
	// Omega is the realized target ω*_DT in rad/sample: the interior candidate that is the global
	// maximizer of |H_d| over [0, π]; 0 when OK is false.
	Omega float64
	// OK reports whether a realized target exists: an interior candidate beats both endpoints.
	OK bool
}

// Target returns the realized discrete-time target of Theorem 2. It computes x± and ω±, evaluates
// |H_d| at the interior candidates and at ω = 0 and ω = π, and accepts the best candidate only if it
// beats both endpoints. Under 0 < μ̄, ρ̄ < 1 and κ̄ > 0, x₊ > 1 always and x₋ (when interior) is a
// maximum, since dM/dx has the sign of the upward quadratic of Eq. app_fs_dt_stationary_quad_bar.
//
// ω₋ is evaluated from 1 − x₋ = (√S − (1−ρ̄)²)/(2ρ̄) or 1 + x₋ = ((1+ρ̄)² − √S)/(2ρ̄) by half-angle
// formulas, S = (κ̄/μ̄)((1−ρ̄²)(1−μ̄ρ̄) + κ̄ρ̄), which keeps full accuracy near ω = 0 and ω = π.
func (f FS) Target() DTTarget {
	mb, rb, kb := f.MuBar, f.RhoBar, f.KappaBar
	t := DTTarget{XMinus: math.NaN(), XPlus: math.NaN(), OmegaMinus: math.NaN(), OmegaPlus: math.NaN()}
	if rb == 0 || mb == 0 {
		return t
	}
	s := kb / mb * ((1-rb*rb)*(1-mb*rb) + kb*rb)
	if !(s >= 0) {
		return t
	}
	r := math.Sqrt(s)
	t.XMinus = (1 + rb*rb - r) / (2 * rb)
	t.XPlus = (1 + rb*rb + r) / (2 * rb)
	t.OmegaMinus = arccosStable(t.XMinus, (r-(1-rb)*(1-rb))/(2*rb), ((1+rb)*(1+rb)-r)/(2*rb))
	t.OmegaPlus = arccosStable(t.XPlus, (-r-(1-rb)*(1-rb))/(2*rb), ((1+rb)*(1+rb)+r)/(2*rb))
	m0, mPi := f.Magnitude(0), f.Magnitude(math.Pi)
	bestMag := math.Max(m0, mPi)
	for _, w := range []float64{t.OmegaMinus, t.OmegaPlus} {
		if math.IsNaN(w) {
			continue
		}
		if m := f.Magnitude(w); m > bestMag {
			bestMag, t.Omega, t.OK = m, w, true
		}
	}
	return t
}

// arccosStable returns arccos(x) for x ∈ (−1, 1) given also oneMinus = 1 − x and onePlus = 1 + x
// computed without cancellation; NaN when x ∉ (−1, 1).
func arccosStable(x, oneMinus, onePlus float64) float64 {
	if !(x > -1 && x < 1) || !(oneMinus > 0) || !(onePlus > 0) {
		return math.NaN()
	}
	switch {
	case x > 0.5:
		return 2 * math.Asin(math.Sqrt(oneMinus/2))
	case x < -0.5:
		return math.Pi - 2*math.Asin(math.Sqrt(onePlus/2))
	default:
		return math.Acos(x)
	}
}

// ErrAboveNyquist is returned by KappaBarForTarget when the requested target is not below ω = π.
var ErrAboveNyquist = errors.New("no κ̄ realizes the target: it is above the achievable range")

// KappaBarForTarget is the DT-exact inverse (beyond the paper): it returns κ̄ > 0 such that the
// realized discrete-time target of H_d (Theorem 2) is exactly ω rad/sample.
//
// Putting x = cos ω into Eq. app_fs_dt_stationary_quad_bar and noting that
// 4ρ̄²x² − 4ρ̄(1+ρ̄²)x + (1+ρ̄²)² = N² with N = 1 + ρ̄² − 2ρ̄x = |e^{jω} − ρ̄|², the quadratic in κ̄ is
//
//	ρ̄κ̄² + (1−ρ̄²)(1−μ̄ρ̄)κ̄ − μ̄N² = 0,
//
// whose unique positive root is κ̄ = 2μ̄N²/(b + √(b² + 4ρ̄μ̄N²)), b = (1−ρ̄²)(1−μ̄ρ̄). Since x < 1 < x₊,
// x is the candidate x₋ of that κ̄, a maximum (see Target). Every ω ∈ (0, π) is reachable with a
// stable module: at ω = π the root lies below the Jury bound (1+μ̄)(1+ρ̄) because the quadratic
// evaluated there equals (1+ρ̄)²(1−μ̄ρ̄)² > 0. The function still verifies, with Target, that the
// result is the global maximizer at ω and that the module is stable.
//
// It requires 0 < μ̄ < 1 and 0 < ρ̄ < 1; it returns ErrAboveNyquist for ω ≥ π.
func KappaBarForTarget(muBar, rhoBar, omega float64) (float64, error) {
	if !(muBar > 0 && muBar < 1 && rhoBar > 0 && rhoBar < 1) {
		return 0, fmt.Errorf("need 0 < μ̄ < 1 and 0 < ρ̄ < 1, got μ̄ = %g, ρ̄ = %g", muBar, rhoBar)
	}
	if !(omega > 0) {
		return 0, fmt.Errorf("target must be a positive angular frequency, got %g rad/sample", omega)
	}
	if omega >= math.Pi {
		return 0, ErrAboveNyquist
	}
	s := math.Sin(omega / 2)
	n := (1-rhoBar)*(1-rhoBar) + 4*rhoBar*s*s
	b := (1 - rhoBar*rhoBar) * (1 - muBar*rhoBar)
	kb := 2 * muBar * n * n / (b + math.Sqrt(b*b+4*rhoBar*muBar*n*n))
	f := FS{MuBar: muBar, RhoBar: rhoBar, KappaBar: kb}
	if !f.Stable() {
		return 0, fmt.Errorf("κ̄ = %g realizing ω = %g rad/sample is unstable", kb, omega)
	}
	t := f.Target()
	if !t.OK || math.Abs(t.Omega-omega) > 1e-9*math.Max(1, omega) {
		return 0, fmt.Errorf("κ̄ = %g does not realize ω = %g rad/sample as the global maximum (got %g)", kb, omega, t.Omega)
	}
	return kb, nil
}
