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
// Each kind is a Cell in its own file (lif.go, adaptlif.go, fsfrozen.go, fs.go, fsts.go, …), registered by
// name (Register, Kinds, ParseKind); the time loop (run) is the same for every kind and is the only code that
// steps the recurrence in a graph.
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
// every kind: the kind enters only through LayerCoefficients and the cell's StateLayout.
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
	g := current.Graph()
	co := LayerCoefficients(scope, g, current.DType(), cfg, pshape)
	cell, _ := cfg.Kind.Cell()
	layout := cell.State(cfg)

	// Per-step coefficients, broadcast to the per-step shape [batch, d1, …, dn].
	stepDims := append([]int{dims[0]}, dims[2:]...)
	bc := func(p *Node) *Node { return broadcastParam(p, cfg.ChannelShared, stepDims) }
	adapt := co.EtaDt != nil
	var etaDt, gammaDt *Node
	if adapt {
		etaDt, gammaDt = bc(co.EtaDt), bc(co.GammaDt)
	}
	m := len(co.Beta)
	beta, lambda, oneMinusLambda := make([]*Node, m), make([]*Node, m), make([]*Node, m)
	for j := range m {
		beta[j], lambda[j], oneMinusLambda[j] = bc(co.Beta[j]), bc(co.Lambda[j]), bc(OneMinus(co.Lambda[j]))
	}
	cMu, cRho := co.MuBar, co.RhoBar
	zero := Zeros(g, shapes.Make(current.DType(), stepDims...)) // [batch, d1, …, dn]

	// The carried state of Algorithm 1 is packed, with the step's outputs, into one tensor per step,
	// [components, batch, d1, …, dn], divided by the fusion barrier (see fusionBarrierOne) and split
	// again with unstack: XLA then computes each step in one kernel. Components, in order: V (post-reset
	// voltage), a (with adaptation), V0…VM (the stage values, carried only when M ≥ 1), S, and ṼM (only
	// when v_pre is wanted).
	v, a := zero, zero
	stages := make([]*Node, m+1) // Vm[k], m = 0..M
	for i := range stages {
		stages[i] = zero
	}
	if init != nil {
		v, a = unpackState(init, layout, stages)
	}
	next := make([]*Node, m+1)
	inputs := unstack(current, 1)
	spikeSeq := make([]*Node, len(inputs))
	var vSeq []*Node
	if wantVoltage {
		vSeq = make([]*Node, len(inputs))
	}
	one := fusionBarrierOne(current)
	comps := make([]*Node, 0, m+5)
	for t, in := range inputs {
		// FS module (Eq. 6).
		v0 := Add(MulScalar(v, cMu), in)
		if adapt {
			v0 = Sub(v0, Mul(etaDt, a))
			a = Add(MulScalar(a, cRho), Mul(gammaDt, v0))
		}
		// TS module (Eqs. 8-10).
		mixed := v0
		next[0] = v0
		for j := 1; j <= m; j++ {
			next[j] = Add(Mul(beta[j-1], Sub(stages[j], next[j-1])), stages[j-1])
			mixed = Add(Mul(oneMinusLambda[j-1], mixed), Mul(lambda[j-1], next[j]))
		}
		// Spike and subtractive soft reset.
		spike := Spike(mixed, co.Vth, co.Surrogate, co.StrictSpike)
		reset := MulScalar(spike, co.Vth)
		if co.DetachReset {
			reset = StopGradient(reset)
		}
		v = Sub(mixed, reset)

		comps = append(comps[:0], v)
		if adapt {
			comps = append(comps, a)
		}
		if m > 0 {
			comps = append(comps, next...)
		}
		comps = append(comps, spike)
		if wantVoltage {
			comps = append(comps, mixed)
		}
		state := unstack(Div(Stack(comps, 0), one), 0)
		v, state = state[0], state[1:]
		if adapt {
			a, state = state[0], state[1:]
		}
		if m > 0 {
			copy(stages, state[:m+1])
			state = state[m+1:]
		}
		spikeSeq[t] = state[0]
		if wantVoltage {
			vSeq[t] = state[1]
		}
	}
	spikes = Stack(spikeSeq, 1)
	if wantVoltage {
		vPre = Stack(vSeq, 1)
	}
	return spikes, vPre, packState(v, a, stages, layout)
}

// fusionBarrierOne returns a scalar equal to 1 that the compiler cannot prove to be 1: 1 + 0·max|x|
// (floating-point 0·y is not folded, since it is NaN for infinite y), with no gradient.
//
// Dividing the carried state by it once per step is exact (y/1 = y) and keeps XLA from fusing the
// unrolled recurrence into one chain per output: XLA duplicates cheap elementwise producers into every
// consumer, so each step's output fusion would recompute all earlier steps, and compile time and run time
// would grow as T². A division counts as expensive and is never duplicated, so each step's state is
// computed once (measured compile times: docs/performance-notes.md). If x holds an infinite or NaN value,
// every output is NaN.
func fusionBarrierOne(x *Node) *Node {
	return StopGradient(OnePlus(MulScalar(ReduceAllMax(Abs(x)), 0)))
}

// broadcastParam broadcasts a parameter of shape P to the per-step shape [batch, d1, …, dn].
func broadcastParam(p *Node, channelShared bool, stepDims []int) *Node {
	if channelShared {
		ones := make([]int, len(stepDims))
		for i := range ones {
			ones[i] = 1
		}
		ones[len(ones)-1] = stepDims[len(stepDims)-1]
		p = Reshape(p, ones...)
		return BroadcastToDims(p, stepDims...)
	}
	return BroadcastPrefix(p, stepDims[0])
}
