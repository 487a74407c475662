// Package model builds the networks of the paper's experiments from layers of FiTS neurons (fits/neuron):
// the feedforward network of the main experiments (Section 4, "Model configuration": two hidden layers
// and a linear classifier, no recurrence and no network-level delays) and the convolutional network of the
// DVS Gesture experiment (Appendix C, "DVS Gesture 128": two convolutional spiking blocks, one fully
// connected spiking block and a linear classifier).
//
// Both are graph-building functions in GoMLX style: they take the scope (which holds the
// variables) and the input node, and return the class logits together with every hidden layer's spikes.
//
// Readout. The classifier is a linear map applied to the last hidden layer's spikes at every time step,
// z[t] = W·s[t] + b (shape [batch, time, classes]). The default readout, ReadoutMean, feeds the softmax with
// the time average of z (the sum over time of the readout, divided by the number of bins T so that the
// logits' scale does not grow with T). ReadoutLIMax and ReadoutLIMean instead pass z through a non-spiking
// leaky integrator u[t] = α·u[t−1] + (1 − α)·z[t], α = exp(−Δt/τ_out), u[−1] = 0, and take its maximum or
// mean over time (the common choice on SHD). The mean readout is the default because its logits depend on
// the spikes of every time bin equally, so the frequency and timing structure is left to the hidden
// neurons, which is what the ablation measures.
//
// Net describes a network as data (blocks of a synapse and a layer of FiTS neurons, then a head): the
// engines of package fits/step train it, which is the fast path at the paper's sizes; FeedForward and the
// other graph-building functions here unroll the recurrence in one graph (neuron.Layer), which GoMLX's own
// trainer differentiates by autodiff and which is slow to compile on long sequences. Measured times:
// docs/performance.md, and docs/performance-notes.md for the measurements these comments once quoted.
package model

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/internal/enum"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Readout selects how the classifier's per-step outputs [batch, time, classes] become logits [batch,
// classes].
type Readout string

const (
	// ReadoutSum is the linear readout of the spikes summed over time, W·Σ_t s[t] + b (the released code's
	// readout for SHD, SSC and GSC).
	ReadoutSum Readout = "sum"
	// ReadoutMean is the time average of the linear readout (the released code's for sMNIST).
	ReadoutMean Readout = "mean"
	// ReadoutLIMax is the maximum over time of a non-spiking leaky integrator of the readout.
	ReadoutLIMax Readout = "li-max"
	// ReadoutLIMean is the mean over time of a non-spiking leaky integrator of the readout.
	ReadoutLIMean Readout = "li-mean"
)

// Readouts lists the valid readouts.
func Readouts() []Readout { return []Readout{ReadoutSum, ReadoutMean, ReadoutLIMax, ReadoutLIMean} }

// ParseReadout returns the readout named s.
func ParseReadout(s string) (Readout, error) { return enum.ParseFold("readout", s, Readouts()...) }

// DropoutMode selects how the dropout masks of a training step are drawn.
type DropoutMode string

const (
	// DropoutStep draws an independent mask per example, time step and neuron, [batch, time, neurons...],
	// as the released FiTS code's nn.Dropout on the spikes does (the default). The training engines of
	// package fits/step draw it from the counter-based generator of package fits/dropmask, keyed by the
	// run's seed, the global optimizer step and the block's index, so that every engine and a resumed run
	// see the same masks.
	DropoutStep DropoutMode = "step"
	// DropoutShared draws one mask per example and neuron, [batch, 1, neurons...], shared by all time steps,
	// from the store's random number generator: this toolkit's earlier dropout, kept for the runs made
	// with it.
	DropoutShared DropoutMode = "shared"
)

// DropoutModes lists the valid dropout modes, the default first.
func DropoutModes() []DropoutMode { return []DropoutMode{DropoutStep, DropoutShared} }

// ParseDropoutMode returns the dropout mode named s; "" means DropoutStep.
func ParseDropoutMode(s string) (DropoutMode, error) {
	if s == "" {
		return DropoutStep, nil
	}
	return enum.ParseFold("dropout mode", s, DropoutModes()...)
}

// Config describes the feedforward network.
type Config struct {
	// Neuron configures both hidden layers (kind, TS order M, time constants, Δt, target range).
	Neuron neuron.Config
	// Width is the number of neurons W of each hidden layer.
	Width int
	// Layers is the number of hidden layers (the paper: 2).
	Layers int
	// Dropout is the probability p of dropping a hidden neuron's spikes during training; kept spikes are
	// scaled by 1/(1−p).
	Dropout float64
	// DropoutMode says whether the mask is drawn per time step (DropoutStep, the default "") or once per
	// example and neuron for all time steps (DropoutShared).
	DropoutMode DropoutMode
	// Classes is the number of output classes.
	Classes int
	// Readout turns the per-step readout into logits; "" means ReadoutMean.
	Readout Readout
	// ReadoutTau is the time constant τ_out (s) of the leaky-integrator readouts; 0 means the neuron's τm.
	ReadoutTau float64
	// UniformBias draws the dense biases from U(±1/√fan_in) like the weights (Net.UniformBias).
	UniformBias bool
}

