package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fits-snn/fits/fits/theory"
)

// Names of the target-frequency variables: Ω* (continuous-time, Theorem 1) or Ω*_DT = ω*_DT/Δt (realized
// discrete-time, Theorem 2), both in rad/s; or their logarithms ln(f*/Hz), ln(f*_DT/Hz).
const (
	varOmegaStar     = "omega_star"
	varOmegaStarDT   = "omega_star_dt"
	varLogTargetHz   = "log_target_hz"
	varLogTargetHzDT = "log_target_hz_dt"
)

// fsTwin is the twin of kind "fs": the target (Ω* = 2π·exp(x) for the log coordinate) is clamped to
// [0, 2π·MaxTargetHz] when the layer clips in the forward pass, mapped to κ by Eq. 5 (or the DT-exact
// inverse of Theorem 2), and η = √(κr), γ = √(κ/r).
type fsTwin struct{}

// The twin of kind "fs-frozen" is fsTwin too: the same map (the target is only not trained).
func init() {
	RegisterTwin("fs", fsTwin{})
	RegisterTwin("fs-frozen", fsTwin{})
}

func (fsTwin) Variables(l Layer) []string { return []string{targetVariable(l)} }

func (t fsTwin) Params(l Layer, v Vars) (Params, error) {
	if err := v.checkNames(t.Variables(l)); err != nil {
		return Params{}, err
	}
	return targetParams(l, v)
}

func (fsTwin) Sample(rng *rand.Rand, l Layer) Vars { return sampleTarget(rng, l) }

// targetVariable returns the name of the target-frequency variable of the layer.
func targetVariable(l Layer) string {
	switch {
	case l.LogTargetHz && l.DTExact:
		return varLogTargetHzDT
	case l.LogTargetHz:
		return varLogTargetHz
	case l.DTExact:
		return varOmegaStarDT
	}
	return varOmegaStar
}

// targetOmega returns Ω* in rad/s from the value x of the layer's target variable.
func (l Layer) targetOmega(x float64) float64 {
	if l.LogTargetHz {
		return theory.RadPerSecFromHz(math.Exp(x))
	}
	return x
}

// targetValue returns the value of the layer's target variable for f* in Hz.
func (l Layer) targetValue(fHz float64) float64 {
	if l.LogTargetHz {
		return math.Log(fHz)
	}
	return theory.RadPerSecFromHz(fHz)
}

// MaxTargetHz returns the largest target frequency in Hz that the layer realizes: the target (CT, or DT
// with DTExact) at κ = KappaMax().
func (l Layer) MaxTargetHz() (float64, error) {
	return l.Constants().MaxTargetHz(l.KappaFraction, l.DTExact)
}

// targetParams returns μ, ρ, Δt, Vth, η and γ of a neuron parameterized by its target frequency.
func targetParams(l Layer, v Vars) (Params, error) {
	p, err := l.base()
	if err != nil {
		return Params{}, err
	}
	r := l.Ratio()
	if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
		return Params{}, fmt.Errorf("eta/gamma ratio must be a positive finite number, got %g", l.EtaGammaRatio)
	}
	x, err := v.value(targetVariable(l))
	if err != nil {
		return Params{}, err
	}
	w := l.targetOmega(x)
	if l.ForwardClip {
		fmax, err := l.MaxTargetHz()
		if err != nil {
			return Params{}, err
		}
		w = math.Min(math.Max(w, 0), theory.RadPerSecFromHz(fmax))
	}
	kappa, err := l.Constants().KappaForTarget(w, l.DTExact)
	if err != nil {
		return Params{}, err
	}
	p.Eta, p.Gamma = math.Sqrt(kappa*r), math.Sqrt(kappa/r)
	return p, nil
}

// sampleTarget draws f* uniformly in [1, min(60, 0.9·MaxTargetHz)] Hz and returns Ω* = 2πf* (or Ω*_DT).
// Closer to the stable limit a pole of the FS module approaches −1 and float32 rounding in the graph grows
// to the tests' tolerance (with the GSC constants the limit is about 31 Hz).
func sampleTarget(rng *rand.Rand, l Layer) Vars {
	fmax, err := l.MaxTargetHz()
	if err != nil {
		panic(err)
	}
	f := 1 + rng.Float64()*(math.Min(60, 0.9*fmax)-1)
	return Vars{targetVariable(l): {l.targetValue(f)}}
}
