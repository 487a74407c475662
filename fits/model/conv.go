package model

import (
	"fmt"

	"github.com/fits-snn/fits/fits/neuron"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers"
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

// Conv builds the convolutional network on x, event frames [batch, time, polarity, height, width] (float32,
// polarity first as the DVS reader delivers them). Each convolutional block applies, at every time step, a
// convolution (with bias) to [height, width, channels], a Pool×Pool mean pooling, and a layer of spiking
// neurons with channel-shared parameters over [batch, time, height', width', channels]. The last block's
// spikes are flattened per time step and feed the fully connected block (dense + neurons), then the
// classifier and readout as in FeedForward. Spatial sizes must be divisible by Pool at every block.
// Variables live in "conv_<i>/conv", "conv_<i>/neuron", "fc/dense", "fc/neuron" and "readout/dense".
func Conv(ctx *context.Context, cfg ConvConfig, x *Node) Output {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	if x.Rank() != 5 {
		panic(fmt.Errorf("model.Conv: input must be [batch, time, polarity, height, width], got %s", x.Shape()))
	}
	ctx = ctx.WithInitializer(FanInUniform(ctx))
	dims := x.Shape().Dimensions
	batch, T := dims[0], dims[1]
	// Channels last, time folded into the batch for the convolutions: [batch·time, height, width, channels].
	h := Reshape(TransposeAllDims(x, 0, 1, 3, 4, 2), batch*T, dims[3], dims[4], dims[2])
	convNeuron := cfg.Neuron
	convNeuron.ChannelShared = true
	var out Output
	for i, ch := range cfg.Channels {
		bctx := ctx.In(fmt.Sprintf("conv_%d", i))
		hd := h.Shape().Dimensions
		if hd[1]%cfg.Pool != 0 || hd[2]%cfg.Pool != 0 {
			panic(fmt.Errorf("model.Conv: block %d input %dx%d not divisible by pool %d", i, hd[1], hd[2], cfg.Pool))
		}
		c := layers.Convolution(bctx.In("conv"), h).Filters(ch).KernelSize(cfg.Kernel).PadSame().Done()
		c = MeanPool(c).Window(cfg.Pool).Done() // [batch·time, h/pool, w/pool, ch]
		cd := c.Shape().Dimensions
		current := Reshape(c, batch, T, cd[1], cd[2], cd[3])
		s := neuron.Layer(bctx.In("neuron"), current, convNeuron)
		out.Spikes = append(out.Spikes, s)
		s = TimeSharedDropout(ctx, s, cfg.Dropout)
		h = Reshape(s, batch*T, cd[1], cd[2], cd[3])
	}
	hd := h.Shape().Dimensions
	flat := Reshape(h, batch, T, hd[1]*hd[2]*hd[3])
	fcNeuron := cfg.Neuron
	fcNeuron.ChannelShared = false
	fctx := ctx.In("fc")
	s := neuron.Layer(fctx.In("neuron"), layers.DenseWithBias(fctx, flat, cfg.Hidden), fcNeuron)
	out.Spikes = append(out.Spikes, s)
	s = TimeSharedDropout(ctx, s, cfg.Dropout)
	n := cfg.Neuron
	out.Logits = ApplyReadout(ctx.In("readout"), s, cfg.Classes, cfg.Readout, readoutAlpha(cfg.ReadoutTau, n))
	return out
}