// DefaultConfig returns the paper's feedforward network for a neuron kind and TS order: two hidden layers
// of width neurons with the SHD/SSC neuron constants, the mean readout and no dropout.
func DefaultConfig(kind neuron.Kind, order, width, classes int) Config {
	return Config{
		Neuron:  neuron.DefaultConfig(kind, order),
		Width:   width,
		Layers:  2,
		Classes: classes,
		Readout: ReadoutMean,
	}
}

// Validate reports the first unusable field.
func (c Config) Validate() error {
	if err := c.Neuron.Validate(); err != nil {
		return err
	}
	switch {
	case c.Width < 1:
		return fmt.Errorf("model: width %d", c.Width)
	case c.Layers < 1:
		return fmt.Errorf("model: %d hidden layers", c.Layers)
	case c.Classes < 2:
		return fmt.Errorf("model: %d classes", c.Classes)
	case c.ReadoutTau < 0:
		return fmt.Errorf("model: readout time constant %g s", c.ReadoutTau)
	}
	return validateHead(c.Dropout, c.DropoutMode, c.Readout)
}

// validateHead checks the dropout probability, the dropout mode and the readout ("" is valid for both) of a
// network.
func validateHead(dropout float64, mode DropoutMode, readout Readout) error {
	if !(dropout >= 0 && dropout < 1) {
		return fmt.Errorf("model: dropout %g outside [0, 1)", dropout)
	}
	if _, err := ParseDropoutMode(string(mode)); err != nil {
		return err
	}
	if readout != "" {
		if _, err := ParseReadout(string(readout)); err != nil {
			return err
		}
	}
	return nil
}

// Output is what a network returns.
type Output struct {
	// Logits are the class scores [batch, classes].
	Logits *Node
	// Spikes holds each hidden layer's spikes, [batch, time, ...] with values in {0, 1}, before dropout.
	Spikes []*Node
}

// Net returns the feedforward network as data for inputs of features features per step: Layers dense
// blocks "hidden_<i>" of Width neurons, then the classifier (see Net).
func (c Config) Net(features int) Net {
	net := Net{InputDims: []int{features}, Dropout: c.Dropout, DropoutMode: c.DropoutMode, Classes: c.Classes,
		Readout: c.Readout, Alpha: readoutAlpha(c.ReadoutTau, c.Neuron), UniformBias: c.UniformBias}
	for i := range c.Layers {
		net.Blocks = append(net.Blocks, DenseBlock(fmt.Sprintf("hidden_%d", i), c.Width, c.Neuron))
	}
	return net
}

// FeedForward builds the feedforward network on x, the input [batch, time, features] (float32): for each
// hidden layer, a dense map (with bias) of the previous layer's output at every time step to the input
// current [batch, time, width], the FiTS neuron layer, and dropout (masks drawn here from the store's
// random number generator when the graph trains, per step or time-shared as cfg.DropoutMode says);
// then the classifier and the readout. Variables live in the scopes "hidden_<i>/dense",
// "hidden_<i>/neuron" and "readout/dense" of scope; dense weights start from FanInUniform.
// It panics, as graph-building functions do, on an invalid configuration; check cfg.Validate() first.
func FeedForward(scope *model.Scope, cfg Config, x *Node) Output {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	if x.Rank() != 3 {
		panic(fmt.Errorf("model.FeedForward: input must be [batch, time, features], got %s", x.Shape()))
	}
	return cfg.Net(x.Shape().Dimensions[2]).forwardTraining(scope, x)
}

// forwardTraining is Forward with dropout masks drawn from the store's random number generator when it
// is training: time-shared ones (DropoutMasks) in DropoutShared mode, [batch, time, OutDims...] ones in
// DropoutStep mode (the distribution of the step engines' masks, not their fits/dropmask stream).
func (n Net) forwardTraining(scope *model.Scope, x *Node) Output {
	var masks []*Node
	if g := x.Graph(); neuron.IsTraining(g) {
		masks = n.randomMasks(scope, g, x.DType(), x.Shape().Dimensions[0], x.Shape().Dimensions[1])
	}
	return n.Forward(scope, x, masks)
}

// randomMasks draws the dropout masks of a batch of steps time steps from the store's random number
// generator: [batch, 1, OutDims...] per block in DropoutShared mode (DropoutMasks), [batch, steps,
// OutDims...] in DropoutStep mode; nil without dropout.
func (n Net) randomMasks(scope *model.Scope, g *Graph, dtype dtypes.DType, batch, steps int) []*Node {
	if !n.StepDropout() {
		return n.DropoutMasks(scope, g, dtype, batch)
	}
	return n.masks(scope, g, dtype, batch, steps)
}

