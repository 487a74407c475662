package neuron

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/xslices"
)

// Cell is one member of the neuron family: what distinguishes it from the others. Every cell runs the same
// update of Algorithm 1 (Appendix A.5) with its own per-step constants (Coefficients); the time loop that
// runs the update (Layer, LayerFrom) and the engines that differentiate it are the same for every cell.
//
// A new kind is one file in this package that declares its Kind, implements Cell and calls Register from
// an init function, plus its float64 twin in package fits/sim (registered under the same name) and tests:
// the tests that hold every kind to its twin iterate over the registry.
type Cell interface {
	// Summary is a one-line description for help texts.
	Summary() string
	// Defaults sets the cell's own defaults in cfg, which holds DefaultConfig's shared ones (the SSC
	// constants of Appendix B); order is the requested TS order M, which cells without a TS module ignore.
	Defaults(cfg *Config, order int)
	// CheckOrder reports whether the cell accepts the TS cascade order M = order.
	CheckOrder(order int) error
	// Validate checks the options of cfg that are the cell's own; Config.Validate has checked the shared
	// ones (constants, threshold, surrogate, κ fraction) and the order.
	Validate(cfg Config) error
	// State returns the layout of the state the cell carries between steps for a valid cfg.
	State(cfg Config) StateLayout
	// Variables returns the names of the variables that Coefficients creates, in creation order. They are
	// stored in checkpoints: a cell never renames them.
	Variables(cfg Config) []string
	// Coefficients creates the cell's variables in scope's current scope with their initial values, or uses
	// those already there (e.g. loaded from a checkpoint), and returns the per-step constants of Algorithm 1
	// as nodes of g with the float dtype, of the parameter shape P = paramShape (see ParamShape), built from
	// newCoefficients(cfg). cfg is valid. It panics on errors, as graph-building functions do.
	Coefficients(scope *model.Scope, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int) Coefficients
}

// TargetFrequencyCell is a cell parameterized by a target frequency f* (Theorem 1; Theorem 2 with
// Config.DTExact), initialized log-spaced over [Config.FMinHz, Config.FMaxHz] in neuron order.
type TargetFrequencyCell interface {
	Cell
	// TargetFrequenciesHz returns the target frequencies f* in Hz of the layer in scope's current scope as
	// the graph realizes them, flattened in row-major order of P.
	TargetFrequenciesHz(scope *model.Scope, cfg Config) ([]float64, error)
}

// TSCell is a cell with the TS module of Eqs. 8–10.
type TSCell interface {
	Cell
	// TSCoefficients returns β and λ of the layer in scope's current scope: beta[m−1] and lambda[m−1] hold
	// stage m's coefficients, flattened in row-major order of P.
	TSCoefficients(scope *model.Scope, cfg Config) (beta, lambda [][]float64, err error)
}

// StateLayout is the carried state of a cell between two time steps, in the order of LayerFrom: the
// post-reset voltage V; the adaptation current a when Adaptation; the stage values V0…VM of the TS cascade
// when Stages = M + 1 > 0. Each component has the per-step shape [batch, d1, …, dn].
type StateLayout struct {
	Adaptation bool
	Stages     int
}

// Components returns the number of state tensors.
func (s StateLayout) Components() int {
	n := 1 + s.Stages
	if s.Adaptation {
		n++
	}
	return n
}

type registration struct {
	kind Kind
	rank int
	cell Cell
}

// registry holds the registered cells ordered by rank, then name.
var registry []registration

var kindName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Register makes a cell available under kind. rank orders Kinds() (the paper's kinds use 10, 20, …, 50 from
// LIF to FSTS; a new kind picks a rank between or after them). It panics when kind is not a lower-case
// name of letters, digits and '-' starting with a letter, when the name is taken, or when c is nil.
// Register is meant to be called from init functions.
func Register(kind Kind, rank int, c Cell) {
	if !kindName.MatchString(string(kind)) {
		panic(fmt.Sprintf("neuron.Register: invalid kind name %q", string(kind)))
	}
	if c == nil {
		panic(fmt.Sprintf("neuron.Register: nil cell for kind %q", string(kind)))
	}
	for _, r := range registry {
		if r.kind == kind {
			panic(fmt.Sprintf("neuron.Register: kind %q registered twice", string(kind)))
		}
	}
	registry = append(registry, registration{kind, rank, c})
	slices.SortStableFunc(registry, func(a, b registration) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.kind, b.kind))
	})
}

// LayerCoefficients creates (or reuses) the variables of the layer of configuration cfg in scope's current
// scope and returns its per-step constants as nodes of g with the float dtype, of the parameter shape P =
// paramShape (see ParamShape): the cell's Coefficients, checked against the cell's state layout. Engines
// that differentiate the recurrence by hand start here. It panics when cfg is invalid.
func LayerCoefficients(scope *model.Scope, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int) Coefficients {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Errorf("neuron.Layer: %w", err))
	}
	cell, _ := cfg.Kind.Cell()
	VariablesAsParameters(scope, g)
	co := cell.Coefficients(scope, g, dtype, cfg, paramShape)
	layout := cell.State(cfg)
	m := len(co.Beta)
	switch {
	case (co.EtaDt != nil) != layout.Adaptation || (co.GammaDt != nil) != layout.Adaptation:
		panic(fmt.Errorf("neuron.Layer: cell %s: adaptation coefficients present = %v, state carries a = %v",
			cfg.Kind, co.EtaDt != nil, layout.Adaptation))
	case len(co.Lambda) != m || (m == 0 && layout.Stages != 0) || (m > 0 && layout.Stages != m+1):
		panic(fmt.Errorf("neuron.Layer: cell %s: %d betas and %d lambdas for %d carried stages",
			cfg.Kind, m, len(co.Lambda), layout.Stages))
	}
	return co
}

// newCoefficients returns the coefficients shared by every cell: μ̄ = 1 − μΔt, ρ̄ = 1 − ρΔt, Vth, the
// surrogate and DetachReset; no adaptation and no TS stage.
func newCoefficients(cfg Config) Coefficients {
	k := cfg.Constants()
	return Coefficients{
		MuBar: k.MuBar(), RhoBar: k.RhoBar(),
		Vth: cfg.Vth, Surrogate: cfg.Surrogate, DetachReset: cfg.DetachReset,
		StrictSpike: !cfg.TSMix.Paper(),
	}
}

// noTS, the kind of a cell without a TS module, implements that cell's Defaults (none) and CheckOrder.
type noTS Kind

func (noTS) Defaults(*Config, int) {}

func (k noTS) CheckOrder(order int) error {
	if order != 0 {
		return fmt.Errorf("kind %s has no TS module: order must be 0, got %d", Kind(k), order)
	}
	return nil
}

// paramSize returns the number of neurons (parameter sets) of the parameter shape P.
func paramSize(paramShape []int) int {
	n := 1
	for _, d := range paramShape {
		n *= d
	}
	return n
}

// newTensor returns a tensor of dtype (Float32 or Float64) with the given values and dimensions.
func newTensor(dtype dtypes.DType, values []float64, dims []int) *tensors.Tensor {
	switch dtype {
	case dtypes.Float64:
		return tensors.FromFlatDataAndDimensions(slices.Clone(values), dims...)
	case dtypes.Float32:
		return tensors.FromFlatDataAndDimensions(xslices.Map(values, func(v float64) float32 { return float32(v) }), dims...)
	default:
		panic(fmt.Errorf("neuron.Layer: unsupported dtype %s (use Float32 or Float64)", dtype))
	}
}
