package model

import (
	"fmt"

	"github.com/fits-snn/fits/fits/neuron"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// ConvConfig describes the convolutional network of the DVS Gesture experiment (Appendix C): convolutional
// spiking blocks, one fully connected spiking block and a linear classifier.
type ConvConfig struct {
	// Neuron configures every spiking layer. In the convolutional blocks the neuron parameters are shared
	// across spatial positions within each channel (Config.ChannelShared is forced on there); the fully
	// connected block has one set per unit (forced off).
	Neuron neuron.Config
	// Channels lists the output channels of the convolutional blocks (the default: 16 and 32).
	Channels []int
	// Kernel is the side of the square convolution kernels (stride 1, "same" padding).
	Kernel int
	// Pool is the side of the square mean-pooling window (and stride) that follows each convolution.
	Pool int
	// Hidden is the number of units of the fully connected spiking block.
	Hidden int
	// Dropout is the time-shared dropout probability applied after every spiking block.
	Dropout float64
	// Classes is the number of output classes (DVS Gesture: 11).
	Classes int
	// Readout and ReadoutTau are as in Config.
	Readout    Readout
	ReadoutTau float64
}

// DefaultConvConfig returns the DVS Gesture network for a neuron kind and TS order: 2 blocks of 16 and 32
// channels (3×3 kernels, 4×4 mean pooling), 128 hidden units, 11 classes; neuron constants Δt = 20 ms,
// τm = 0.1 s, τa = 0.5 s and target frequencies initialized over [0.5, 5] Hz (the range the paper uses for
// DVS Gesture with T = 50 bins of 20 ms). On 64×64 inputs it has about 0.072 M parameters with LIF.
func DefaultConvConfig(kind neuron.Kind, order int) ConvConfig {
	n := neuron.DefaultConfig(kind, order)
	n.Dt, n.TauM, n.TauA = 0.02, 0.1, 0.5
	n.FMinHz, n.FMaxHz = 0.5, 5
	return ConvConfig{
		Neuron:   n,
		Channels: []int{16, 32},
		Kernel:   3,
		Pool:     4,
		Hidden:   128,
		Classes:  11,
		Readout:  ReadoutMean,
	}
}

// Validate reports the first unusable field.
func (c ConvConfig) Validate() error {
	if err := c.Neuron.Validate(); err != nil {
		return err
	}
	switch {
	case len(c.Channels) == 0:
		return fmt.Errorf("model: no convolutional blocks")
	case c.Kernel < 1 || c.Pool < 1 || c.Hidden < 1:
		return fmt.Errorf("model: kernel %d, pool %d, hidden %d", c.Kernel, c.Pool, c.Hidden)
	case c.Classes < 2:
		return fmt.Errorf("model: %d classes", c.Classes)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return fmt.Errorf("model: dropout %g outside [0, 1)", c.Dropout)
	}
	for _, ch := range c.Channels {
		if ch < 1 {
			return fmt.Errorf("model: %d channels", ch)
		}
	}
	if c.Readout != "" {
		if _, err := ParseReadout(string(c.Readout)); err != nil {
			return err
		}
	}
	return nil
}

// Net returns the convolutional network as data for event frames of inputDims [polarity, height, width]
// per step: blocks "conv_<i>" (convolution with bias at every time step on [height, width, channels],
// Pool×Pool mean pooling, neurons with channel-shared parameters over [batch, time, height', width',
// channels]), then the fully connected block "fc" (the last conv block's spikes flattened per step, dense,
// neurons with one parameter set per unit), then the classifier and readout as in FeedForward. Spatial
// sizes must be divisible by Pool at every block.
func (c ConvConfig) Net(inputDims []int) (Net, error) {
	if err := c.Validate(); err != nil {
		return Net{}, err
	}
	if len(inputDims) != 3 {
		return Net{}, fmt.Errorf("model: event frames must be [polarity, height, width] per step, got %v", inputDims)
	}
	net := Net{InputDims: append([]int(nil), inputDims...), Dropout: c.Dropout, Classes: c.Classes,
		Readout: c.Readout, Alpha: readoutAlpha(c.ReadoutTau, c.Neuron)}
	h, w := inputDims[1], inputDims[2]
	for i, ch := range c.Channels {
		if h%c.Pool != 0 || w%c.Pool != 0 {
			return Net{}, fmt.Errorf("model: conv block %d input %dx%d is not divisible by pool %d", i, h, w, c.Pool)
		}
		b := ConvBlock(fmt.Sprintf("conv_%d", i), h, w, ch, c.Kernel, c.Pool, i == 0, c.Neuron)
		net.Blocks = append(net.Blocks, b)
		h, w = b.OutDims[0], b.OutDims[1]
	}
	fc := c.Neuron
	fc.ChannelShared = false
	net.Blocks = append(net.Blocks, DenseBlock("fc", c.Hidden, fc))
	return net, nil
}

// Conv builds the convolutional network (see ConvConfig.Net) on x, event frames [batch, time, polarity,
// height, width] (float32, polarity first as the DVS reader delivers them), with time-shared dropout drawn
// when the context is training. Variables live in "conv_<i>/conv", "conv_<i>/neuron", "fc/dense",
// "fc/neuron" and "readout/dense". It panics, as graph-building functions do, on an invalid configuration.
func Conv(ctx *context.Context, cfg ConvConfig, x *Node) Output {
	if x.Rank() != 5 {
		panic(fmt.Errorf("model.Conv: input must be [batch, time, polarity, height, width], got %s", x.Shape()))
	}
	net, err := cfg.Net(x.Shape().Dimensions[2:])
	if err != nil {
		panic(err)
	}
	return net.forwardTraining(ctx, x)
}
