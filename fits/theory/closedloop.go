package theory

import "math"

// ClosedLoop is the subthreshold response of the whole FiTS neuron as Algorithm 1 runs it: the TS
// module sits inside the FS feedback loop, because the carried state is the mixed voltage,
// V[k+1] = Ṽ_M[k+1] − S[k+1]V_th (Algorithm 1, Appendix A.5). Without spikes,
//
//	V0[k+1] = μ̄V[k] − ηΔt a[k] + I[k],   a[k+1] = ρ̄a[k] + γΔt V0[k+1],   V = Ṽ_M = G·V0,
//
// and the z-transform (I[k] enters V0[k+1]: zV0 = μ̄GV0 − ηΔtA + I, (z − ρ̄)A = γΔt zV0) gives the
// transfer function from I to the pre-reset voltage Ṽ_M:
//
//	H(z) = G(z)(z − ρ̄) / ((z − μ̄G(z))(z − ρ̄) + κ̄z).
//
// It is not G(z)·H_d(z); with M = 0 (G ≡ 1) it equals H_d (FS). h[k] = Ṽ_M[k] for I[k] = δ[k].
type ClosedLoop struct {
	FS FS
	TS TS
}

// EvalZ returns H(z) and dH/dz of the closed loop.
func (c ClosedLoop) EvalZ(z complex128) (h, dh complex128) {
	g, dg := c.TS.EvalZ(z)
	mb, rb, kb := complex(c.FS.MuBar, 0), complex(c.FS.RhoBar, 0), complex(c.FS.KappaBar, 0)
	num := g * (z - rb)
	dnum := dg*(z-rb) + g
	den := (z-mb*g)*(z-rb) + kb*z
	dden := (1-mb*dg)*(z-rb) + (z - mb*g) + kb
	return num / den, (dnum*den - num*dden) / (den * den)
}

// Response returns H(e^{jω}) at ω in rad/sample.
func (c ClosedLoop) Response(omega float64) complex128 { return FrequencyResponse(c, omega) }

// Magnitude returns |H(e^{jω})|.
func (c ClosedLoop) Magnitude(omega float64) float64 { return Magnitude(c, omega) }

// Phase returns arg H(e^{jω}) in radians, principal value.
func (c ClosedLoop) Phase(omega float64) float64 { return Phase(c, omega) }

// GroupDelay returns −d arg H/dω in samples, analytic.
func (c ClosedLoop) GroupDelay(omega float64) float64 { return GroupDelay(c, omega) }

// Characteristic returns the coefficients, leading first, of the closed loop's characteristic
// polynomial of degree M + 2,
//
//	P(z) = (z·D(z) − μ̄·N(z))(z − ρ̄) + κ̄·z·D(z),
//
// where G = N/D is the TS module over the common denominator D(z) = Π_m (z − β_m) of its all-pass
// stages: N_0 = D_0 = 1 and N_m = (1 − λ_m)(z − β_m)N_{m−1} + λ_m Π_{i≤m}(1 − β_i z), because
// A_i = (1 − β_i z)/(z − β_i) and G_m = (1 − λ_m)G_{m−1} + λ_m Π_{i≤m} A_i (see TS). P(z) = D(z)·den(z)
// with den the denominator of EvalZ's H (λ_m are TS.PaperLambdas, which realize either nesting), so the poles of H are roots of P (a root of D that N shares is
// a mode of the all-pass states that the transfer function cancels).
func (c ClosedLoop) Characteristic() []float64 {
	n, d, q := []float64{1}, []float64{1}, []float64{1}
	for m, l := range c.TS.PaperLambdas() {
		b := c.TS.Beta[m]
		zb := []float64{1, -b} // z − β_m
		d = polyMul(d, zb)
		q = polyMul(q, []float64{-b, 1}) // 1 − β_m z
		n = polyAdd(polyScale(polyMul(n, zb), 1-l), polyScale(q, l))
	}
	zd := polyMul(d, []float64{1, 0})
	left := polyMul(polyAdd(zd, polyScale(n, -c.FS.MuBar)), []float64{1, -c.FS.RhoBar})
	return polyAdd(left, polyScale(zd, c.FS.KappaBar))
}

// Stable reports whether every root of the characteristic polynomial lies strictly inside the unit
// circle (SchurStable): the subthreshold recurrence of Algorithm 1 then decays from any initial state.
// The TS module inside the FS loop can make the neuron unstable even where the FS module alone is
// stable (FS.Stable).
func (c ClosedLoop) Stable() bool { return SchurStable(c.Characteristic()) }

// SchurStable reports whether every root of the real polynomial p(z) = p[0]zⁿ + p[1]zⁿ⁻¹ + … + p[n]
// (p[0] ≠ 0) lies strictly inside the unit circle, by the Schur–Cohn recursion: with k = p[n]/p[0],
// p is stable iff |k| < 1 and the degree-(n−1) polynomial (p(z) − k·zⁿp(1/z))/z is stable; a nonzero
// constant is stable. Leading zeros are dropped; the zero polynomial is not stable.
func SchurStable(p []float64) bool {
	for len(p) > 0 && p[0] == 0 {
		p = p[1:]
	}
	if len(p) == 0 {
		return false
	}
	c := append([]float64(nil), p...)
	for n := len(c) - 1; n > 0; n-- {
		k := c[n] / c[0]
		if !(math.Abs(k) < 1) {
			return false
		}
		next := make([]float64, n)
		for i := range next {
			next[i] = c[i] - k*c[n-i]
		}
		c = next
	}
	return true
}

// polyMul returns the product of two polynomials given leading coefficient first.
func polyMul(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		for j, y := range b {
			out[i+j] += x * y
		}
	}
	return out
}

// polyAdd returns a + b (leading coefficient first, aligned at the constant term).
func polyAdd(a, b []float64) []float64 {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := append([]float64(nil), a...)
	off := len(a) - len(b)
	for i, y := range b {
		out[off+i] += y
	}
	return out
}

// polyScale returns s·a.
func polyScale(a []float64, s float64) []float64 {
	out := make([]float64, len(a))
	for i, x := range a {
		out[i] = s * x
	}
	return out
}
