package neuron

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/gomlx/gomlx/ml/model"
)

// Learned is what a layer of FiTS neurons holds in its scope, read back as the paper's quantities
// (ReadLearned). Index i runs over the layer's parameter sets in row-major order of the parameter shape
// P: one per neuron, or one per channel with Config.ChannelShared.
type Learned struct {
	// Config is the layer's configuration, as given to ReadLearned.
	Config Config
	// TargetHz are the target frequencies f* in Hz, as the graph uses them (TargetFrequenciesHz:
	// continuous-time targets of Theorem 1, Eqs. 4–5, or realized discrete-time targets of Theorem 2 with
	// Config.DTExact). Nil for kinds without a target frequency (LIF, AdaptLIF).
	TargetHz []float64
	// Beta and Lambda are the TS coefficients β = tanh(β̂) ∈ (−1, 1) (Eqs. 8–9) and λ = σ(λ̂) ∈ (0, 1)
	// (Eq. 10), indexed [stage m−1][parameter set] (TSCoefficients). Nil unless the kind has the TS
	// module (FSTS).
	Beta, Lambda [][]float64
}

// ReadLearned reads the learned f*, β and λ of the layer whose variables live in ctx's current scope (the
// context given to Layer, or a block's "neuron" scope of package fits/model, e.g.
// ctx.At("model").At("hidden_0").At("neuron")), for a layer configured with cfg. What a kind does not have
// stays nil; an error means the scope lacks a variable the kind has, or its values do not match cfg.
func ReadLearned(scope *model.Scope, cfg Config) (*Learned, error) {
	l := &Learned{Config: cfg}
	var err error
	if cfg.Kind.HasTargetFrequency() {
		if l.TargetHz, err = TargetFrequenciesHz(scope, cfg); err != nil {
			return nil, err
		}
	}
	if cfg.Kind.HasTS() {
		if l.Beta, l.Lambda, err = TSCoefficients(scope, cfg); err != nil {
			return nil, err
		}
		if l.TargetHz != nil && len(l.Beta) > 0 && len(l.Beta[0]) != len(l.TargetHz) {
			return nil, fmt.Errorf("scope %q: %d target frequencies but %d TS parameter sets", scope.Scope(), len(l.TargetHz), len(l.Beta[0]))
		}
	}
	return l, nil
}

// Sets returns the number of parameter sets read (0 for kinds with neither a target frequency nor a TS
// module).
func (l *Learned) Sets() int {
	switch {
	case l.TargetHz != nil:
		return len(l.TargetHz)
	case len(l.Beta) > 0:
		return len(l.Beta[0])
	}
	return 0
}

// TS returns the TS module of parameter set i (Eqs. 8–10) as theory.TS: its β_m and λ_m, m = 1..M, and the
// λ-mix nesting of Config.TSMix. It is the identity (no stage) for kinds without a TS module.
func (l *Learned) TS(i int) theory.TS {
	ts := theory.TS{Beta: make([]float64, len(l.Beta)), Lambda: make([]float64, len(l.Lambda)), Nesting: l.Config.TSMix.Nesting()}
	for m := range l.Beta {
		ts.Beta[m], ts.Lambda[m] = l.Beta[m][i], l.Lambda[m][i]
	}
	return ts
}

// TSGroupDelay returns the group delay τ_G(ω) = −d arg G_M(e^{jω})/dω (Eq. 7) of parameter set i's TS
// module alone, G_M of Eqs. 8–10 with its learned β and λ (theory.TS.GroupDelay), at the frequency fHz in Hz
// (ω = 2π·fHz·Δt rad/sample), in seconds (samples × Δt). It is 0 for kinds without a TS module, and may be
// negative: the λ-mix can make the delay negative (Proposition 1). The delay of the whole neuron, with the TS
// module inside the FS loop, is theory.ClosedLoop's. It is an error for i out of range or fHz outside
// [0, 1/(2Δt)].
func (l *Learned) TSGroupDelay(i int, fHz float64) (float64, error) {
	if n := l.Sets(); i < 0 || (n > 0 && i >= n) {
		return 0, fmt.Errorf("parameter set %d of %d", i, n)
	}
	c := l.Config.Constants()
	if !(fHz >= 0 && fHz <= c.NyquistHz()) {
		return 0, fmt.Errorf("frequency %g Hz outside [0, %g] Hz (Nyquist at Δt = %g s)", fHz, c.NyquistHz(), c.Dt)
	}
	ts := l.TS(i)
	if ts.M() == 0 {
		return 0, nil
	}
	d := ts.GroupDelay(c.RadPerSampleFromHz(fHz)) * c.Dt
	if math.IsNaN(d) {
		return 0, fmt.Errorf("parameter set %d: the TS response vanishes at %g Hz (no group delay)", i, fHz)
	}
	return d, nil
}
