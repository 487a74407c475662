// Package theory holds every closed form of the FiTS paper in plain float64 Go: the continuous-time
// FS response and its target-frequency parameterization (Eq. 3, Theorem 1), the semi-implicit
// discrete-time FS response and its realized target frequency (Eq. 6, Theorem 2 of Appendix A.3),
// the Jury stability bounds of the two Euler discretizations (Appendix A.2), the TS all-pass cascade
// with λ-mixing (Eqs. 7-9, Proposition 1 and Appendix A.4), the closed loop of the whole neuron as
// Algorithm 1 runs it (its response, characteristic polynomial and stability), and the pole frequency
// of Appendix A.6.
//
// Units, everywhere:
//   - time constants and the timestep Δt in seconds; μ = 1/τm and ρ = 1/τa in 1/s; κ = ηγ in 1/s²;
//   - continuous-time angular frequency Ω in rad/s, and f = Ω/(2π) in Hz;
//   - discrete-time angular frequency ω in rad/sample, ω ∈ [0, π], and f = ω/(2πΔt) in Hz;
//   - continuous-time group delay in seconds, discrete-time group delay in samples;
//   - phases in radians, principal value in [−π, π] (atan2) unless a function says it unwraps.
//
// The barred quantities of Theorem 2 are μ̄ = 1 − μΔt, ρ̄ = 1 − ρΔt and κ̄ = κΔt² (dimensionless).
//
// Discrete-time responses are transfer functions H(z) = Σ_k h[k] z^{−k} of the impulse response
// h[k] = V[k] to an input I[k] = δ[k] under the time indexing of Algorithm 1, where I[k] enters
// V0[k+1]; so every DT response here is strictly proper (h[0] = 0, h[1] = 1 for the FS module).
package theory