// readoutAlpha returns α = exp(−Δt/τ_out) of the leaky-integrator readout (τ_out = τm when tau is 0).
func readoutAlpha(tau float64, n neuron.Config) float64 {
	return math.Exp(-n.Dt / cmp.Or(tau, n.TauM))
}

// dropoutMask draws a dropout mask of dims ([batch, 1, d...] time-shared, [batch, time, d...] per step): 0
// with probability p, 1/(1−p) otherwise, independently per element.
func dropoutMask(scope *model.Scope, g *Graph, dtype dtypes.DType, dims []int, p float64) *Node {
	keep := LessThan(scope.RandomUniform(g, shapes.Make(dtype, dims...)), Scalar(g, dtype, 1-p))
	return DivScalar(ConvertDType(keep, dtype), 1-p)
}

// ApplyReadout applies the linear classifier to h [batch, time, features] at every time step and reduces over
// time to logits [batch, classes] as kind says; alpha is the leaky-integrator decay per step. Variables:
// the dense layer in scope.
//
// The mean readout, mean_t(W·h[t] + b), is computed as W·mean_t(h[t]) + b: the same affine map with the
// same variables, one [batch, features]·[features, classes] product instead of a [batch·time, features]
// one, whose forward and gradient XLA CPU runs far slower (measured: docs/performance-notes.md).
func ApplyReadout(scope *model.Scope, h *Node, classes int, kind Readout, alpha float64) *Node {
	switch kind {
	case "", ReadoutMean:
		return Dense(scope, ReduceMean(h, 1), classes)
	case ReadoutSum:
		return Dense(scope, ReduceSum(h, 1), classes)
	}
	z := Dense(scope, h, classes) // [batch, time, classes]
	switch kind {
	case ReadoutLIMax:
		return ReduceMax(LeakyIntegrator(z, alpha), 1)
	case ReadoutLIMean:
		return ReduceMean(LeakyIntegrator(z, alpha), 1)
	}
	panic(fmt.Errorf("model: unknown readout %q", kind))
}

// LeakyIntegrator returns u [batch, time, n] with u[t] = α·u[t−1] + (1 − α)·z[t] and u[−1] = 0, for z
// [batch, time, n]. It is computed as one product with the constant lower-triangular kernel
// K[t, s] = (1 − α)·α^(t−s), s ≤ t, so no loop is unrolled.
func LeakyIntegrator(z *Node, alpha float64) *Node {
	T := z.Shape().Dimensions[1]
	k := make([]float32, T*T)
	for t := range T {
		for s := 0; s <= t; s++ {
			k[t*T+s] = float32((1 - alpha) * math.Pow(alpha, float64(t-s)))
		}
	}
	kernel := ConvertDType(Const(z.Graph(), tensors.FromFlatDataAndDimensions(k, T, T)), z.DType())
	return Einsum("ts,bsn->btn", kernel, z)
}

// uniformInit returns the initializer that draws from U(−limit, limit) with the store's random number
// generator.
func uniformInit(scope *model.Scope, limit float64) model.VariableInitializer {
	return func(g *Graph, shape shapes.Shape) *Node {
		u := scope.RandomUniform(g, shape) // [0, 1)
		return AddScalar(MulScalar(u, 2*limit), -limit)
	}
}

// FanInUniform returns the initializer that draws weights from U(−1/√fanIn, 1/√fanIn), where fanIn is the
// number of inputs of one output unit (for a kernel [k1, …, kn, in, out]: k1·…·kn·in), and sets biases
// (rank ≤ 1) to zero. It draws from the store's random number generator.
func FanInUniform(scope *model.Scope) model.VariableInitializer {
	return func(g *Graph, shape shapes.Shape) *Node {
		if !shape.DType.IsFloat() || shape.Rank() <= 1 {
			return Zeros(g, shape)
		}
		fanIn := shape.Size() / shape.Dimensions[shape.Rank()-1]
		return uniformInit(scope, 1/math.Sqrt(float64(fanIn)))(g, shape)
	}
}

// CountParams returns the number of trainable scalars in the variables of scope's scope and below (the
// paper's "# Params": frozen target frequencies and optimizer state are not counted).
func CountParams(scope *model.Scope) int {
	n := 0
	path := scope.Scope()
	for v := range scope.Store().IterVariables() {
		if v.Trainable && inScope(v.Scope(), path) {
			n += v.Shape().Size()
		}
	}
	return n
}

func inScope(varScope, scope string) bool {
	if scope == model.RootScopePath {
		return true
	}
	return varScope == scope || strings.HasPrefix(varScope, scope+model.ScopeSeparator)
}
