package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/fits/train"
)

// Layer is what one layer of spiking neurons has learned.
type Layer struct {
	// Index is the layer's position among the spiking layers (0 is the layer next to the input); Name
	// its block ("hidden_0", "conv_0", "fc", see Block) and Scope the scope of its neuron
	// variables, e.g. "/model/hidden_0/neuron".
	Index int
	Name  string
	Scope string
	// Neuron is the layer's neuron configuration (kind, M, τm, τa, Δt, target range; ChannelShared in
	// convolutional blocks, DTExact when the checkpoint holds the DT-exact target).
	Neuron neuron.Config
	// Neurons is the number of sets of neuron parameters of the layer: its units for a dense layer, its
	// channels for a convolutional one (parameters shared across positions). Units is the number of
	// spiking units per time step (height × width × channels for a convolutional layer).
	Neurons, Units int
	// InitialHz are the target frequencies f* in Hz at initialization, per parameter set: log-spaced over
	// [Neuron.FMinHz, Neuron.FMaxHz] in parameter order, as neuron.Layer initializes them. Nil for kinds
	// without a target frequency (LIF, adaptive LIF).
	InitialHz []float64
	// TargetHz are the learned target frequencies f* in Hz, per parameter set, as the graph uses them
	// (neuron.TargetFrequenciesHz: clamped to [0, Neuron.MaxTargetHz()]): continuous-time targets
	// (Theorem 1), or realized discrete-time targets (Theorem 2) with Neuron.DTExact. Nil for kinds
	// without one.
	TargetHz []float64
	// Beta and Lambda are the TS coefficients β = tanh(β̂) ∈ (−1, 1) and λ = σ(λ̂) ∈ (0, 1), indexed
	// [stage][parameter set], stage m−1 holding stage m of the cascade (neuron.TSCoefficients). Nil
	// unless the kind has the TS module (FSTS).
	Beta, Lambda [][]float64
}

// Layers returns, for each spiking layer of the run's network (the hidden layers of the feedforward
// network; the convolutional blocks and the fully connected block of the convolutional one), its
// learned target frequencies and TS coefficients next to the initial target frequencies. The neuron
// constants are those of the run's network (see Layout).
func (r *Run) Layers() ([]Layer, error) {
	lay, err := r.Layout()
	if err != nil {
		return nil, err
	}
	var out []Layer
	for i, b := range lay.Spiking() {
		ctx := r.Context.At("%s", train.ModelScope).At("%s", b.Name).At("neuron")
		ncfg := *b.Neuron
		l := Layer{Index: i, Name: b.Name, Scope: ctx.Scope(), Neuron: ncfg, Units: size(b.Out), Neurons: size(b.Out)}
		if ncfg.ChannelShared {
			l.Neurons = b.Out[len(b.Out)-1]
		}
		if ncfg.Kind.HasTargetFrequency() {
			if l.TargetHz, err = neuron.TargetFrequenciesHz(ctx, ncfg); err != nil {
				return nil, fmt.Errorf("layer %s: %w", b.Name, err)
			}
			if len(l.TargetHz) != l.Neurons {
				return nil, fmt.Errorf("layer %s: %d target frequencies for %d parameter sets", b.Name, len(l.TargetHz), l.Neurons)
			}
			if l.InitialHz, err = InitialTargetsHz(ncfg, l.Neurons); err != nil {
				return nil, fmt.Errorf("layer %s: %w", b.Name, err)
			}
		}
		if ncfg.Kind.HasTS() {
			if l.Beta, l.Lambda, err = neuron.TSCoefficients(ctx, ncfg); err != nil {
				return nil, fmt.Errorf("layer %s: %w", b.Name, err)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// layersWith returns the run's layers (Layers); it is an error, naming what, when the run has none or has
// fails for one of them.
func (r *Run) layersWith(has func(Layer) bool, what string) ([]Layer, error) {
	layers, err := r.Layers()
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", r.Dir, err)
	}
	if len(layers) == 0 || slices.ContainsFunc(layers, func(l Layer) bool { return !has(l) }) {
		return nil, fmt.Errorf("run %s: model %s has no %s", r.Dir, r.Config.Model, what)
	}
	return layers, nil
}

// hasTS and hasTarget report a layer with the TS module and one with a target frequency.
func hasTS(l Layer) bool     { return l.Beta != nil }
func hasTarget(l Layer) bool { return l.TargetHz != nil }

// InitialTargetsHz returns the target frequencies f* in Hz with which neuron.Layer initializes n
// neurons of configuration cfg: log-spaced over [cfg.FMinHz, cfg.FMaxHz] in neuron order, clamped to
// [0, cfg.MaxTargetHz()] as the graph clamps them. It is an error for kinds without a target frequency.
func InitialTargetsHz(cfg neuron.Config, n int) ([]float64, error) {
	if !cfg.Kind.HasTargetFrequency() {
		return nil, fmt.Errorf("kind %s has no target frequency", cfg.Kind)
	}
	f, err := theory.LogSpacedHz(cfg.FMinHz, cfg.FMaxHz, n)
	if err != nil {
		return nil, err
	}
	fmax, err := cfg.MaxTargetHz()
	if err != nil {
		return nil, err
	}
	for i := range f {
		f[i] = math.Min(math.Max(f[i], 0), fmax)
	}
	return f, nil
}
