// Package neuron implements the FiTS neuron family (Section 3 of the paper) as GoMLX graph layers: plain
// LIF, the adaptive LIF baseline, the FS module with frozen or learnable target frequency, and FS + TS with
// cascade order M ≥ 1. A layer maps an input current [batch, time, neurons] to spikes [batch, time,
// neurons] by running Algorithm 1 (Appendix A.5) over time, unrolled in the graph. Package fits/sim is the
// float64 oracle it is tested against.
//
// Layer is a GoMLX layer: call it in a model function on the current that a synapse computes, in a scope of
// its own (ExampleLayer); after training, ReadLearned returns the layer's learned f* [Hz], β and λ and the
// TS module's group delay at any frequency (ExampleReadLearned). Its variables are named by the Var*
// constants; variables already in the store (e.g. loaded from a checkpoint) are used as they are.
//
// Each kind is a Cell in its own file (lif.go, adaptlif.go, fs.go with FSFrozen, fsts.go, …), registered by
// name (Register, Kinds, ParseKind); the time loop (run) is the same for every kind, and its step,
// Coefficients.Step, is the one graph form of Algorithm 1's step, which package fits/scan runs too.
//
// The unrolled graph is differentiated by autodiff through T copies of the step: fine for short sequences,
// slow to compile at the paper's sizes (T = 250, widths 128–512). To train at those sizes, describe the
// network as data (package fits/model) and train it with the engines of package fits/step (see its
// Example); both paths create and read the same variables. The step, the parameterization (Theorem 1's
// inverse, the DT-exact coordinate, the stability bound, β = tanh β̂ and λ = σ(λ̂)) and the graph's layout
// are in docs/algorithm.md.
package neuron

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
)

// Names of the layer's variables, in the scope passed to Layer. Shapes use P for the
// parameter shape: [d1, …, dn] for an input [batch, time, d1, …, dn], or [dn] with ChannelShared.
const (
	// VarOmegaStar is Ω* = 2πf* in rad/s, shape P: the continuous-time target frequency (Theorem 1).
	// Trainable for FS and FSTS, not for FSFrozen.
	VarOmegaStar = "omega_star"
	// VarOmegaStarDT is Ω*_DT = ω*_DT/Δt in rad/s, shape P: the realized discrete-time target frequency
	// (Theorem 2), used instead of VarOmegaStar with Config.DTExact.
	VarOmegaStarDT = "omega_star_dt"
	// VarLogTargetHz is ln(f*/Hz), shape P: the continuous-time target frequency in the released code's
	// coordinate (f_raw), the default (Config.TargetCoordinate).
	VarLogTargetHz = "log_target_hz"
	// VarLogTargetHzDT is ln(f*_DT/Hz) of the realized discrete-time target, used with Config.DTExact.
	VarLogTargetHzDT = "log_target_hz_dt"
	// VarBetaHat is β̂, shape [M, P...]; β = tanh(β̂) (FSTS).
	VarBetaHat = "beta_hat"
	// VarLambdaHat is λ̂, shape [M, P...]; λ = σ(λ̂) (FSTS).
	VarLambdaHat = "lambda_hat"
	// VarEta and VarGamma are η and γ in 1/s, shape P, of the kinds that learn the coupling directly
	// (AdaptLIF, initialized at zero).
	VarEta   = "eta"
	VarGamma = "gamma"
)

// Layer runs a layer of FiTS neurons on current, the input current [batch, time, d1, …, dn] (usually
// [batch, time, neurons]) with a float dtype, and returns the spikes S[k+1] ∈ {0, 1} with the same shape
// and dtype. current[:, k] is I[k] of Algorithm 1 and output[:, k] is S[k+1]; the state starts at zero.
//
// It panics (as GoMLX graph-building functions do) when cfg is invalid or the input has the wrong rank;
// check cfg.Validate() first for an error instead.
func Layer(scope *model.Scope, current *Node, cfg Config) *Node {
	spikes, _, _ := run(scope, current, cfg, false, nil)
	return spikes
}

// LayerWithVoltage is Layer that also returns the pre-reset mixed voltage ṼM[k+1] (v_pre), with the same
// shape as current.
func LayerWithVoltage(scope *model.Scope, current *Node, cfg Config) (spikes, vPre *Node) {
	spikes, vPre, _ = run(scope, current, cfg, true, nil)
	return spikes, vPre
}

// ParamShape returns the shape P of the per-neuron parameters for an input of dimensions
// [batch, time, d1, …, dn]: [d1, …, dn], or [dn] with ChannelShared.
func ParamShape(inputDims []int, channelShared bool) ([]int, error) {
	if len(inputDims) < 3 {
		return nil, fmt.Errorf("neuron input must be [batch, time, features...], got dimensions %v", inputDims)
	}
	if channelShared {
		return []int{inputDims[len(inputDims)-1]}, nil
	}
	return append([]int(nil), inputDims[2:]...), nil
}

// run runs the layer from the carried state init (nil: zero; see LayerFrom for its layout) and returns the
// spikes, the pre-reset voltage when wantVoltage, and the state after the last step. It is the time loop of
// every kind: the kind enters only through LayerCoefficients.
func run(scope *model.Scope, current *Node, cfg Config, wantVoltage bool, init []*Node) (spikes, vPre *Node, final []*Node) {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Errorf("neuron.Layer: %w", err))
	}
	dims := current.Shape().Dimensions
	pshape, err := ParamShape(dims, cfg.ChannelShared)
	if err != nil {
		panic(fmt.Errorf("neuron.Layer: %w", err))
	}
	if !current.DType().IsFloat() {
		panic(fmt.Errorf("neuron.Layer: input current must be a float tensor, got %s", current.DType()))
	}
	co := LayerCoefficients(scope, current.Graph(), current.DType(), cfg, pshape)
	layout := co.Layout()
	stepDims := append([]int{dims[0]}, dims[2:]...) // [batch, d1, …, dn]
	b := co.Broadcast(stepDims)
	zero := Zeros(current.Graph(), shapes.Make(current.DType(), stepDims...))
	s := State{V: zero, A: zero, Stages: slices.Repeat([]*Node{zero}, layout.Stages)}
	if init != nil {
		s = layout.Unpack(init)
	}

	// The state after each step is packed, with the step's outputs, into one tensor
	// [components, batch, d1, …, dn] (LayerFrom's order, then S, then ṼM when v_pre is wanted), divided by
	// the fusion barrier (FusionBarrierOne) and split again with unstack: XLA then computes each step in
	// one kernel.
	inputs := unstack(current, 1)
	spikeSeq, vSeq := make([]*Node, len(inputs)), make([]*Node, len(inputs)) // vSeq filled when wantVoltage
	one := FusionBarrierOne(current)
	n := layout.Components()
	for t, in := range inputs {
		next, mixed, spike := co.Step(b, s, in, true)
		comps := append(layout.Pack(next), spike)
		if wantVoltage {
			comps = append(comps, mixed)
		}
		parts := unstack(Div(Stack(comps, 0), one), 0)
		s = layout.Unpack(parts[:n])
		spikeSeq[t] = parts[n]
		if wantVoltage {
			vSeq[t] = parts[n+1]
		}
	}
	spikes = Stack(spikeSeq, 1)
	if wantVoltage {
		vPre = Stack(vSeq, 1)
	}
	return spikes, vPre, layout.Pack(s)
}
