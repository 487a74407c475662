package analysis

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
)

// FSModule returns, in float64, the semi-implicit FS module (Eq. 6, barred coordinates of Theorem 2)
// that a neuron of configuration cfg realizes with the target frequency fHz of Layer.TargetHz (already
// clamped as the graph clamps it): μ̄ = 1 − Δt/τm, ρ̄ = 1 − Δt/τa and
//
//   - κ̄ = κ*Δt² with κ* of Theorem 1's inverse map (Eq. 5) at Ω* = 2πf*, as neuron.Layer computes it;
//   - with cfg.DTExact, the κ̄ whose realized discrete-time target (Theorem 2) is ω = 2πf*Δt
//     (theory.KappaBarForTarget, the DT-exact inverse).
//
// κ = ηγ does not depend on the ratio η/γ. It is an error for kinds without a target frequency and,
// with DTExact, for a target that no κ̄ realizes (0 Hz or at Nyquist).
func FSModule(cfg neuron.Config, fHz float64) (theory.FS, error) {
	if !cfg.Kind.HasTargetFrequency() {
		return theory.FS{}, fmt.Errorf("kind %s has no target frequency", cfg.Kind)
	}
	if math.IsNaN(fHz) || fHz < 0 {
		return theory.FS{}, fmt.Errorf("target frequency %g Hz", fHz)
	}
	c := cfg.Constants()
	kappa, err := c.KappaForTarget(theory.RadPerSecFromHz(fHz), cfg.DTExact)
	if err != nil {
		return theory.FS{}, err
	}
	return c.FS(kappa), nil
}

// initialTS returns the TS module of order m at the initialization of cfg: β = tanh(β̂₀) and
// λ = σ(λ̂₀) in every stage (Appendix B: β̂₀ = 0, λ̂₀ = −3).
func initialTS(cfg neuron.Config, m int) theory.TS {
	b, l := theory.BetaOf(cfg.BetaHatInit), theory.LambdaOf(cfg.LambdaHatInit)
	ts := theory.TS{Beta: make([]float64, m), Lambda: make([]float64, m), Nesting: cfg.TSMix.Nesting()}
	for i := range m {
		ts.Beta[i], ts.Lambda[i] = b, l
	}
	return ts
}

// learnedTS returns the TS module of parameter set i of a layer (Layer.Beta and Layer.Lambda), in the
// λ-mix nesting the layer trained with.
func learnedTS(l Layer, i int) theory.TS {
	return (&neuron.Learned{Config: l.Neuron, Beta: l.Beta, Lambda: l.Lambda}).TS(i)
}
