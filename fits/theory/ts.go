package theory

import (
	"fmt"
	"math"
)

// AllPass is one first-order all-pass stage A(z) = (z⁻¹ − β)/(1 − βz⁻¹) = (1 − βz)/(z − β), |β| < 1
// (Eq. 8). Its time-domain form is the recurrence V_m[k+1] = β(V_m[k] − V_{m−1}[k+1]) + V_{m−1}[k]
// (Eq. 9), whose z-transform gives V_m(z)(z − β) = V_{m−1}(z)(1 − βz).
type AllPass struct{ Beta float64 }

// EvalZ returns A(z) and dA/dz = (β² − 1)/(z − β)².
func (a AllPass) EvalZ(z complex128) (h, dh complex128) {
	b := complex(a.Beta, 0)
	return (1 - b*z) / (z - b), (b*b - 1) / ((z - b) * (z - b))
}

// AllPassPhase returns φ_A(ω) = arg A(e^{jω}) in radians (principal value) of one stage, ω in
// rad/sample.
func AllPassPhase(beta, omega float64) float64 { return Phase(AllPass{beta}, omega) }

// AllPassGroupDelay returns the group delay of one stage in closed form, in samples:
// τ_A(ω) = (1 − β²)/(1 − 2β cos ω + β²), which is positive for |β| < 1.
func AllPassGroupDelay(beta, omega float64) float64 {
	return (1 - beta*beta) / (1 - 2*beta*math.Cos(omega) + beta*beta)
}

// Nesting is the order in which the TS module's λ-mix nests its stages (M ≥ 2; for M ≤ 1 both give the
// same module).
type Nesting uint8

const (
	// OfficialNesting (the zero value) is the released code's nesting, innermost first: b = V_M, then for
	// m = M … 1, b = (1 − λ_m)·V_{m−1} + λ_m·b, and Ṽ = b. It weights the stage outputs as
	//
	//	Ṽ = (1 − λ_1)V_0 + λ_1(1 − λ_2)V_1 + … + λ_1⋯λ_{M−1}(1 − λ_M)V_{M−1} + λ_1⋯λ_M·V_M.
	//
	// The released code's runs produced the paper's tables with it.
	OfficialNesting Nesting = iota
	// PaperNesting is Eq. 10 as the paper writes it, outermost first: Ṽ_0 = V_0,
	// Ṽ_m = (1 − λ_m)Ṽ_{m−1} + λ_m V_m, Ṽ = Ṽ_M.
	PaperNesting
)

// String returns "official" or "paper".
func (n Nesting) String() string {
	if n == PaperNesting {
		return "paper"
	}
	return "official"
}

// EffectiveLambdas returns the weights λ′ for which Eq. 10's outermost-first recursion (PaperNesting)
// computes the same mixed voltage as the innermost-first nesting (OfficialNesting) with weights λ: both
// mix the stage outputs with weights c_m summing to 1, and the outermost-first recursion with
// λ′_m = c_m / (c_0 + … + c_m) reproduces any such weights. With the official weights
// c_0 = 1 − λ_1, c_m = λ_1⋯λ_m(1 − λ_{m+1}) (m < M), c_M = λ_1⋯λ_M:
//
//	λ′_M = λ_1⋯λ_M,   λ′_m = λ_1⋯λ_m(1 − λ_{m+1}) / (1 − λ_1⋯λ_{m+1})   (m < M).
//
// The denominators are accumulated as sums of the positive c_j (no cancellation). λ′_1 = λ_1 when M = 1.
// Where c_0 + … + c_m = 0 (λ_1 = … = λ_{m+1} = 1) the stages up to m carry no weight and λ′_m = 1.
func EffectiveLambdas(lambda []float64) []float64 {
	m := len(lambda)
	out := make([]float64, m)
	if m == 0 {
		return out
	}
	sum, prod := 1-lambda[0], lambda[0] // c_0 + … + c_j and λ_1⋯λ_{j+1}
	for j := 1; j < m; j++ {
		c := prod * (1 - lambda[j])
		sum += c
		out[j-1] = 1
		if sum > 0 {
			out[j-1] = c / sum
		}
		prod *= lambda[j]
	}
	out[m-1] = prod
	return out
}

// BetaOf returns the all-pass coefficient β = tanh(β̂) of the unconstrained coordinate β̂ a network trains
// (Appendix B, "Additional experimental settings"): |β| < 1 for every finite β̂, β = 0 at β̂ = 0.
func BetaOf(betaHat float64) float64 { return math.Tanh(betaHat) }

// LambdaOf returns the mixing weight λ = σ(λ̂) = 1/(1 + e^(−λ̂)) of the mixing logit λ̂ a network trains
// (Appendix B): λ ∈ (0, 1), λ ≈ 0.047 at the initialization λ̂ = −3.
func LambdaOf(lambdaHat float64) float64 { return 1 / (1 + math.Exp(-lambdaHat)) }

// BetaHatOf is the inverse of BetaOf, β̂ = atanh(β) for |β| < 1.
func BetaHatOf(beta float64) float64 { return math.Atanh(beta) }

