package analysis

import (
	"fmt"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// BlockKind is the linear map of a block of the network.
type BlockKind string

const (
	// Dense is a fully connected map (with bias) applied at every time step.
	Dense BlockKind = "dense"
	// Conv is a 2-D convolution (stride 1, "same" padding, with bias) followed by a Pool×Pool mean
	// pooling, applied at every time step.
	Conv BlockKind = "conv"
)

// Block is one block of a run's network, from the input towards the output: a linear map and, except
// for the readout, a layer of spiking neurons.
type Block struct {
	// Name is the block's scope under train.ModelScope: "hidden_<i>" (feedforward), "conv_<i>" and "fc"
	// (convolutional), "readout" (the linear classifier of both).
	Name string
	Kind BlockKind
	// In is the shape of the block's input at one time step: [features] for Dense, [height, width,
	// channels] for Conv. Out is the shape of its output: [units] for Dense, [height/Pool, width/Pool,
	// channels] for Conv; for the readout, [classes].
	In, Out []int
	// Kernel and Pool are the side of the convolution kernel and of the pooling window (Conv only).
	Kernel, Pool int
	// Neuron is the configuration of the block's spiking neurons, nil for the readout. In convolutional
	// blocks Neuron.ChannelShared is set: one set of neuron parameters per output channel.
	Neuron *neuron.Config
}

// Layout is the architecture of a run's network, as train.NewNetwork builds it for the run's
// configuration and dataset: the feedforward network (model.FeedForward) for inputs with flat features,
// the convolutional one (model.Conv) for event frames.
type Layout struct {
	// Convolutional reports the network of event-frame datasets.
	Convolutional bool
	// Input is the shape of one time step of the input as the dataset stores it: [features], or
	// [polarity, height, width] for event frames. T is the number of time steps and Dt the time bin in
	// seconds.
	Input []int
	T     int
	Dt    float64
	// Blocks lists the blocks from the input to the readout (the last one).
	Blocks []Block
}

// Spiking returns the blocks with spiking neurons (all but the readout), in order: the hidden layers
// whose spikes Spikes returns and whose firing rates train.Result reports.
func (l *Layout) Spiking() []Block {
	var out []Block
	for _, b := range l.Blocks {
		if b.Neuron != nil {
			out = append(out, b)
		}
	}
	return out
}

// Layout returns the architecture of the run's network. It follows train.NewNetwork: for the
// feedforward network, model.DefaultConfig's number of layers with the neuron constants of
// train.NeuronConfig; for event frames, model.DefaultConvConfig with the dataset's time bin and the
// run's width as the fully connected block. Where the checkpoint holds the DT-exact target variable
// (neuron.VarOmegaStarDT) instead of Ω*, the layer's configuration has DTExact set.
func (r *Run) Layout() (*Layout, error) {
	ds, err := r.Dataset()
	if err != nil {
		return nil, err
	}
	return layoutOf(r.Config, ds, r.Context)
}

// layoutOf returns the layout of cfg's network on ds; ctx, when not nil, is a context holding the
// run's variables, read to detect DT-exact layers.
func layoutOf(cfg train.Config, ds *data.Dataset, ctx *context.Context) (*Layout, error) {
	kind := cfg.Kind()
	set := ds.Train
	l := &Layout{Input: set.Shape()[1:], T: set.T, Dt: ds.Dt}
	withNeuron := func(name string, n neuron.Config) *neuron.Config {
		if ctx != nil && n.Kind.HasTargetFrequency() {
			scope := ctx.In(train.ModelScope).In(name).In("neuron").Scope()
			if ctx.GetVariableByScopeAndName(scope, neuron.VarOmegaStarDT) != nil &&
				ctx.GetVariableByScopeAndName(scope, neuron.VarOmegaStar) == nil {
				n.DTExact = true
			}
		}
		return &n
	}
	if fs := set.FeatureShape; len(fs) == 3 {
		l.Convolutional = true
		c := model.DefaultConvConfig(kind, cfg.M)
		c.Neuron.Dt = ds.Dt
		c.Hidden, c.Classes = cfg.Width, ds.Classes
		if err := c.Validate(); err != nil {
			return nil, err
		}
		in := []int{fs[1], fs[2], fs[0]} // channels last, as model.Conv transposes them
		for i, ch := range c.Channels {
			if in[0]%c.Pool != 0 || in[1]%c.Pool != 0 {
				return nil, fmt.Errorf("conv block %d: input %dx%d not divisible by pool %d", i, in[0], in[1], c.Pool)
			}
			n := c.Neuron
			n.ChannelShared = true
			name := fmt.Sprintf("conv_%d", i)
			out := []int{in[0] / c.Pool, in[1] / c.Pool, ch}
			l.Blocks = append(l.Blocks, Block{Name: name, Kind: Conv, In: in, Out: out, Kernel: c.Kernel, Pool: c.Pool,
				Neuron: withNeuron(name, n)})
			in = out
		}
		n := c.Neuron
		n.ChannelShared = false
		l.Blocks = append(l.Blocks,
			Block{Name: "fc", Kind: Dense, In: []int{in[0] * in[1] * in[2]}, Out: []int{c.Hidden}, Neuron: withNeuron("fc", n)},
			Block{Name: "readout", Kind: Dense, In: []int{c.Hidden}, Out: []int{ds.Classes}})
		return l, nil
	}
	n, err := train.NeuronConfig(kind, cfg.M, ds)
	if err != nil {
		return nil, err
	}
	mc := model.DefaultConfig(kind, cfg.M, cfg.Width, ds.Classes)
	in := set.F
	for i := range mc.Layers {
		name := fmt.Sprintf("hidden_%d", i)
		l.Blocks = append(l.Blocks, Block{Name: name, Kind: Dense, In: []int{in}, Out: []int{cfg.Width}, Neuron: withNeuron(name, n)})
		in = cfg.Width
	}
	l.Blocks = append(l.Blocks, Block{Name: "readout", Kind: Dense, In: []int{in}, Out: []int{ds.Classes}})
	return l, nil
}

// size returns the product of dims.
func size(dims []int) int {
	p := 1
	for _, d := range dims {
		p *= d
	}
	return p
}
