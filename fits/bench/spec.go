// Package bench times one training iteration of FiTS networks: the forward pass, the loss and the backward
// pass to the gradients of every trainable parameter (no optimizer update), on a GoMLX backend, with each
// engine of package fits/step (Variant; docs/engines.md describes each, stepwise being the analogue of a
// PyTorch timestep loop): the engine that trains is the engine that is benchmarked, on the network of the
// same model.Net builders and variable initialization. It builds no graph of its own.
//
// Shapes follow the toolkit: inputs [batch, time, features], hidden spikes [batch, time, width]. Times are
// wall-clock seconds or milliseconds as the field names say; memory is bytes.
package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/internal/enum"
)

// Variant is an engine of package fits/step by its name ("variant" is the benchmark's older word for an
// engine, kept in its JSON key and as the flag alias --variant). Every registered engine (step.Names) is one.
type Variant string

// The engines by name; docs/engines.md describes each.
const (
	Stepwise Variant = step.Stepwise
	Unrolled Variant = step.Unrolled
	Chunked  Variant = step.Chunked
	Scan     Variant = step.Scan
	Fused    Variant = step.Fused
	Loop     Variant = step.Loop
)

// reportOrder is the order in which the benchmark reports the engines it knows: the slowest form first,
// as the speed-ups are taken against it; engines registered later follow in step.Names' order.
var reportOrder = []Variant{Stepwise, Unrolled, Chunked, Scan, Fused, Loop}

// Variants lists every registered engine (step.Names) in the order they are reported.
func Variants() []Variant {
	out := slices.Clone(reportOrder)
	for _, n := range step.Names() {
		if !slices.Contains(out, Variant(n)) {
			out = append(out, Variant(n))
		}
	}
	return slices.DeleteFunc(out, func(v Variant) bool { return !slices.Contains(step.Names(), string(v)) })
}

// ParseVariant returns the variant named s.
func ParseVariant(s string) (Variant, error) {
	return enum.ParseFold("variant", strings.TrimSpace(s), Variants()...)
}

// Spec describes the benchmarked network and its input.
type Spec struct {
	// Batch, Time and Inputs are the input's shape [batch, time, features].
	Batch, Time, Inputs int
	// Widths are the hidden layers' widths; each is a dense map with bias followed by a FiTS layer.
	Widths []int
	// Classes > 0 adds the linear readout (Readout: "" is the released code's sum over time,
	// model.ReadoutSum) and the mean cross-entropy loss over the batch; Classes = 0 uses the sum of the
	// last layer's spikes as the loss, as the Open Neuromorphic framework benchmark does.
	Classes int
	Readout model.Readout
	// Dropout > 0 drops the hidden layers' spikes with this probability in every timed iteration, with a
	// mask per (example, time step, neuron) drawn by the engine in every call (model.DropoutStep,
	// fits/dropmask: the fused kernel regenerates it in its backward).
	Dropout float64
	// Neuron configures every hidden layer.
	Neuron neuron.Config
	// InputRate > 0 draws the inputs as Bernoulli spikes {0, 1} with this probability per bin (event data);
	// InputRate = 0 draws standard normal values.
	InputRate float64
	// InputScale multiplies the drawn inputs (0 means 1).
	InputScale float64
	// Seed fixes the inputs, labels and initial weights.
	Seed uint64
}

// Paper's kernel-table shapes (SSC-like): batch, bins, input channels and classes.
const (
	KernelBatch   = 128
	KernelTime    = 250
	KernelInputs  = 140
	KernelClasses = 35
)

// KernelDropout is the dropout of the kernel-table networks: the released SHD* config's p.
const KernelDropout = 0.3

// KernelSpec returns the network of the paper's kernel-runtime table: batch 128, T = 250 bins, 140
// inputs, two hidden layers of width W with the SSC neuron constants (kind fs for M = 0, fsts for M ≥ 1),
// per-step dropout p = KernelDropout on the spikes, 35 classes with the sum readout and cross-entropy (the
// released code's training semantics). Inputs are Bernoulli spikes at rate 0.2.
func KernelSpec(width, order int) Spec {
	return Spec{
		Batch: KernelBatch, Time: KernelTime, Inputs: KernelInputs,
		Widths:    []int{width, width},
		Classes:   KernelClasses,
		Dropout:   KernelDropout,
		Neuron:    neuron.DefaultConfig(neuron.FiTS(order), order),
		InputRate: 0.2,
		Seed:      1,
	}
}

// Open Neuromorphic framework benchmark shapes: batch 16, 500 time steps, n inputs to n neurons.
const (
	ONBatch   = 16
	ONTime    = 500
	ONNeurons = 16384
)

// OpenNeuromorphicSpec returns the network of the Open Neuromorphic SNN framework benchmark: one dense
// map of n inputs to n neurons (with bias) and one layer of n neurons of the given kind, input [16, 500,
// n] drawn from a standard normal distribution, loss = sum of the output spikes.
func OpenNeuromorphicSpec(neurons int, kind neuron.Kind, order int) Spec {
	return Spec{
		Batch: ONBatch, Time: ONTime, Inputs: neurons,
		Widths: []int{neurons},
		Neuron: neuron.DefaultConfig(kind, order),
		Seed:   1,
	}
}

// Validate reports the first unusable field.
func (s Spec) Validate() error {
	switch {
	case s.Batch < 1 || s.Time < 1 || s.Inputs < 1:
		return fmt.Errorf("bench: input shape [%d, %d, %d] must be positive", s.Batch, s.Time, s.Inputs)
	case len(s.Widths) == 0:
		return fmt.Errorf("bench: no hidden layer")
	case s.Classes < 0 || s.Classes == 1:
		return fmt.Errorf("bench: %d classes (use 0 for the spike-sum loss, or at least 2)", s.Classes)
	case !(s.InputRate >= 0 && s.InputRate <= 1):
		return fmt.Errorf("bench: input rate %g outside [0, 1]", s.InputRate)
	case s.InputScale < 0:
		return fmt.Errorf("bench: input scale %g", s.InputScale)
	case !(s.Dropout >= 0 && s.Dropout < 1):
		return fmt.Errorf("bench: dropout %g outside [0, 1)", s.Dropout)
	}
	if s.Readout != "" {
		if _, err := model.ParseReadout(string(s.Readout)); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	for _, w := range s.Widths {
		if w < 1 {
			return fmt.Errorf("bench: width %d", w)
		}
	}
	return s.Neuron.Validate()
}
