package model

import (
	"fmt"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/internal/enum"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
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
	// Pool is the side of the square pooling window (and stride) that follows each convolution.
	Pool int
	// Pooling is the kind of pooling ("" means PoolMax).
	Pooling Pooling
	// Hidden is the number of units of the fully connected spiking block.
	Hidden int
	// Dropout is the dropout probability applied after every spiking block, per time step or time-shared as
	// DropoutMode says (as in Config).
	Dropout     float64
	DropoutMode DropoutMode
	// Classes is the number of output classes (DVS Gesture: 11).
	Classes int
	// Readout and ReadoutTau are as in Config.
	Readout    Readout
	ReadoutTau float64
}

// DefaultConvConfig returns the DVS Gesture network for a neuron kind and TS order: 2 blocks of 16 and 32
// channels (3×3 kernels, 4×4 max pooling), 128 hidden units, 11 classes; neuron constants Δt = 20 ms,
// τm = 0.1 s, τa = 0.5 s and target frequencies initialized over [0.5, 5] Hz (the range the paper uses for
// DVS Gesture with T = 50 bins of 20 ms). On 64×64 inputs it has 72 027 parameters with LIF (the paper:
// 0.0726 M): 304 and 4 640 in the convolutions, 65 664 in the fully connected block, 1 419 in the classifier.
//
// Appendix C names the blocks but neither the pooling nor the initialization; these are this toolkit's
// choices. Max pooling keeps a window's strongest response whatever the window's size and the sparsity of
// the DVS frames, where mean pooling left the network silent (measurements: docs/performance-notes.md).
// Weights keep the initialization of every other network here (FanInUniform), so that the neuron kind is
// the only difference between the rows.
func DefaultConvConfig(kind neuron.Kind, order int) ConvConfig {
	n := neuron.DefaultConfig(kind, order)
	n.Dt, n.TauM, n.TauA = 0.02, 0.1, 0.5
	n.FMinHz, n.FMaxHz = 0.5, 5
	return ConvConfig{
		Neuron:   n,
		Channels: []int{16, 32},
		Kernel:   3,
		Pool:     4,
		Pooling:  PoolMax,
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
	}
	if err := validateHead(c.Dropout, c.DropoutMode, c.Readout); err != nil {
		return err
	}
	for _, ch := range c.Channels {
		if ch < 1 {
			return fmt.Errorf("model: %d channels", ch)
		}
	}
	if c.Pooling != "" {
		if _, err := ParsePooling(string(c.Pooling)); err != nil {
			return err
		}
	}
	return nil
}

// Net returns the convolutional network as data for event frames of inputDims [polarity, height, width]
// per step: blocks "conv_<i>" (convolution with bias at every time step on [height, width, channels],
// Pool×Pool pooling of the kind Pooling, neurons with channel-shared parameters over [batch, time,
// height', width', channels]), then the fully connected block "fc" (the last conv block's spikes flattened per step, dense,
// neurons with one parameter set per unit), then the classifier and readout as in FeedForward. Spatial
// sizes must be divisible by Pool at every block.
func (c ConvConfig) Net(inputDims []int) (Net, error) {
	if err := c.Validate(); err != nil {
		return Net{}, err
	}
	if len(inputDims) != 3 {
		return Net{}, fmt.Errorf("model: event frames must be [polarity, height, width] per step, got %v", inputDims)
	}
	net := Net{InputDims: append([]int(nil), inputDims...), Dropout: c.Dropout, DropoutMode: c.DropoutMode,
		Classes: c.Classes, Readout: c.Readout, Alpha: readoutAlpha(c.ReadoutTau, c.Neuron)}
	h, w := inputDims[1], inputDims[2]
	for i, ch := range c.Channels {
		if h%c.Pool != 0 || w%c.Pool != 0 {
			return Net{}, fmt.Errorf("model: conv block %d input %dx%d is not divisible by pool %d", i, h, w, c.Pool)
		}
		b := ConvBlock(fmt.Sprintf("conv_%d", i), h, w, ch, c.Kernel, c.Pool, c.Pooling, i == 0, c.Neuron)
		net.Blocks = append(net.Blocks, b)
		h, w = b.OutDims[0], b.OutDims[1]
	}
	fc := c.Neuron
	fc.ChannelShared = false
	net.Blocks = append(net.Blocks, DenseBlock("fc", c.Hidden, fc))
	return net, nil
}

// Conv builds the convolutional network (see ConvConfig.Net) on x, event frames [batch, time, polarity,
// height, width] (float32, polarity first as the DVS reader delivers them), with dropout drawn when the
// graph trains (as FeedForward). Variables live in "conv_<i>/conv", "conv_<i>/neuron", "fc/dense",
// "fc/neuron" and "readout/dense". It panics, as graph-building functions do, on an invalid configuration.
func Conv(scope *model.Scope, cfg ConvConfig, x *Node) Output {
	if x.Rank() != 5 {
		panic(fmt.Errorf("model.Conv: input must be [batch, time, polarity, height, width], got %s", x.Shape()))
	}
	net, err := cfg.Net(x.Shape().Dimensions[2:])
	if err != nil {
		panic(err)
	}
	return net.forwardTraining(scope, x)
}

// Pooling selects how a convolutional block reduces each Pool×Pool window of its convolution's output (the
// input current, before the neurons).
type Pooling string

const (
	// PoolMax takes the largest current of the window.
	PoolMax Pooling = "max"
	// PoolMean takes the mean current of the window.
	PoolMean Pooling = "mean"
	// PoolSum takes the sum of the window's currents.
	PoolSum Pooling = "sum"
)

// ParsePooling returns the pooling named s.
func ParsePooling(s string) (Pooling, error) {
	return enum.ParseFold("pooling", s, PoolMax, PoolMean, PoolSum)
}

// Pool2D pools x [n, height, width, channels] over non-overlapping pool×pool windows (stride pool, no
// padding; height and width must be multiples of pool) to [n, height/pool, width/pool, channels].
//
// PoolMax passes the gradient to one element per window, the first maximum in row-major order within the
// window (ties are common: where a window saw no events every position carries the same bias); the
// window's reduction is written with a one-hot selection so that every backend differentiates it (GoMLX's
// MaxPool gradient needs SelectAndScatter, which the pure-Go backend lacks).
func Pool2D(x *Node, pool int, kind Pooling) *Node {
	d := x.Shape().Dimensions
	n, h, w, ch := d[0], d[1], d[2], d[3]
	if pool == 1 {
		return x
	}
	if h%pool != 0 || w%pool != 0 {
		panic(fmt.Errorf("model.Pool2D: %dx%d is not divisible by pool %d", h, w, pool))
	}
	win := Reshape(x, n, h/pool, pool, w/pool, pool, ch) // [n, h', p, w', p, ch]
	switch kind {
	case PoolMean:
		return ReduceMean(win, 2, 4)
	case PoolSum:
		return ReduceSum(win, 2, 4)
	case PoolMax, "":
		// [n, h', w', ch, p·p]: the window last, in row-major order.
		flat := Reshape(TransposeAllDims(win, 0, 1, 3, 5, 2, 4), n, h/pool, w/pool, ch, pool*pool)
		sel := StopGradient(OneHot(ArgMax(flat, -1, dtypes.Int32), pool*pool, x.DType()))
		return ReduceSum(Mul(flat, sel), -1)
	}
	panic(fmt.Errorf("model: unknown pooling %q", kind))
}
