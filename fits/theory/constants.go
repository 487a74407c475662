package theory

import (
	"errors"
	"fmt"
	"math"
)

// Constants are the fixed constants of one FiTS layer (Appendix, table of dataset-specific neuron
// constants): the membrane and adaptation time constants and the simulation timestep, all in seconds.
type Constants struct {
	TauM float64 // membrane time constant τm, seconds
	TauA float64 // adaptation time constant τa, seconds
	Dt   float64 // simulation timestep Δt, seconds
}

// The paper's dataset-specific constants (Appendix, table of neuron constants).
var (
	// SHD and SSC: τm = 0.04 s, τa = 0.2 s, Δt = 4 ms.
	SHD = Constants{TauM: 0.04, TauA: 0.2, Dt: 0.004}
	SSC = SHD
	// GSC: τm = 0.1 s, τa = 0.5 s, Δt = 10 ms.
	GSC = Constants{TauM: 0.1, TauA: 0.5, Dt: 0.01}
)

// MaxStepsPerTau caps τm/Δt and τa/Δt: beyond it 1 − Δt/τ is 1 to within float64 rounding, and the
// closed forms give κ = NaN.
const MaxStepsPerTau = 1e9

// ErrTooManySteps is wrapped by Validate's error for a time constant above MaxStepsPerTau steps.
var ErrTooManySteps = errors.New("the closed forms lose all precision (kappa would not be finite)")

// Validate reports whether the constants are usable: τm, τa and Δt finite and positive, Δt smaller
// than both time constants, so that 0 < μ̄ < 1 and 0 < ρ̄ < 1 as Theorem 2 (Appendix A.3) assumes, and
// neither time constant more than MaxStepsPerTau steps long.
func (c Constants) Validate() error {
	named := []struct {
		name string
		v    float64
	}{{"tau-m", c.TauM}, {"tau-a", c.TauA}, {"dt", c.Dt}}
	for _, p := range named {
		if math.IsNaN(p.v) || math.IsInf(p.v, 0) || p.v <= 0 {
			return fmt.Errorf("%s must be a positive finite number of seconds, got %g", p.name, p.v)
		}
	}
	for _, p := range named[:2] {
		switch {
		case c.Dt >= p.v:
			return fmt.Errorf("dt (%g s) must be smaller than %s (%g s)", c.Dt, p.name, p.v)
		case p.v/c.Dt > MaxStepsPerTau:
			return fmt.Errorf("%s (%g s) spans more than %g time steps of dt = %g s: %w", p.name, p.v, MaxStepsPerTau, c.Dt, ErrTooManySteps)
		}
	}
	return nil
}

// Mu returns μ = 1/τm in 1/s (Eq. 1).
func (c Constants) Mu() float64 { return 1 / c.TauM }

// Rho returns ρ = 1/τa in 1/s (Eq. 2).
func (c Constants) Rho() float64 { return 1 / c.TauA }

// MuBar returns μ̄ = 1 − μΔt (Theorem 2).
func (c Constants) MuBar() float64 { return 1 - c.Dt/c.TauM }

// RhoBar returns ρ̄ = 1 − ρΔt (Theorem 2).
func (c Constants) RhoBar() float64 { return 1 - c.Dt/c.TauA }

// KappaBar returns κ̄ = κΔt² for κ in 1/s² (Theorem 2).
func (c Constants) KappaBar(kappa float64) float64 { return kappa * c.Dt * c.Dt }

// KappaFromBar returns κ = κ̄/Δt² in 1/s².
func (c Constants) KappaFromBar(kappaBar float64) float64 { return kappaBar / (c.Dt * c.Dt) }

// CT returns the continuous-time FS subsystem (Eq. 3) with these constants and κ in 1/s².
func (c Constants) CT(kappa float64) CT { return CT{Mu: c.Mu(), Rho: c.Rho(), Kappa: kappa} }

// FS returns the semi-implicit discrete-time FS module (Eq. 6) with these constants and κ in 1/s².
func (c Constants) FS(kappa float64) FS {
	return FS{MuBar: c.MuBar(), RhoBar: c.RhoBar(), KappaBar: c.KappaBar(kappa)}
}

// RadPerSampleFromHz converts f in Hz to ω = 2πfΔt in rad/sample.
func (c Constants) RadPerSampleFromHz(f float64) float64 { return 2 * math.Pi * f * c.Dt }

// HzFromRadPerSample converts ω in rad/sample to f = ω/(2πΔt) in Hz.
func (c Constants) HzFromRadPerSample(omega float64) float64 { return omega / (2 * math.Pi * c.Dt) }

// NyquistHz returns 1/(2Δt), the frequency of ω = π.
func (c Constants) NyquistHz() float64 { return 1 / (2 * c.Dt) }

// RadPerSecFromHz converts f in Hz to Ω = 2πf in rad/s.
func RadPerSecFromHz(f float64) float64 { return 2 * math.Pi * f }

// HzFromRadPerSec converts Ω in rad/s to f = Ω/(2π) in Hz.
func HzFromRadPerSec(omega float64) float64 { return omega / (2 * math.Pi) }

