package theory

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
