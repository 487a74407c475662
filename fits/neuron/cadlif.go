package neuron

import (
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
)

// CAdLIF is the adaptive LIF neuron that learns its coupling η and γ (1/s) directly, from a non-zero
// initialization: the neuron of the strongest feedforward baselines of the paper's Table 1, cAdLIF
// (Deckers et al., 2024) and SE-adLIF (Baronig et al., 2024), written as the semi-implicit FS update of
// Algorithm 1 (Eq. 6) without TS module:
//
//	V0 = (1 − μΔt)V − ηΔt·a + I;  a ← (1 − ρΔt)a + γΔt·V0
//
// Its variables are VarEta and VarGamma of shape P, trainable. Unlike FS, no target frequency is
// parameterized: the neuron's frequency preference is implicit in κ = ηγ (Theorem 1 maps it to f* only
// after the fact), which is the contrast the paper draws with FiTS (Section 3.1).
//
// Initialization: η and γ are drawn independently and uniformly from [√κ*(FMinHz), √κ*(FMaxHz)] with the
// store's random number generator (seeded by the training seed), κ* the inverse map of Eq. 5. So
// κ = ηγ lies in [κ*(FMinHz), κ*(FMaxHz)]: every neuron starts with a non-zero continuous-time target
// frequency (Theorem 1) inside the range the FS kinds start in (SHD/SSC, [1, 50] Hz: η, γ ∈ [3.6, 314]
// 1/s), and below the stable limit, since Validate requires FMaxHz ≤ MaxTargetHz, the target at
// KappaFraction (0.99) of the Jury bound κmax of the semi-implicit update (Appendix A.2). The start must
// be non-zero: η = γ = 0 is the stationary point that AdaptLIF never leaves.
//
// Constraint (the "c" of cAdLIF): the graph clamps η and γ to [0, √(KappaFraction·κmax)] in the forward
// pass (the gradient is zero outside, as for the clamp of the FS target). Then 0 ≤ κ ≤ KappaFraction·κmax
// < κmax, and all three Jury conditions of Appendix A.2 hold for any value the variables reach in
// training: 1 + T + D > 0 is the bound on κ, 1 − T + D = μΔt·ρΔt + κΔt² > 0 needs κ ≥ 0, and
// 1 − D > 0 holds for every κ (D = (1 − μΔt)(1 − ρΔt)).
//
// DTExact and EtaGammaRatio do not apply: the initialization and the range check use the continuous-time
// map, and η and γ are drawn independently.
const CAdLIF Kind = "cadlif"

func init() { Register(CAdLIF, 25, cadlifCell{noTS(CAdLIF)}) }

type cadlifCell struct{ noTS }

func (cadlifCell) Summary() string {
	return "adaptive LIF with learnable coupling eta, gamma initialized non-zero (cAdLIF / SE-adLIF baselines, Table 1)"
}

func (cadlifCell) Validate(cfg Config) error {
	cfg.DTExact = false
	return cfg.validateTargetRange()
}

func (cadlifCell) State(Config) StateLayout { return StateLayout{Adaptation: true} }

func (cadlifCell) Variables(Config) []string { return []string{VarEta, VarGamma} }

func (cadlifCell) Coefficients(scope *model.Scope, g *Graph, dtype dtypes.DType, cfg Config, paramShape []int) Coefficients {
	co := newCoefficients(cfg)
	lo, hi, bound := cadlifRanges(cfg)
	init := scope.WithInitializer(initializer.RandomUniformFn(scope, lo, hi))
	shape := shapes.Make(dtype, paramShape...)
	eta := init.VariableWithShape(VarEta, shape).NodeValue(g)
	gamma := init.VariableWithShape(VarGamma, shape).NodeValue(g)
	co.EtaDt = MulScalar(ClipScalar(eta, 0, bound), cfg.Dt)
	co.GammaDt = MulScalar(ClipScalar(gamma, 0, bound), cfg.Dt)
	return co
}

// cadlifRanges returns the initialization range [lo, hi] of η and γ in 1/s, √κ*(FMinHz) to
// √κ*(FMaxHz), and the clamp bound √(KappaFraction·κmax).
func cadlifRanges(cfg Config) (lo, hi, bound float64) {
	k := cfg.Constants()
	lo = math.Sqrt(theory.KappaStar(k.Mu(), k.Rho(), theory.RadPerSecFromHz(cfg.FMinHz)))
	hi = math.Sqrt(theory.KappaStar(k.Mu(), k.Rho(), theory.RadPerSecFromHz(cfg.FMaxHz)))
	bound = math.Sqrt(cfg.kappaFraction() * theory.KappaMaxSemiImplicit(k.Mu(), k.Rho(), cfg.Dt))
	return lo, hi, bound
}
