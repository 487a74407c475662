package neuron

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// FS is the FS module with learnable target frequency Ω* (Theorem 1, Eq. 5): the variable VarOmegaStar
// (VarOmegaStarDT with Config.DTExact) of shape P, initialized log-spaced over [FMinHz, FMaxHz], clamped
// in the graph to [0, Config.MaxTargetHz()], and mapped to η = √(κr), γ = √(κ/r) with κ = κ*(Ω*).
const FS Kind = "fs"

func init() { Register(FS, 40, fsCell{}) }

type fsCell struct{}

func (fsCell) Summary() string {
	return "FS module, learnable target frequency f* (Theorem 1)"
}

func (fsCell) Defaults(*Config, int) {}

func (fsCell) CheckOrder(order int) error { return noTSModule(FS, order) }

func (fsCell) Validate(cfg Config) error { return cfg.validateTargetRange() }

func (fsCell) State(Config) StateLayout { return StateLayout{Adaptation: true} }

func (fsCell) Variables(cfg Config) []string { return []string{targetVariable(cfg)} }

func (fsCell) Coefficients(ctx *context.Context, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int) Coefficients {
	return targetCoefficients(ctx, g, dtype, cfg, paramShape, true)
}

func (fsCell) TargetFrequenciesHz(ctx *context.Context, cfg Config) ([]float64, error) {
	return targetFrequenciesHz(ctx, cfg)
}

// targetVariable returns the name of the target-frequency variable: VarOmegaStar, or VarOmegaStarDT with
// DTExact.
func targetVariable(cfg Config) string {
	if cfg.DTExact {
		return VarOmegaStarDT
	}
	return VarOmegaStar
}

// targetCoefficients creates (or reuses) the target-frequency variable, trainable or not, and returns the
// FS coefficients: ηΔt = √(κ̄r), γΔt = √(κ̄/r), κ̄ = κΔt², with κ from the target clamped to
// [0, MaxTargetHz] through Eq. 5 (or the DT-exact inverse of Theorem 2 with DTExact).
func targetCoefficients(ctx *context.Context, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int, trainable bool) Coefficients {
	co := newCoefficients(cfg)
	k := cfg.Constants()
	fHz, err := theory.LogSpacedHz(cfg.FMinHz, cfg.FMaxHz, paramSize(paramShape))
	if err != nil {
		panic(fmt.Errorf("neuron.Layer: %w", err))
	}
	omegaInit := make([]float64, len(fHz))
	for i, f := range fHz {
		omegaInit[i] = theory.RadPerSecFromHz(f)
	}
	fmax, err := cfg.MaxTargetHz()
	if err != nil {
		panic(fmt.Errorf("neuron.Layer: %w", err))
	}
	omegaVar := ctx.VariableWithValue(targetVariable(cfg), newTensor(dtype, omegaInit, paramShape))
	if !trainable {
		omegaVar.SetTrainable(false)
	}
	omega := ClipScalar(omegaVar.ValueGraph(g), 0, theory.RadPerSecFromHz(fmax))
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

// targetFrequenciesHz reads the target-frequency variable of the layer in ctx's scope: its value divided
// by 2π, after the same clamp to [0, MaxTargetHz] as the graph.
func targetFrequenciesHz(ctx *context.Context, cfg Config) ([]float64, error) {
	omega, err := variableValues(ctx, targetVariable(cfg))
	if err != nil {
		return nil, err
	}
	fmax, err := cfg.MaxTargetHz()
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(omega))
	for i, w := range omega {
		out[i] = math.Min(math.Max(theory.HzFromRadPerSec(w), 0), fmax)
	}
	return out, nil
}
