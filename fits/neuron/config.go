package neuron

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
)

// Config holds the constants and options of one layer of FiTS neurons.
type Config struct {
	// Kind is the member of the neuron family (a registered cell).
	Kind Kind
	// Order is the TS cascade order M: at least 1 for FSTS, 0 for every kind without a TS module.
	Order int

	// TauM, TauA and Dt are τm, τa and Δt in seconds (Appendix B, table of neuron constants).
	TauM, TauA, Dt float64
	// FMinHz and FMaxHz bound the log-spaced initialization of the target frequencies f* in Hz
	// (the paper: [1, 50] Hz for SHD and SSC, [1, 30] Hz for GSC). Used by the kinds with a target
	// frequency (FSFrozen, FS, FSTS) and by cells that initialize their coupling from the range.
	FMinHz, FMaxHz float64
	// EtaGammaRatio is r = η/γ > 0; η = √(κr), γ = √(κ/r). Zero means 1, the paper's choice.
	EtaGammaRatio float64
	// Vth is the firing threshold (the paper: 1).
	Vth float64

	// BetaHatInit and LambdaHatInit initialize the unconstrained TS coordinates, β = tanh(β̂) and
	// λ = σ(λ̂) (Appendix B: β̂ = 0, λ̂ = −3, so λ ≈ 0.047).
	BetaHatInit, LambdaHatInit float64

	// Surrogate is the triangular surrogate gradient of the spike nonlinearity.
	Surrogate Surrogate

	// ChannelShared makes the neuron parameters (Ω*, β̂, λ̂, η, γ) per channel instead of per neuron:
	// for an input [batch, time, d1, …, dn] the parameters have shape [dn] (channels last, as GoMLX's
	// convolutions) and are shared across d1…d(n−1). Without it they have shape [d1, …, dn].
	ChannelShared bool

	// DTExact switches the FS parameterization from the continuous-time target Ω* of Theorem 1 to the
	// realized discrete-time target (Theorem 2, Appendix A.3): the trainable variable is then
	// Ω*_DT = ω*_DT/Δt in rad/s and κ̄ = κΔt² comes from the DT-exact inverse, so the subthreshold
	// response of the FS module peaks exactly at the learned frequency. The paper does not use this.
	DTExact bool

	// KappaFraction is the fraction of the Jury stability bound on κ (Appendix A.2) up to which the target
	// frequency may go: the graph clamps the target to the target at KappaFraction·κmax (MaxTargetHz).
	// Zero means 0.99; it must lie in (0, 1].
	KappaFraction float64

	// DetachReset stops the gradient through the reset term S·Vth of V[k+1] = ṼM[k+1] − S[k+1]·Vth.
	// The default (false) lets the surrogate gradient flow through the reset as well.
	DetachReset bool
}

// Surrogate is the triangular (piecewise-linear) surrogate gradient of the Heaviside spike function
// S = Θ(v − Vth): the forward pass is the exact Heaviside step (S = 1 when v ≥ Vth), the backward pass
// uses dS/dv = Scale·max(0, 1 − |v − Vth|/Width).
type Surrogate struct {
	Width float64 // half-width of the triangle's support, in voltage units, > 0
	Scale float64 // peak height of the derivative at v = Vth, > 0
}

// DefaultSurrogate is the pseudo-derivative of Bellec et al. (2018): width Vth = 1 and peak 0.3.
var DefaultSurrogate = Surrogate{Width: 1, Scale: 0.3}

// DefaultConfig returns the paper's SHD/SSC settings (Appendix B) for a kind: τm = 0.04 s, τa = 0.2 s,
// Δt = 4 ms, f* log-spaced over [1, 50] Hz, η = γ, Vth = 1, β̂ = 0, λ̂ = −3, and the default surrogate, with
// the kind's own defaults (Cell.Defaults). order is the TS cascade order M, used only by kinds with a TS
// module (FSTS); the others keep order 0. An unregistered kind gives a configuration that Validate rejects.
func DefaultConfig(kind Kind, order int) Config {
	c := Config{
		Kind: kind,
		TauM: theory.SSC.TauM, TauA: theory.SSC.TauA, Dt: theory.SSC.Dt,
		FMinHz: 1, FMaxHz: 50,
		EtaGammaRatio: 1,
		Vth:           1,
		BetaHatInit:   0, LambdaHatInit: -3,
		Surrogate: DefaultSurrogate,
	}
	if cell, err := kind.Cell(); err == nil {
		cell.Defaults(&c, order)
	}
	return c
}

