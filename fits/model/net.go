package model

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/xslices"
)

// Block is one spiking block of a network: a synaptic map applied at every time step, a layer of FiTS
// neurons, and dropout of the spikes (during training).
type Block struct {
	// Scope is the block's scope ("hidden_0", "conv_1", "fc"): the synapse's variables live in it,
	// the neurons' in Scope/neuron.
	Scope string
	// Synapse maps h [batch, time, in...] (the previous block's output after dropout, or the network input
	// for the first block) to the input current [batch, time, OutDims...], the same map at every time step.
	// scope is the block's scope. It is graph-building code and creates its variables on first use.
	Synapse func(scope *model.Scope, h *Node) *Node
	// InputCotangent, when not nil, computes the cotangent of h from the cotangent of the current, cot
	// [batch, time, OutDims...], by hand (the same value autodiff of Synapse gives). Engines use it where
	// the hand-written form runs faster than the autodiff one (the dense map's cot·Wᵀ on XLA CPU).
	InputCotangent func(scope *model.Scope, h, cot *Node) *Node
	// Dense marks a synapse that is exactly Dense (variables "dense/weights" [in, out] and "dense/biases"
	// [out] in the block's scope) of h with its trailing axes flattened, so that an engine may compute it
	// another way: event-driven, from the nonzero entries of a sparse h (package fits/events).
	Dense bool
	// Neuron configures the layer (ChannelShared for convolutional blocks).
	Neuron neuron.Config
	// OutDims are the per-step dimensions of the current and the spikes: [width], or [height, width,
	// channels] for a convolutional block.
	OutDims []int
}

// Net is a network described as data: spiking blocks and a head. Every engine of package fits/step
// builds its graphs from one Net, so the network that trains is the network that is benchmarked.
type Net struct {
	// InputDims are the per-step dimensions of the input [features] or [polarity, height, width].
	InputDims []int
	// Blocks are the spiking blocks, input first.
	Blocks []Block
	// Dropout is the probability p of dropping a block's output unit during training.
	Dropout float64
	// DropoutMode draws the masks per time step (DropoutStep, the default "": [batch, time, OutDims...], from
	// package fits/dropmask in the training engines) or once for all time steps (DropoutShared: [batch, 1,
	// OutDims...], DropoutMasks).
	DropoutMode DropoutMode
	// Classes > 0 adds the linear classifier with the given Readout (Alpha is the leaky integrator's decay
	// per step) and the cross-entropy loss. Classes = 0 has no classifier: the loss is the sum of the last
	// block's spikes (the Open Neuromorphic benchmark's shape).
	Classes int
	Readout Readout
	Alpha   float64
	// UniformBias draws the dense biases from U(±1/√fan_in) like the weights (PyTorch's nn.Linear, the
	// released code); otherwise they start at zero.
	UniformBias bool
}

// ReadoutScope is the scope of the classifier's variables.
const ReadoutScope = "readout"

// Forward builds the network on x [batch, time, InputDims...] in the store's scope, with the dropout masks
// given (one per block, each [batch, 1, OutDims...] time-shared, as DropoutMasks returns them, or [batch,
// time, OutDims...] per step; nil means no dropout): block i's output is h = s·mask_i. Dense weights start
// from FanInUniform.
func (n Net) Forward(scope *model.Scope, x *Node, masks []*Node) Output {
	scope = n.initializers(scope)
	var out Output
	h := x
	for i, b := range n.Blocks {
		bctx := scope.At("%s", b.Scope)
		s := neuron.Layer(bctx.At("neuron"), b.Synapse(bctx, h), b.Neuron)
		out.Spikes = append(out.Spikes, s)
		h = ApplyMask(s, maskAt(masks, i))
	}
	out.Logits = n.Head(scope, h)
	return out
}

func maskAt(masks []*Node, i int) *Node {
	if i < len(masks) {
		return masks[i]
	}
	return nil
}

// ApplyMask multiplies x [batch, time, d...] by a dropout mask [batch, 1, d...] (broadcast over time) or
// [batch, time, d...] (nil: x unchanged).
func ApplyMask(x, mask *Node) *Node {
	if mask == nil {
		return x
	}
	return Mul(x, mask)
}

// Head returns the logits [batch, Classes] of the last block's output h [batch, time, d...], or nil without
// a classifier. Variables in scope's "readout" scope.
func (n Net) Head(scope *model.Scope, h *Node) *Node {
	if n.Classes == 0 {
		return nil
	}
	scope = n.initializers(scope)
	return ApplyReadout(scope.At("%s", ReadoutScope), h, n.Classes, n.Readout, n.Alpha)
}