// KappaForTargetHz returns κ* in 1/s² that puts the continuous-time target frequency at fstar Hz
// (Theorem 1, Eq. 5). It fails for fstar that is not positive and finite.
func (c Constants) KappaForTargetHz(fstar float64) (float64, error) {
	if err := checkTargetHz(fstar); err != nil {
		return 0, err
	}
	return KappaStar(c.Mu(), c.Rho(), RadPerSecFromHz(fstar)), nil
}

// checkTargetHz reports whether fstar is a positive finite target frequency in Hz.
func checkTargetHz(fstar float64) error {
	if math.IsNaN(fstar) || math.IsInf(fstar, 0) || fstar <= 0 {
		return fmt.Errorf("target frequency must be a positive finite number of Hz, got %g", fstar)
	}
	return nil
}

// TargetHz returns the continuous-time target frequency f*_CT = Ω*/(2π) in Hz for κ in 1/s²
// (Theorem 1, Eq. 4); ok is false when |H(jΩ)| has no nonzero maximizer.
func (c Constants) TargetHz(kappa float64) (f float64, ok bool) { return c.CT(kappa).TargetHz() }

// DTTargetHz returns the realized discrete-time target f*_DT = ω*_DT/(2πΔt) in Hz of the semi-implicit
// FS module with κ in 1/s², in closed form (Theorem 2, Appendix A.3); ok is false when none exists.
func (c Constants) DTTargetHz(kappa float64) (f float64, ok bool) {
	t := c.FS(kappa).Target()
	return c.HzFromRadPerSample(t.Omega), t.OK
}

// DTSweepTargetHz returns the realized discrete-time target in Hz found numerically by SweepPeak,
// independent of Theorem 2; ok is false when the global maximum of |H_d| lies at ω = 0 or π.
func (c Constants) DTSweepTargetHz(kappa float64) (f float64, ok bool) {
	w, ok := SweepPeak(c.FS(kappa))
	return c.HzFromRadPerSample(w), ok
}

// KappaDTExact returns κ in 1/s² whose realized discrete-time target (Theorem 2) is exactly fstar Hz:
// the DT-exact inverse (see KappaBarForTarget). It fails when fstar is not in (0, 1/(2Δt)).
func (c Constants) KappaDTExact(fstar float64) (float64, error) {
	if err := checkTargetHz(fstar); err != nil {
		return 0, err
	}
	kappa, err := c.KappaForTarget(RadPerSecFromHz(fstar), true)
	if errors.Is(err, ErrAboveNyquist) {
		return 0, fmt.Errorf("%w: %g Hz is not below the Nyquist frequency 1/(2Δt) = %g Hz", err, fstar, c.NyquistHz())
	}
	return kappa, err
}

// KappaForTarget returns κ in 1/s² that puts a layer's target frequency at omega = Ω* ≥ 0 rad/s, the
// map from a (clamped) target variable to the coupling: κ* of Theorem 1's inverse (Eq. 5; 0 at Ω* = 0)
// or, with dtExact, the κ whose realized discrete-time target (Theorem 2) is ω = Ω*Δt rad/sample
// (KappaBarForTarget, an error for ω = 0 or ω ≥ π).
func (c Constants) KappaForTarget(omega float64, dtExact bool) (float64, error) {
	if !dtExact {
		return KappaStar(c.Mu(), c.Rho(), omega), nil
	}
	kb, err := KappaBarForTarget(c.MuBar(), c.RhoBar(), omega*c.Dt)
	if err != nil {
		return 0, err
	}
	return c.KappaFromBar(kb), nil
}

// AdaptLIFKappa returns κ_CT(0) = κ*(Ω* = 0) in 1/s² (Eq. 5 at Ω* = 0), the fixed coupling κ = ηγ of
// the released code's adaptive LIF (η = γ = √κ_CT(0)).
func (c Constants) AdaptLIFKappa() float64 { return KappaStar(c.Mu(), c.Rho(), 0) }

// KappaMax returns the clamp on κ = ηγ in 1/s² at frac ∈ (0, 1] of the semi-implicit update's Jury bound
// (KappaMaxSemiImplicit, Appendix A.2). It fails for invalid constants or frac outside (0, 1].
func (c Constants) KappaMax(frac float64) (float64, error) {
	if err := c.Validate(); err != nil {
		return 0, err
	}
	if !(frac > 0 && frac <= 1) {
		return 0, fmt.Errorf("kappa fraction must lie in (0, 1], got %g", frac)
	}
	return frac * KappaMaxSemiImplicit(c.Mu(), c.Rho(), c.Dt), nil
}

// MaxTargetHz returns the largest target frequency in Hz that a layer realizes, the target at
// κ = KappaMax(frac): continuous-time (Theorem 1) or, with dtExact, realized discrete-time (Theorem 2).
func (c Constants) MaxTargetHz(frac float64, dtExact bool) (float64, error) {
	kappa, err := c.KappaMax(frac)
	if err != nil {
		return 0, err
	}
	f, ok := c.TargetHz(kappa)
	if dtExact {
		f, ok = c.DTTargetHz(kappa)
	}
	if !ok {
		return 0, fmt.Errorf("no target frequency at %g of the stability bound (kappa = %g 1/s^2)", frac, kappa)
	}
	return f, nil
}