// Constants returns τm, τa and Δt as theory constants.
func (c Config) Constants() theory.Constants {
	return theory.Constants{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt}
}

// Ratio returns r = η/γ (1 when EtaGammaRatio is zero).
func (c Config) Ratio() float64 {
	if c.EtaGammaRatio == 0 {
		return 1
	}
	return c.EtaGammaRatio
}

// DefaultKappaFraction is the fraction of the semi-implicit Jury bound on κ up to which the target
// frequency may go by default.
const DefaultKappaFraction = 0.99

// kappaFraction returns KappaFraction, or DefaultKappaFraction when it is zero.
func (c Config) kappaFraction() float64 {
	if c.KappaFraction == 0 {
		return DefaultKappaFraction
	}
	return c.KappaFraction
}

// MaxTargetHz returns the largest target frequency in Hz that the layer realizes: the clamp applied to
// the trainable target in the graph. It is the target at κ = KappaFraction·κmax (0.99·κmax by default),
// where κmax is the Jury stability bound of the semi-implicit update (Appendix A.2; 77.2 Hz at κmax for
// the SSC constants, 76.8 Hz at 0.99·κmax): the continuous-time target (Theorem 1) by default, the
// realized discrete-time target (Theorem 2) with DTExact.
func (c Config) MaxTargetHz() (float64, error) {
	k := c.Constants()
	if err := k.Validate(); err != nil {
		return 0, err
	}
	frac := c.kappaFraction()
	if !(frac > 0 && frac <= 1) {
		return 0, fmt.Errorf("kappa fraction must lie in (0, 1], got %g", c.KappaFraction)
	}
	kappa := frac * theory.KappaMaxSemiImplicit(k.Mu(), k.Rho(), c.Dt)
	var (
		f  float64
		ok bool
	)
	if c.DTExact {
		f, ok = k.DTTargetHz(kappa)
	} else {
		f, ok = k.TargetHz(kappa)
	}
	if !ok {
		return 0, fmt.Errorf("no target frequency at %g of the stability bound (kappa = %g 1/s^2)", frac, kappa)
	}
	return f, nil
}

// Validate reports whether the configuration is usable: a registered kind that accepts the order, the
// options shared by every kind, then the kind's own (Cell.Validate).
func (c Config) Validate() error {
	cell, err := c.Kind.Cell()
	if err != nil {
		return err
	}
	if err := cell.CheckOrder(c.Order); err != nil {
		return err
	}
	if err := c.Constants().Validate(); err != nil {
		return err
	}
	if r := c.Ratio(); !finite(r) || r <= 0 {
		return fmt.Errorf("eta/gamma ratio must be positive and finite, got %g", c.EtaGammaRatio)
	}
	if !finite(c.Vth) || c.Vth <= 0 {
		return fmt.Errorf("threshold vth must be positive and finite, got %g", c.Vth)
	}
	if !finite(c.Surrogate.Width) || c.Surrogate.Width <= 0 || !finite(c.Surrogate.Scale) || c.Surrogate.Scale <= 0 {
		return fmt.Errorf("surrogate width and scale must be positive and finite, got %+v", c.Surrogate)
	}
	if f := c.kappaFraction(); !(f > 0 && f <= 1) {
		return fmt.Errorf("kappa fraction must lie in (0, 1], got %g", c.KappaFraction)
	}
	return cell.Validate(c)
}

// validateTargetRange checks [FMinHz, FMaxHz] against the stable limit MaxTargetHz (for the cells that
// initialize from the range).
func (c Config) validateTargetRange() error {
	if !(c.FMinHz > 0) || !(c.FMaxHz >= c.FMinHz) || !finite(c.FMaxHz) {
		return fmt.Errorf("target frequency range must satisfy 0 < fmin <= fmax < inf, got [%g, %g] Hz", c.FMinHz, c.FMaxHz)
	}
	fmax, err := c.MaxTargetHz()
	if err != nil {
		return err
	}
	if c.FMaxHz > fmax {
		return fmt.Errorf("target frequency range [%g, %g] Hz exceeds the stable limit %.4g Hz of the semi-implicit update",
			c.FMinHz, c.FMaxHz, fmax)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
