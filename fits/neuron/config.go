package neuron

import (
	"cmp"
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/internal/enum"
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

	// TSMix is the nesting of the λ-mix and the spike's comparison: TSMixOfficial (the zero value: the
	// released code's innermost-first nesting and S = 1 when Ṽ > Vth) or TSMixPaper (Eq. 10's
	// outermost-first nesting and Ṽ ≥ Vth, Algorithm 1). For M ≤ 1 the two nestings are the same neuron.
	TSMix TSMix

	// TargetCoordinate is the trainable coordinate of the target frequency: TargetLogHz (the zero value:
	// ln(f*/Hz), the released code's f_raw) or TargetOmega (Ω* in rad/s, this toolkit's first form).
	TargetCoordinate TargetCoordinate

	// FInit spaces the initial target frequencies over [FMinHz, FMaxHz]: FInitLog (the zero value,
	// geometric) or FInitLinear (the released sMNIST recipe).
	FInit FInit

	// ForwardClip clamps the target frequency in the forward pass to [0, MaxTargetHz] (this toolkit's first
	// form: a neuron past the cap gets zero gradient). Without it the forward pass is untouched and the
	// optimizer's frequency guard keeps f* stable (the released code; package fits/step).
	ForwardClip bool

	// AdaptLIFLearnable gives the adaptive-LIF baseline (AdaptLIF) trainable η, γ initialized at zero
	// (this toolkit's first form); without it η = γ = √κ_CT(0) are fixed (the released code).
	AdaptLIFLearnable bool
}

// TSMix names a nesting of the TS module's λ-mix (Config.TSMix).
type TSMix string

const (
	// TSMixOfficial is the released code's nesting, innermost first: b = V_M; for m = M … 1:
	// b = (1 − λm)·V(m−1) + λm·b; Ṽ = b. Spikes when Ṽ > Vth.
	TSMixOfficial TSMix = "official"
	// TSMixPaper is Eq. 10's nesting, outermost first: Ṽ0 = V0, Ṽm = (1 − λm)·Ṽ(m−1) + λm·Vm, Ṽ = ṼM.
	// Spikes when Ṽ ≥ Vth (Algorithm 1).
	TSMixPaper TSMix = "paper"
)

// ParseTSMix returns the nesting named s ("official" or "paper").
func ParseTSMix(s string) (TSMix, error) {
	return enum.Parse("ts-mix", s, TSMixOfficial, TSMixPaper)
}

// Paper reports whether m is the paper's nesting ("" is the official one).
func (m TSMix) Paper() bool { return m == TSMixPaper }

// Nesting returns the nesting as package theory names it.
func (m TSMix) Nesting() theory.Nesting {
	if m.Paper() {
		return theory.PaperNesting
	}
	return theory.OfficialNesting
}

// TargetCoordinate names the trainable coordinate of the target frequency (Config.TargetCoordinate).
type TargetCoordinate string

const (
	// TargetLogHz trains ln(f*/Hz) (variable VarLogTargetHz, or VarLogTargetHzDT with DTExact).
	TargetLogHz TargetCoordinate = "log-hz"
	// TargetOmega trains Ω* = 2πf* in rad/s (variable VarOmegaStar, or VarOmegaStarDT with DTExact).
	TargetOmega TargetCoordinate = "omega"
)

// ParseTargetCoordinate returns the coordinate named s ("log-hz" or "omega").
func ParseTargetCoordinate(s string) (TargetCoordinate, error) {
	return enum.Parse("target coordinate", s, TargetLogHz, TargetOmega)
}

// FInit names the initial spacing of the target frequencies (Config.FInit).
type FInit string

const (
	// FInitLog spaces f* geometrically over [FMinHz, FMaxHz].
	FInitLog FInit = "log"
	// FInitLinear spaces f* evenly over [FMinHz, FMaxHz].
	FInitLinear FInit = "linear"
)

// ParseFInit returns the spacing named s ("log" or "linear").
func ParseFInit(s string) (FInit, error) {
	return enum.Parse("f* initialization", s, FInitLog, FInitLinear)
}