// LambdaHatOf is the inverse of LambdaOf, the logit λ̂ = ln λ − ln(1 − λ) for λ ∈ [0, 1] (±∞ at λ = 0 or 1).
func LambdaHatOf(lambda float64) float64 { return math.Log(lambda) - math.Log1p(-lambda) }

// TS is the TS module: an M-stage all-pass cascade (Eq. 8) with nested λ-mixing (Eq. 10).
// Beta[m−1] = β_m with |β_m| < 1 and Lambda[m−1] = λ_m ∈ [0, 1], m = 1..M; M = 0 is the identity.
// Nesting is the λ-mix's nesting (the zero value is the released code's, OfficialNesting).
//
// Its transfer function from V0 to the mixed voltage Ṽ is G_M(z). With PaperNesting, G_0 = 1 and
//
//	G_m = (1 − λ_m) G_{m−1} + λ_m P_m,   P_m = Π_{i≤m} A_i,
//
// because V_m = A_m V_{m−1} = P_m V_0 and Ṽ_m = (1 − λ_m)Ṽ_{m−1} + λ_m V_m (Eq. 10). With OfficialNesting
// the same recursion runs with EffectiveLambdas(Lambda).
type TS struct {
	Beta, Lambda []float64
	Nesting      Nesting
}

// PaperLambdas returns the weights of Eq. 10's recursion that realize the module: Lambda itself with
// PaperNesting, EffectiveLambdas(Lambda) with OfficialNesting. It uses min(len(Beta), len(Lambda)) stages.
func (t TS) PaperLambdas() []float64 {
	l := t.Lambda[:min(len(t.Beta), len(t.Lambda))]
	if t.Nesting == PaperNesting {
		return l
	}
	return EffectiveLambdas(l)
}

// Validate checks the lengths and ranges of β and λ.
func (t TS) Validate() error {
	if len(t.Beta) != len(t.Lambda) {
		return fmt.Errorf("beta and lambda must have the same length, got %d and %d", len(t.Beta), len(t.Lambda))
	}
	for i, b := range t.Beta {
		if !(math.Abs(b) < 1) {
			return fmt.Errorf("beta[%d] = %g: need |beta| < 1", i, b)
		}
	}
	for i, l := range t.Lambda {
		if !(l >= 0 && l <= 1) {
			return fmt.Errorf("lambda[%d] = %g: need 0 <= lambda <= 1", i, l)
		}
	}
	if t.Nesting > PaperNesting {
		return fmt.Errorf("unknown nesting %d", t.Nesting)
	}
	return nil
}

// M returns the number of stages.
func (t TS) M() int { return len(t.Beta) }

// EvalZ returns G_M(z) and dG_M/dz by running the recursion above together with its derivative.
// It uses min(len(Beta), len(Lambda)) stages.
func (t TS) EvalZ(z complex128) (g, dg complex128) {
	g, dg = 1, 0
	p, dp := complex(1, 0), complex(0, 0)
	for m, lambda := range t.PaperLambdas() {
		a, da := AllPass{t.Beta[m]}.EvalZ(z)
		p, dp = p*a, dp*a+p*da
		l := complex(lambda, 0)
		g, dg = (1-l)*g+l*p, (1-l)*dg+l*dp
	}
	return g, dg
}

// Response returns G_M(e^{jω}) at ω in rad/sample.
func (t TS) Response(omega float64) complex128 { return FrequencyResponse(t, omega) }

// Magnitude returns |G_M(e^{jω})| (at most 1: a convex mixture of unit-modulus terms).
func (t TS) Magnitude(omega float64) float64 { return Magnitude(t, omega) }

// Phase returns arg G_M(e^{jω}) in radians, principal value.
func (t TS) Phase(omega float64) float64 { return Phase(t, omega) }

// GroupDelay returns −d arg G_M/dω in samples, analytic.
func (t TS) GroupDelay(omega float64) float64 { return GroupDelay(t, omega) }

// MixedStageGroupDelay returns the group delay in samples of the single-stage mixed response
// G_1 = (1 − λ) + λA_1 (Eq. app_ts_single_stage_mix), by Eq. app_ts_single_stage_delay:
//
//	τ_G1(ω) = λ(λ + (1−λ)cos φ_A) / (λ² + (1−λ)² + 2λ(1−λ)cos φ_A) · τ_A(ω).
func MixedStageGroupDelay(beta, lambda, omega float64) float64 {
	c := math.Cos(AllPassPhase(beta, omega))
	num := lambda * (lambda + (1-lambda)*c)
	den := lambda*lambda + (1-lambda)*(1-lambda) + 2*lambda*(1-lambda)*c
	return num / den * AllPassGroupDelay(beta, omega)
}

// NegativeDelay reports the exact condition of Proposition 1 (Eq. app_ts_neg_delay_condition) under
// which the single-stage mixed response has negative group delay at ω:
// λ < 1/2 and cos φ_A(ω) < −λ/(1−λ).
func NegativeDelay(beta, lambda, omega float64) bool {
	return lambda < 0.5 && math.Cos(AllPassPhase(beta, omega)) < -lambda/(1-lambda)
}
