package theory

import (
	"math"
	"math/cmplx"
)

// KappaMaxExplicit returns the Jury bound on κ (1/s²) of the fully explicit Euler discretization,
// (μ+ρ)/Δt − μρ (Eq. app_kappa_bounds, from 1 − D > 0; Appendix A.2).
func KappaMaxExplicit(mu, rho, dt float64) float64 { return (mu+rho)/dt - mu*rho }

// KappaMaxSemiImplicit returns the Jury bound on κ (1/s²) of the semi-implicit Euler discretization
// of Eq. 6, μρ + 4/Δt² − 2(μ+ρ)/Δt (Eq. app_kappa_bounds, from 1 + T + D > 0; Appendix A.2).
func KappaMaxSemiImplicit(mu, rho, dt float64) float64 {
	return mu*rho + 4/(dt*dt) - 2*(mu+rho)/dt
}

// Jury holds the stability bounds of Appendix A.2 and the continuous-time target frequencies they
// imply through Theorem 1 (Eq. 4), which is monotone in κ.
type Jury struct {
	KappaMaxExplicit       float64 // 1/s², Eq. app_kappa_bounds (explicit)
	KappaMaxSemiImplicit   float64 // 1/s², Eq. app_kappa_bounds (semi-implicit)
	FStarMaxExplicitHz     float64 // f*_CT at KappaMaxExplicit, Hz (0 if no nonzero target)
	FStarMaxSemiImplicitHz float64 // f*_CT at KappaMaxSemiImplicit, Hz (0 if no nonzero target)
}

// Jury returns the stability bounds for these constants. At the paper's SSC constants (τm = 0.04 s,
// τa = 0.2 s, Δt = 4 ms) the target-frequency limits are 13.8 Hz (explicit) and 77.2 Hz
// (semi-implicit).
func (c Constants) Jury() Jury {
	mu, rho := c.Mu(), c.Rho()
	j := Jury{
		KappaMaxExplicit:     KappaMaxExplicit(mu, rho, c.Dt),
		KappaMaxSemiImplicit: KappaMaxSemiImplicit(mu, rho, c.Dt),
	}
	j.FStarMaxExplicitHz, _ = c.TargetHz(j.KappaMaxExplicit)
	j.FStarMaxSemiImplicitHz, _ = c.TargetHz(j.KappaMaxSemiImplicit)
	return j
}

// Mat2 is a 2×2 state-update matrix acting on the state (V, a).
type Mat2 [2][2]float64

// ExplicitMatrix returns the zero-input state-update matrix of the fully explicit Euler discretization
// of Eq. 2 (Appendix A.2): [[1−μΔt, −ηΔt], [γΔt, 1−ρΔt]]. η and γ are the couplings of Eq. 2 in 1/s
// (κ = ηγ; the paper uses η = γ = √κ, see EqualGains).
func (c Constants) ExplicitMatrix(eta, gamma float64) Mat2 {
	return Mat2{
		{c.MuBar(), -eta * c.Dt},
		{gamma * c.Dt, c.RhoBar()},
	}
}

// SemiImplicitMatrix returns the zero-input state-update matrix of the semi-implicit discretization of
// Eq. 6 with V[k+1] ≡ V0[k+1] (Appendix A.2):
// [[1−μΔt, −ηΔt], [γΔt(1−μΔt), 1−ρΔt−κΔt²]], κ = ηγ.
func (c Constants) SemiImplicitMatrix(eta, gamma float64) Mat2 {
	return Mat2{
		{c.MuBar(), -eta * c.Dt},
		{gamma * c.Dt * c.MuBar(), c.RhoBar() - eta*gamma*c.Dt*c.Dt},
	}
}

// EqualGains returns η = γ = √κ, the paper's choice η/γ = 1 (κ ≥ 0 in 1/s²).
func EqualGains(kappa float64) (eta, gamma float64) {
	g := math.Sqrt(kappa)
	return g, g
}

// Trace returns the trace T of m.
func (m Mat2) Trace() float64 { return m[0][0] + m[1][1] }

// Det returns the determinant D of m.
func (m Mat2) Det() float64 { return m[0][0]*m[1][1] - m[0][1]*m[1][0] }

// Apply returns m·(v, a).
func (m Mat2) Apply(v, a float64) (float64, float64) {
	return m[0][0]*v + m[0][1]*a, m[1][0]*v + m[1][1]*a
}

// Eigenvalues returns the roots of λ² − Tλ + D, the one with the nonnegative imaginary part (or the
// larger real one) first.
func (m Mat2) Eigenvalues() (complex128, complex128) {
	t, d := m.Trace(), m.Det()
	r := cmplx.Sqrt(complex(t*t-4*d, 0))
	return (complex(t, 0) + r) / 2, (complex(t, 0) - r) / 2
}

// SpectralRadius returns the largest eigenvalue modulus of m; the zero-input dynamics decay iff it is
// below 1.
func (m Mat2) SpectralRadius() float64 {
	l1, l2 := m.Eigenvalues()
	return math.Max(cmplx.Abs(l1), cmplx.Abs(l2))
}

// JuryStable reports whether the second-order Jury conditions 1 − T + D > 0, 1 + T + D > 0 and
// 1 − D > 0 hold (Appendix A.2), i.e. both eigenvalues lie strictly inside the unit circle.
func (m Mat2) JuryStable() bool { return juryStable(m.Trace(), m.Det()) }

// juryStable reports whether the roots of z² − Tz + D lie strictly inside the unit circle: the
// second-order Jury conditions 1 − T + D > 0, 1 + T + D > 0 and 1 − D > 0 (Appendix A.2).
func juryStable(t, d float64) bool { return 1-t+d > 0 && 1+t+d > 0 && 1-d > 0 }

// Trajectory iterates the zero-input dynamics (V[k+1], a[k+1]) = m·(V[k], a[k]) from (v0, a0) and
// returns V and a of length steps+1, index k = 0..steps (the phase-plane figure of Appendix A.2).
func (m Mat2) Trajectory(v0, a0 float64, steps int) (v, a []float64) {
	if steps < 0 {
		steps = 0
	}
	v, a = make([]float64, steps+1), make([]float64, steps+1)
	v[0], a[0] = v0, a0
	for k := range steps {
		v[k+1], a[k+1] = m.Apply(v[k], a[k])
	}
	return v, a
}