// ParamUniformBias is the store parameter (bool) under which Net marks that Dense draws its biases from
// U(±1/√fan_in) instead of zero.
const ParamUniformBias = "model_uniform_bias"

// initializers returns scope with FanInUniform as its initializer and, with UniformBias, the parameter that
// makes Dense draw its biases from U(±1/√fan_in).
func (n Net) initializers(scope *model.Scope) *model.Scope {
	scope = scope.WithInitializer(FanInUniform(scope))
	if n.UniformBias {
		scope.SetParam(ParamUniformBias, true)
	}
	return scope
}

// Loss returns the summed loss over the valid examples (mask [batch], 1 for real examples) and the number
// of correct predictions: the cross-entropy of logits [batch, classes] against labels [batch] (int32), or,
// without a classifier, the sum of the last block's output h [batch, time, d...] (correct is then 0).
func (n Net) Loss(logits, h, labels, mask *Node) (lossSum, correct *Node) {
	if n.Classes == 0 {
		perExample := ReduceSum(Reshape(h, h.Shape().Dimensions[0], -1), -1)
		return ReduceAllSum(Mul(perExample, mask)), ZerosLike(ReduceAllSum(mask))
	}
	ce := Neg(ReduceSum(Mul(OneHot(labels, n.Classes, logits.DType()), LogSoftmax(logits, -1)), -1)) // [batch]
	lossSum = ReduceAllSum(Mul(ce, mask))
	hit := ConvertDType(Equal(ArgMax(logits, -1, dtypes.Int32), labels), mask.DType())
	return lossSum, ReduceAllSum(Mul(hit, mask))
}

// RateSum returns Σ over valid examples of each example's mean firing rate (spikes per neuron per bin)
// for spikes s [batch, time, d...] and mask [batch].
func RateSum(s, mask *Node) *Node {
	return ReduceAllSum(Mul(ReduceMean(s, xslices.Iota(1, s.Rank()-1)...), mask))
}

// DropoutMasks draws one time-shared dropout mask per block, [batch, 1, OutDims...]: 0 with probability p,
// 1/(1−p) otherwise, from the store's random number generator (whose state travels in checkpoints): the
// masks of DropoutShared mode. It returns nil when Dropout is 0.
func (n Net) DropoutMasks(scope *model.Scope, g *Graph, dtype dtypes.DType, batch int) []*Node {
	if n.Dropout <= 0 {
		return nil
	}
	return n.masks(scope, g, dtype, batch, 1)
}

// masks draws one dropout mask [batch, steps, OutDims...] per block from the store's random number generator.
func (n Net) masks(scope *model.Scope, g *Graph, dtype dtypes.DType, batch, steps int) []*Node {
	masks := make([]*Node, len(n.Blocks))
	for i, b := range n.Blocks {
		masks[i] = dropoutMask(scope, g, dtype, append([]int{batch, steps}, b.OutDims...), n.Dropout)
	}
	return masks
}

// StepDropout reports whether the network has dropout drawn per time step (Dropout > 0 in DropoutStep
// mode, the default).
func (n Net) StepDropout() bool {
	if n.Dropout <= 0 {
		return false
	}
	m, err := ParseDropoutMode(string(n.DropoutMode))
	return err == nil && m == DropoutStep
}

// OutSize returns the number of output units of block i per example and time step (the product of its
// OutDims).
func (n Net) OutSize(i int) int {
	size := 1
	for _, d := range n.Blocks[i].OutDims {
		size *= d
	}
	return size
}

// Validate reports the first unusable part of the network.
func (n Net) Validate() error {
	if len(n.Blocks) == 0 {
		return fmt.Errorf("model: a network needs at least one spiking block")
	}
	if err := validateHead(n.Dropout, n.DropoutMode, n.Readout); err != nil {
		return err
	}
	if n.Classes == 1 || n.Classes < 0 {
		return fmt.Errorf("model: %d classes", n.Classes)
	}
	for _, b := range n.Blocks {
		if b.Synapse == nil || len(b.OutDims) == 0 {
			return fmt.Errorf("model: block %q has no synapse or no output dimensions", b.Scope)
		}
		if err := b.Neuron.Validate(); err != nil {
			return fmt.Errorf("model: block %q: %w", b.Scope, err)
		}
	}
	return nil
}

