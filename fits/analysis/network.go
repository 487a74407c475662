package analysis

import (
	"fmt"
	"slices"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
	mlmodel "github.com/gomlx/gomlx/ml/model"
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
	return slices.DeleteFunc(slices.Clone(l.Blocks), func(b Block) bool { return b.Neuron == nil })
}

// Layout returns the architecture of the run's network: the blocks of the model.Net that
// train.NewNetwork builds for the run's configuration and dataset, with the kernel and pooling sizes of
// model.DefaultConvConfig (which train.NewNetwork uses) for convolutional blocks. The target variable
// the checkpoint holds (neuron.TargetVariable: log or Ω* coordinate, DT-exact or not) sets the layer
// configuration's TargetCoordinate and DTExact.
func (r *Run) Layout() (*Layout, error) {
	ds, err := r.Dataset()
	if err != nil {
		return nil, err
	}
	return layoutOf(r.Config, ds, r.Context)
}

// layoutOf returns the layout of cfg's network on ds; scope, when not nil, is a scope holding the
// run's variables, read to detect DT-exact layers.
func layoutOf(cfg train.Config, ds *data.Dataset, scope *mlmodel.Scope) (*Layout, error) {
	network, err := train.NewNetwork(cfg, ds)
	if err != nil {
		return nil, err
	}
	net := network.Net
	set := ds.Train
	l := &Layout{Input: set.Shape()[1:], T: set.T, Dt: ds.Dt}
	conv := model.DefaultConvConfig(cfg.Kind(), cfg.Order())
	var in []int // the current block's input per step
	if fs := set.FeatureShape; len(fs) == 3 {
		l.Convolutional = true
		in = []int{fs[1], fs[2], fs[0]} // channels last, as the convolution sees them
	} else {
		in = []int{set.F}
	}
	for _, nb := range net.Blocks {
		n := nb.Neuron
		if scope != nil && n.Kind.HasTargetFrequency() {
			path := scope.At("%s", train.ModelScope).At("%s", nb.Scope).At("neuron").Scope()
			// The checkpoint's variable names the target's coordinate and whether it is DT-exact.
			for _, c := range []struct {
				coord neuron.TargetCoordinate
				dt    bool
			}{{neuron.TargetLogHz, false}, {neuron.TargetLogHz, true}, {neuron.TargetOmega, false}, {neuron.TargetOmega, true}} {
				try := n
				try.TargetCoordinate, try.DTExact = c.coord, c.dt
				if scope.Store().GetVariable(mlmodel.JoinPath(path, neuron.TargetVariable(try))) != nil {
					n.TargetCoordinate, n.DTExact = c.coord, c.dt
					break
				}
			}
		}
		b := Block{Name: nb.Scope, Kind: Dense, In: in, Out: slices.Clone(nb.OutDims), Neuron: &n}
		if len(nb.OutDims) == 3 {
			b.Kind, b.Kernel, b.Pool = Conv, conv.Kernel, conv.Pool
			if len(in) != 3 || in[0] != b.Out[0]*b.Pool || in[1] != b.Out[1]*b.Pool {
				return nil, fmt.Errorf("block %s: input %v and output %v do not match a pooling of %d", nb.Scope, in, b.Out, b.Pool)
			}
		} else {
			b.In = []int{size(in)} // the dense map sees the features flattened
		}
		l.Blocks = append(l.Blocks, b)
		in = b.Out
	}
	if net.Classes > 0 {
		l.Blocks = append(l.Blocks, Block{Name: model.ReadoutScope, Kind: Dense, In: []int{size(in)}, Out: []int{net.Classes}})
	}
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
