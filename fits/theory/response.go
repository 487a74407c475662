package theory

import (
	"math"
	"math/cmplx"
	"sort"
)

// ZTransfer is a discrete-time transfer function H(z) that can be evaluated, together with its
// derivative dH/dz, at any complex z. FS, TS, AllPass and ClosedLoop implement it.
type ZTransfer interface {
	// EvalZ returns H(z) and dH/dz at z.
	EvalZ(z complex128) (h, dh complex128)
}

// unit returns e^{jω}.
func unit(omega float64) complex128 { return cmplx.Rect(1, omega) }

// FrequencyResponse returns H(e^{jω}) for ω in rad/sample.
func FrequencyResponse(sys ZTransfer, omega float64) complex128 {
	h, _ := sys.EvalZ(unit(omega))
	return h
}

// Magnitude returns |H(e^{jω})| for ω in rad/sample.
func Magnitude(sys ZTransfer, omega float64) float64 { return cmplx.Abs(FrequencyResponse(sys, omega)) }

// Phase returns arg H(e^{jω}) in radians, principal value in [−π, π] (atan2), for ω in rad/sample.
func Phase(sys ZTransfer, omega float64) float64 { return cmplx.Phase(FrequencyResponse(sys, omega)) }

// GroupDelay returns τ(ω) = −dφ/dω in samples (Eq. 7), computed analytically:
// dφ/dω = Re(z H'(z)/H(z)) at z = e^{jω}, so τ(ω) = −Re(z H'(z)/H(z)).
func GroupDelay(sys ZTransfer, omega float64) float64 {
	z := unit(omega)
	h, dh := sys.EvalZ(z)
	return -real(z * dh / h)
}

// logMagSlope returns d ln|H(e^{jω})| / dω = −Im(z H'(z)/H(z)) at z = e^{jω}.
func logMagSlope(sys ZTransfer, omega float64) float64 {
	z := unit(omega)
	h, dh := sys.EvalZ(z)
	return -imag(z * dh / h)
}

// LinSpace returns n points evenly spaced over [a, b] (n ≥ 2; n = 1 gives [a]).
func LinSpace(a, b float64, n int) []float64 {
	if n <= 0 {
		return nil
	}
	out := make([]float64, n)
	if n == 1 {
		out[0] = a
		return out
	}
	for i := range out {
		out[i] = a + (b-a)*float64(i)/float64(n-1)
	}
	out[n-1] = b
	return out
}

// LogSpace returns n points geometrically spaced over [a, b], a, b > 0 (n = 1 gives [a]).
func LogSpace(a, b float64, n int) []float64 {
	out := LinSpace(math.Log(a), math.Log(b), n)
	for i, v := range out {
		out[i] = math.Exp(v)
	}
	if n >= 1 {
		out[0] = a
	}
	if n >= 2 {
		out[n-1] = b
	}
	return out
}

// sweepGrid is the dense grid of SweepPeak: 8192 uniform points over [0, π] merged with 1024
// log-spaced points over [1e−6, 0.1] rad/sample for narrow low-frequency peaks.
var sweepGrid = func() []float64 {
	g := append(LinSpace(0, math.Pi, 8192), LogSpace(1e-6, 0.1, 1024)...)
	sort.Float64s(g)
	return g
}()

// SweepPeak finds the global maximizer ω ∈ (0, π) of |H(e^{jω})| numerically, without any closed
// form: a dense grid (see sweepGrid), then a refinement of the best grid point by bisection on the
// sign of the analytic slope d ln|H|/dω inside its neighbouring grid cell (golden-section search when
// the slope does not change sign there). ok is false when the grid maximum is at ω = 0 or ω = π, or
// when the refined interior value does not exceed both endpoint values.
func SweepPeak(sys ZTransfer) (omega float64, ok bool) {
	g := sweepGrid
	best, bestMag := 0, -1.0
	for i, w := range g {
		if m := Magnitude(sys, w); m > bestMag {
			best, bestMag = i, m
		}
	}
	if best == 0 || best == len(g)-1 {
		return 0, false
	}
	lo, hi := g[best-1], g[best+1]
	if logMagSlope(sys, lo) >= 0 && logMagSlope(sys, hi) <= 0 {
		for range 200 {
			mid := 0.5 * (lo + hi)
			if mid <= lo || mid >= hi {
				break
			}
			if logMagSlope(sys, mid) > 0 {
				lo = mid
			} else {
				hi = mid
			}
		}
		omega = 0.5 * (lo + hi)
	} else {
		omega = goldenMax(func(w float64) float64 { return Magnitude(sys, w) }, lo, hi)
	}
	m := Magnitude(sys, omega)
	if !(m > Magnitude(sys, 0) && m > Magnitude(sys, math.Pi)) {
		return 0, false
	}
	return omega, true
}

// goldenMax maximizes a unimodal f over [a, b] by golden-section search.
func goldenMax(f func(float64) float64, a, b float64) float64 {
	r := (math.Sqrt(5) - 1) / 2
	c, d := b-r*(b-a), a+r*(b-a)
	fc, fd := f(c), f(d)
	for range 200 {
		if b-a <= 1e-15*(1+math.Abs(a)) {
			break
		}
		if fc > fd {
			b, d, fd = d, c, fc
			c = b - r*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + r*(b-a)
			fd = f(d)
		}
	}
	return 0.5 * (a + b)
}
