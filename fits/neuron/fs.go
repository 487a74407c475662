package neuron

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/xslices"
)

// FS is the FS module with learnable target frequency f* (Theorem 1, Eq. 5): the variable of shape P named
// by TargetVariable, ln(f*/Hz) (VarLogTargetHz, the released code's f_raw) or Ω* = 2πf* in rad/s
// (VarOmegaStar; both with a DT suffix with Config.DTExact), initialized over [FMinHz, FMaxHz] as
// Config.FInit spaces it, clamped in the graph to [0, Config.MaxTargetHz()] only with Config.ForwardClip,
// and mapped to η = √(κr), γ = √(κ/r) with κ = κ*(Ω*).
const FS Kind = "fs"

// FSFrozen is the FS module with target frequencies initialized on a log scale and frozen: the target
// variable (as in FS) exists but is not trainable.
const FSFrozen Kind = "fs-frozen"

func init() {
	Register(FSFrozen, 30, fsCell{noTS(FSFrozen)})
	Register(FS, 40, fsCell{noTS(FS)})
}

// fsCell is the cell of FS and of FSFrozen.
type fsCell struct{ noTS }

func (c fsCell) Summary() string {
	if Kind(c.noTS) == FSFrozen {
		return "FS module, target frequency f* fixed at its log-spaced initialization"
	}
	return "FS module, learnable target frequency f* (Theorem 1)"
}

func (fsCell) Validate(cfg Config) error { return cfg.validateTargetRange() }

func (fsCell) State(Config) StateLayout { return StateLayout{Adaptation: true} }

func (fsCell) Variables(cfg Config) []string { return []string{TargetVariable(cfg)} }

func (c fsCell) Coefficients(scope *model.Scope, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int) Coefficients {
	return targetCoefficients(scope, g, dtype, cfg, paramShape, Kind(c.noTS) != FSFrozen)
}

func (fsCell) TargetFrequenciesHz(scope *model.Scope, cfg Config) ([]float64, error) {
	return targetFrequenciesHz(scope, cfg)
}

// TargetVariable returns the name of the target-frequency variable of a layer: VarLogTargetHz (the
// default coordinate) or VarOmegaStar (TargetOmega), each with its DT-exact counterpart with DTExact.
func TargetVariable(cfg Config) string {
	switch {
	case cfg.TargetCoordinate == TargetOmega && cfg.DTExact:
		return VarOmegaStarDT
	case cfg.TargetCoordinate == TargetOmega:
		return VarOmegaStar
	case cfg.DTExact:
		return VarLogTargetHzDT
	}
	return VarLogTargetHz
}

// TargetValue returns the value of the layer's target variable for a target frequency f* in Hz: ln f*, or
// 2πf* in rad/s (TargetOmega).
func TargetValue(cfg Config, fHz float64) float64 {
	if cfg.TargetCoordinate == TargetOmega {
		return theory.RadPerSecFromHz(fHz)
	}
	return math.Log(fHz)
}

// TargetHz returns the target frequency f* in Hz of a value x of the layer's target variable, before any
// clamp: exp(x), or x/(2π) (TargetOmega).
func TargetHz(cfg Config, x float64) float64 {
	if cfg.TargetCoordinate == TargetOmega {
		return theory.HzFromRadPerSec(x)
	}
	return math.Exp(x)
}

// InitialTargetsHz returns the n initial target frequencies in Hz of a layer: spaced over
// [FMinHz, FMaxHz] geometrically (FInitLog, the default) or evenly (FInitLinear), ascending.
func InitialTargetsHz(cfg Config, n int) ([]float64, error) {
	if cfg.FInit == FInitLinear {
		return theory.LinearSpacedHz(cfg.FMinHz, cfg.FMaxHz, n)
	}
	return theory.LogSpacedHz(cfg.FMinHz, cfg.FMaxHz, n)
}

// targetOmega returns Ω* in rad/s from the target variable's value node x: 2π·exp(x), or x (TargetOmega).
func targetOmega(cfg Config, x *Node) *Node {
	if cfg.TargetCoordinate == TargetOmega {
		return x
	}
	return MulScalar(Exp(x), 2*math.Pi)
}

// targetCoefficients creates (or reuses) the target-frequency variable, trainable or not, and returns the
// FS coefficients: ηΔt = √(κ̄r), γΔt = √(κ̄/r), κ̄ = κΔt², with κ from the target (clamped to
// [0, MaxTargetHz] with ForwardClip) through Eq. 5 (or the DT-exact inverse of Theorem 2 with DTExact).
func targetCoefficients(scope *model.Scope, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int, trainable bool) Coefficients {
	co := newCoefficients(cfg)
	k := cfg.Constants()
	fHz, err := InitialTargetsHz(cfg, paramSize(paramShape))
	if err != nil {
		panic(fmt.Errorf("neuron.Layer: %w", err))
	}
	init := xslices.Map(fHz, func(f float64) float64 { return TargetValue(cfg, f) })
	targetVar := scope.VariableWithValue(TargetVariable(cfg), newTensor(dtype, init, paramShape))
	if !trainable {
		targetVar.SetTrainable(false)
	}
	omega := targetOmega(cfg, targetVar.NodeValue(g))
	if cfg.ForwardClip {
		fmax, err := cfg.MaxTargetHz()
		if err != nil {
			panic(fmt.Errorf("neuron.Layer: %w", err))
		}
		omega = ClipScalar(omega, 0, theory.RadPerSecFromHz(fmax))
	}
	var kappaBar *Node
	if cfg.DTExact {
		kappaBar = KappaBarDTExact(MulScalar(omega, cfg.Dt), k.MuBar(), k.RhoBar())
	} else {
		kappaBar = MulScalar(KappaStar(omega, k.Mu(), k.Rho()), cfg.Dt*cfg.Dt)
	}
	sq := Sqrt(kappaBar)
	r := cfg.Ratio()
	co.EtaDt = MulScalar(sq, math.Sqrt(r))
	co.GammaDt = DivScalar(sq, math.Sqrt(r))
	return co
}

// targetFrequenciesHz reads the target-frequency variable of the layer in scope's scope: f* in Hz, after the
// same clamp to [0, MaxTargetHz] as the graph when it clips in the forward pass.
func targetFrequenciesHz(scope *model.Scope, cfg Config) ([]float64, error) {
	vals, err := variableValues(scope, TargetVariable(cfg))
	if err != nil {
		return nil, err
	}
	fmax := math.Inf(1)
	if cfg.ForwardClip {
		if fmax, err = cfg.MaxTargetHz(); err != nil {
			return nil, err
		}
	}
	out := make([]float64, len(vals))
	for i, x := range vals {
		out[i] = math.Min(math.Max(TargetHz(cfg, x), 0), fmax)
	}
	return out, nil
}