// DenseBlock returns a block whose synapse is the dense map Dense (variables "dense/weights" [in, out] and
// "dense/biases" [out]) from h [batch, time, in...] (trailing dimensions flattened) to [batch, time, out].
func DenseBlock(scope string, out int, n neuron.Config) Block {
	return Block{
		Scope:   scope,
		Synapse: func(scope *model.Scope, h *Node) *Node { return Dense(scope, flattenFeatures(h), out) },
		InputCotangent: func(scope *model.Scope, h, cot *Node) *Node {
			// cot h = cot·Wᵀ with Wᵀ materialized: the form autodiff emits ran far slower on XLA CPU.
			neuron.VariablesAsParameters(scope, h.Graph())
			w := scope.At("dense").GetVariable("weights").NodeValue(h.Graph())
			rows := h.Shape().Dimensions[0] * h.Shape().Dimensions[1]
			return Reshape(DotProduct(Reshape(cot, rows, out), Transpose(w, 0, 1)), h.Shape().Dimensions...)
		},
		Dense:   true,
		Neuron:  n,
		OutDims: []int{out},
	}
}

// flattenFeatures reshapes [batch, time, d1, …, dn] to [batch, time, d1·…·dn].
func flattenFeatures(h *Node) *Node {
	d := h.Shape().Dimensions
	if len(d) == 3 {
		return h
	}
	return Reshape(h, d[0], d[1], -1)
}

// Dense is the affine map of layers.DenseWithBias (variables "dense/weights" [in, out] and "dense/biases"
// [out] in scope) applied to x [..., in] (any leading dimensions, e.g. [batch, time, in]), computed as one
// 2-D matrix product over [batch·time, in]. Its weight gradient is then a plain
// [in, batch·time]·[batch·time, out] product, where the einsum form would contract two axes in the backward
// pass, which XLA CPU runs far slower (measured: docs/performance-notes.md).
func Dense(scope *model.Scope, x *Node, out int) *Node {
	dctx := scope.At("dense")
	dims := x.Shape().Dimensions
	in := dims[len(dims)-1]
	g := x.Graph()
	neuron.VariablesAsParameters(scope, g)
	w := dctx.VariableWithShape("weights", shapes.Make(x.DType(), in, out)).NodeValue(g)
	bctx := dctx
	if model.GetParamOr(scope, ParamUniformBias, false) {
		bctx = dctx.WithInitializer(uniformInit(dctx, 1/math.Sqrt(float64(in))))
	}
	b := bctx.VariableWithShape("biases", shapes.Make(x.DType(), out)).NodeValue(g)
	rows := x.Shape().Size() / in
	y := Add(DotProduct(Reshape(x, rows, in), w), Reshape(b, 1, out))
	outDims := append(append([]int{}, dims[:len(dims)-1]...), out)
	return Reshape(y, outDims...)
}

// ConvBlock returns a convolutional block: at every time step a Kernel×Kernel convolution with bias
// ("same" padding, stride 1; variables in "conv") to channels, then Pool×Pool pooling of the kind given
// (window = stride, no padding; height and width must be multiples of pool), on h [batch, time, height,
// width, in channels] (channels last), or, when polarityFirst, on the event frames [batch, time, polarity,
// height, width] of the input. height and width are the block's input sizes.
func ConvBlock(scope string, height, width, channels, kernel, pool int, pooling Pooling, polarityFirst bool, n neuron.Config) Block {
	n.ChannelShared = true
	return Block{
		Scope: scope,
		Synapse: func(scope *model.Scope, h *Node) *Node {
			d := h.Shape().Dimensions
			batch, T := d[0], d[1]
			if polarityFirst {
				h = Reshape(TransposeAllDims(h, 0, 1, 3, 4, 2), batch*T, d[3], d[4], d[2])
			} else {
				h = Reshape(h, batch*T, d[2], d[3], d[4])
			}
			neuron.VariablesAsParameters(scope, h.Graph())
			c := layers.Convolution(scope.At("conv"), h).Filters(channels).KernelSize(kernel).PadSame().Done()
			c = Pool2D(c, pool, pooling) // [batch·time, height/pool, width/pool, channels]
			cd := c.Shape().Dimensions
			return Reshape(c, batch, T, cd[1], cd[2], cd[3])
		},
		Neuron:  n,
		OutDims: []int{height / pool, width / pool, channels},
	}
}