// Surrogate is the triangular (piecewise-linear) surrogate gradient of the Heaviside spike function
// S = Θ(v − Vth): the forward pass is the exact Heaviside step (S = 1 when v ≥ Vth), the backward pass
// uses dS/dv = Scale·max(0, 1 − |v − Vth|/Width).
type Surrogate struct {
	Width float64 // half-width of the triangle's support, in voltage units, > 0
	Scale float64 // peak height of the derivative at v = Vth, > 0
}

// DefaultSurrogateAlpha is the released code's surrogate_alpha.
const DefaultSurrogateAlpha = 2

// TriangleSurrogate returns the released code's triangle α·max(0, 1 − α|Ṽ − Vth|): width 1/α, peak α.
func TriangleSurrogate(alpha float64) Surrogate { return Surrogate{Width: 1 / alpha, Scale: alpha} }

// DefaultSurrogate is the released code's triangle with α = 2: width 0.5, peak 2.
var DefaultSurrogate = TriangleSurrogate(DefaultSurrogateAlpha)

// BellecSurrogate is the pseudo-derivative of Bellec et al. (2018), width Vth = 1 and peak 0.3: this
// toolkit's first default (`--surrogate=bellec`).
var BellecSurrogate = Surrogate{Width: 1, Scale: 0.3}

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
func (c Config) Ratio() float64 { return cmp.Or(c.EtaGammaRatio, 1) }

// DefaultKappaFraction is the fraction of the semi-implicit Jury bound on κ up to which the target
// frequency may go by default.
const DefaultKappaFraction = 0.99

// kappaFraction returns KappaFraction, or DefaultKappaFraction when it is zero.
func (c Config) kappaFraction() float64 { return cmp.Or(c.KappaFraction, DefaultKappaFraction) }

// MaxTargetHz returns the largest stable target frequency in Hz of the layer: the clamp that ForwardClip
// applies to the trainable target in the graph. It is the target at κ = KappaFraction·κmax (0.99·κmax by default),
// where κmax is the Jury stability bound of the semi-implicit update (Appendix A.2; 77.2 Hz at κmax for
// the SSC constants, 76.8 Hz at 0.99·κmax): the continuous-time target (Theorem 1) by default, the
// realized discrete-time target (Theorem 2) with DTExact.
func (c Config) MaxTargetHz() (float64, error) {
	return c.Constants().MaxTargetHz(c.kappaFraction(), c.DTExact)
}

// DefaultFreqGuardSafety is the released code's FrequencyGuard safety: the fraction of the Jury bound on
// κΔt² (Appendix A.2) up to which the optimizer lets a target frequency go.
const DefaultFreqGuardSafety = 0.98

// GuardCap returns the frequency guard's cap for a layer at safety ∈ (0, 1]: f_safe in Hz, the target at
// κΔt² = safety·(1 + μ̄)(1 + ρ̄) (the continuous-time target, or the DT one with DTExact; 76.42 Hz at the
// SHD/SSC constants and 30.57 Hz at GSC's for safety 0.98), and the same cap in the coordinate of the
// layer's target variable (ln f_safe, or 2πf_safe for TargetOmega).
func (c Config) GuardCap(safety float64) (fSafeHz, cap float64, err error) {
	if !(safety > 0 && safety <= 1) {
		return 0, 0, fmt.Errorf("frequency guard safety must lie in (0, 1], got %g", safety)
	}
	c.KappaFraction = safety
	f, err := c.MaxTargetHz()
	if err != nil {
		return 0, 0, err
	}
	return f, TargetValue(c, f), nil
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
		return fmt.Errorf("surrogate width and scale must be positive and finite, got width %g and scale %g", c.Surrogate.Width, c.Surrogate.Scale)
	}
	if f := c.kappaFraction(); !(f > 0 && f <= 1) {
		return fmt.Errorf("kappa fraction must lie in (0, 1], got %g", c.KappaFraction)
	}
	for _, err := range []error{checkName(c.TSMix, ParseTSMix), checkName(c.TargetCoordinate, ParseTargetCoordinate),
		checkName(c.FInit, ParseFInit)} {
		if err != nil {
			return err
		}
	}
	return cell.Validate(c)
}

// checkName reports whether v is "" (the zero value, a valid choice) or a name that parse accepts.
func checkName[T ~string](v T, parse func(string) (T, error)) error {
	if v == "" {
		return nil
	}
	_, err := parse(string(v))
	return err
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
