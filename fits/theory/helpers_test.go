package theory

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
)

// relErr returns |a − b| / max(|b|, tiny).
func relErr(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-300) }

// logUniform draws from a log-uniform distribution over [lo, hi].
func logUniform(r *rand.Rand, lo, hi float64) float64 {
	return math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo)))
}

// randomConstants draws neuron constants with 0 < μ̄, ρ̄ < 1 over a wide range around the paper's.
func randomConstants(r *rand.Rand) Constants {
	tauM := logUniform(r, 0.01, 0.3)
	tauA := tauM * logUniform(r, 1.2, 20)
	dt := tauM * logUniform(r, 0.005, 0.3)
	return Constants{TauM: tauM, TauA: tauA, Dt: dt}
}

// dtft returns Σ_n h[n] e^{−jωn}.
func dtft(h []float64, omega float64) complex128 {
	var s complex128
	for n, v := range h {
		s += complex(v, 0) * cmplx.Rect(1, -omega*float64(n))
	}
	return s
}

// simulateNoSpikes runs Algorithm 1 (Appendix A.5) without spikes (V_th = ∞) on the input I and
// returns the mixed pre-reset voltage Ṽ_M[k], k = 0..len(I)−1 (zero initial state), with η = γ.
// It is a literal float64 transcription kept inside the tests as an independent oracle.
func simulateNoSpikes(f FS, t TS, input []float64) []float64 {
	g := math.Sqrt(f.KappaBar) // ηΔt = γΔt = √κ̄
	m := len(t.Beta)
	v, a := 0.0, 0.0
	vm := make([]float64, m+1) // V_m[k], m = 0..M
	next := make([]float64, m+1)
	out := make([]float64, len(input))
	for k := 0; k+1 < len(input); k++ {
		next[0] = f.MuBar*v - g*a + input[k]
		a = f.RhoBar*a + g*next[0]
		for s := 1; s <= m; s++ {
			next[s] = t.Beta[s-1]*(vm[s]-next[s-1]) + vm[s-1]
		}
		mixed := mixStages(t, next)
		copy(vm, next)
		v = mixed // V[k+1] = Ṽ_M[k+1] − S·V_th with S = 0
		out[k+1] = mixed
	}
	return out
}

// mixStages mixes the stage outputs y = V_0 … V_M with t's λ in t's nesting, literally: Eq. 10 outermost
// first (PaperNesting), or innermost first (OfficialNesting: b = V_M; b = (1 − λ_m)V_{m−1} + λ_m b).
func mixStages(t TS, y []float64) float64 {
	m := len(y) - 1
	if t.Nesting == PaperNesting {
		mixed := y[0]
		for s := 1; s <= m; s++ {
			mixed = (1-t.Lambda[s-1])*mixed + t.Lambda[s-1]*y[s]
		}
		return mixed
	}
	b := y[m]
	for s := m; s >= 1; s-- {
		b = (1-t.Lambda[s-1])*y[s-1] + t.Lambda[s-1]*b
	}
	return b
}

// simulateTS runs the all-pass recurrence (Eq. 9) and λ-mixing (Eq. 10) on the input sequence V0 and
// returns Ṽ_M.
func simulateTS(t TS, v0 []float64) []float64 {
	m := len(t.Beta)
	prev := make([]float64, m+1) // V_s[k−1]
	out := make([]float64, len(v0))
	cur := make([]float64, m+1)
	for k := range v0 {
		cur[0] = v0[k]
		for s := 1; s <= m; s++ {
			cur[s] = t.Beta[s-1]*(prev[s]-cur[s-1]) + prev[s-1]
		}
		copy(prev, cur)
		out[k] = mixStages(t, cur)
	}
	return out
}

// impulse returns δ[k] of length n.
func impulse(n int) []float64 {
	x := make([]float64, n)
	x[0] = 1
	return x
}

// fdGroupDelay returns −dφ/dω by a central difference of the unwrapped phase of resp.
func fdGroupDelay(resp func(float64) complex128, w, h float64) float64 {
	p := UnwrapPhase([]float64{cmplx.Phase(resp(w - h)), cmplx.Phase(resp(w)), cmplx.Phase(resp(w + h))})
	return -(p[2] - p[0]) / (2 * h)
}

func cabs(z complex128) float64 { return cmplx.Abs(z) }

// Bode is a sampled frequency response: all slices have the length of Omega.
type Bode struct {
	Omega      []float64 // angular frequency, rad/sample
	Magnitude  []float64 // |H(e^{jω})|
	Phase      []float64 // arg H(e^{jω}) in radians, unwrapped along Omega (see UnwrapPhase)
	GroupDelay []float64 // −dφ/dω in samples, analytic
}

// BodeOf samples sys at the given ω (rad/sample, in the order given) and unwraps the phase along them.
func BodeOf(sys ZTransfer, omega []float64) Bode {
	b := Bode{
		Omega:      append([]float64(nil), omega...),
		Magnitude:  make([]float64, len(omega)),
		Phase:      make([]float64, len(omega)),
		GroupDelay: make([]float64, len(omega)),
	}
	for i, w := range omega {
		z := unit(w)
		h, dh := sys.EvalZ(z)
		b.Magnitude[i] = cmplx.Abs(h)
		b.Phase[i] = cmplx.Phase(h)
		b.GroupDelay[i] = -real(z * dh / h)
	}
	b.Phase = UnwrapPhase(b.Phase)
	return b
}

// UnwrapPhase returns a copy of phase (radians) with jumps larger than π between neighbours
// replaced by their 2π complements, so that the sequence is continuous.
func UnwrapPhase(phase []float64) []float64 {
	out := make([]float64, len(phase))
	if len(phase) == 0 {
		return out
	}
	out[0] = phase[0]
	offset := 0.0
	for i := 1; i < len(phase); i++ {
		d := phase[i] - phase[i-1]
		offset -= 2 * math.Pi * math.Round(d/(2*math.Pi))
		out[i] = phase[i] + offset
	}
	return out
}
