package analysis

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/fits/train"
)

// Layer is what one hidden layer of FiTS neurons has learned.
type Layer struct {
	// Index is the layer's position (0 is the layer next to the input); Scope the context scope of its
	// neuron variables, e.g. "/model/hidden_0/neuron".
	Index int
	Scope string
	// Neuron is the layer's neuron configuration (kind, M, τm, τa, Δt, target range).
	Neuron neuron.Config
	// Neurons is the number of neurons (sets of neuron parameters) of the layer.
	Neurons int
	// InitialHz are the target frequencies f* in Hz at initialization, per neuron: log-spaced over
	// [Neuron.FMinHz, Neuron.FMaxHz] in neuron order, as neuron.Layer initializes them. Nil for kinds
	// without a target frequency (LIF, adaptive LIF).
	InitialHz []float64
	// TargetHz are the learned target frequencies f* in Hz, per neuron, as the graph uses them
	// (neuron.TargetFrequenciesHz: clamped to [0, Neuron.MaxTargetHz()]). Nil for kinds without one.
	TargetHz []float64
	// Beta and Lambda are the TS coefficients β = tanh(β̂) ∈ (−1, 1) and λ = σ(λ̂) ∈ (0, 1), indexed
	// [stage][neuron], stage m−1 holding stage m of the cascade (neuron.TSCoefficients). Nil unless the
	// kind has the TS module (FSTS).
	Beta, Lambda [][]float64
}

// Layers returns, for each hidden layer of the run's feedforward network, its learned target
// frequencies and TS coefficients next to the initial target frequencies. The neuron constants come
// from the run's dataset (train.NeuronConfig). The convolutional network of event-frame datasets is not
// supported (an error).
func (r *Run) Layers() ([]Layer, error) {
	ds, err := r.Dataset()
	if err != nil {
		return nil, err
	}
	if len(ds.Train.FeatureShape) > 1 {
		return nil, fmt.Errorf("analysis: layers of the convolutional network (dataset %s) are not supported", ds.Name)
	}
	kind := r.Config.Kind()
	ncfg, err := train.NeuronConfig(kind, r.Config.M, ds)
	if err != nil {
		return nil, err
	}
	mcfg := model.DefaultConfig(kind, r.Config.M, r.Config.Width, ds.Classes)
	out := make([]Layer, mcfg.Layers)
	for i := range out {
		ctx := r.Context.In(train.ModelScope).In(fmt.Sprintf("hidden_%d", i)).In("neuron")
		l := Layer{Index: i, Scope: ctx.Scope(), Neuron: ncfg, Neurons: r.Config.Width}
		if kind.HasTargetFrequency() {
			if l.TargetHz, err = neuron.TargetFrequenciesHz(ctx, ncfg); err != nil {
				return nil, fmt.Errorf("layer %d: %w", i, err)
			}
			l.Neurons = len(l.TargetHz)
			if l.InitialHz, err = InitialTargetsHz(ncfg, l.Neurons); err != nil {
				return nil, fmt.Errorf("layer %d: %w", i, err)
			}
		}
		if kind.HasTS() {
			if l.Beta, l.Lambda, err = neuron.TSCoefficients(ctx, ncfg); err != nil {
				return nil, fmt.Errorf("layer %d: %w", i, err)
			}
		}
		out[i] = l
	}
	return out, nil
}

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
