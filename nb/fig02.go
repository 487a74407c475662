package nb

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// JuryBounds is figure 02_jury_bounds (Appendix A.2): the spectral radius of the zero-input
// state-update matrix of the explicit and the semi-implicit Euler discretizations (η = γ = √κ) against
// the continuous-time target f*_CT in Hz (κ from Eq. 5), up to fmax Hz. Each crosses 1, where the
// discretization turns unstable, at the target-frequency limit implied by its Jury bound
// (Eq. app_kappa_bounds), marked by a vertical line. The dynamics are the FS module alone.
func JuryBounds(c theory.Constants, fmax float64) (*Figure, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !(fmax > 0) || math.IsInf(fmax, 0) {
		return nil, fmt.Errorf("fmax %g Hz is not positive and finite", fmax)
	}
	j := c.Jury()
	fs := theory.LinSpace(fmax/400, fmax, 400)
	rExp := make([]float64, len(fs))
	rSemi := make([]float64, len(fs))
	for i, f := range fs {
		kappa, err := c.KappaForTargetHz(f)
		if err != nil {
			return nil, err
		}
		eta, gamma := theory.EqualGains(kappa)
		rExp[i] = c.ExplicitMatrix(eta, gamma).SpectralRadius()
		rSemi[i] = c.SemiImplicitMatrix(eta, gamma).SpectralRadius()
	}
	p := newPlot(fmt.Sprintf("Appendix A.2 · FS module alone, zero input, discrete time\nstability against the target  (τm = %g s, τa = %g s, Δt = %g s)", c.TauM, c.TauA, c.Dt),
		"target f*_CT (Hz)", "spectral radius of the update matrix")
	if err := firstErr(
		addCurve(p, fs, rExp, "explicit Euler", colorAt(1), solid, vg.Points(1.5)),
		addCurve(p, fs, rSemi, "semi-implicit Euler (Eq. 6)", colorAt(0), solid, vg.Points(1.5)),
		addHLine(p, 1, 0, fmax, "", black, dotted),
	); err != nil {
		return nil, err
	}
	ylo, yhi := minMax(rExp, rSemi)
	ylo, yhi = math.Min(ylo, 0.9), math.Max(yhi, 1.05)
	if j.FStarMaxExplicitHz > 0 && j.FStarMaxExplicitHz < fmax {
		if err := addVLine(p, j.FStarMaxExplicitHz, ylo, yhi, fmt.Sprintf("explicit limit %.1f Hz", j.FStarMaxExplicitHz), colorAt(1), dashed); err != nil {
			return nil, err
		}
	}
	if j.FStarMaxSemiImplicitHz > 0 && j.FStarMaxSemiImplicitHz < fmax {
		if err := addVLine(p, j.FStarMaxSemiImplicitHz, ylo, yhi, fmt.Sprintf("semi-implicit limit %.1f Hz", j.FStarMaxSemiImplicitHz), colorAt(0), dashed); err != nil {
			return nil, err
		}
	}
	p.Legend.Left = true
	p.Y.Min, p.Y.Max = ylo, yhi
	return single("02_jury_bounds", "Appendix A.2: spectral radius of the explicit and semi-implicit FS updates; the Jury bounds are where each crosses 1.", p), nil
}

// PhasePlane is figure 02_phase_plane (Appendix A.2, zero-input trajectories): the state (V, a) of
// the FS module with no input, from (v0, a0), under the explicit and the semi-implicit Euler updates
// at the target fstar Hz (κ from Eq. 5, η = γ = √κ), with the unit circle for reference. fstar must
// lie between the two Jury limits, so that the explicit trajectory spirals out across the circle while
// the semi-implicit one converges. Both run for the same number of steps: until the explicit state
// norm first exceeds 1.5 (at most maxSteps).
func PhasePlane(c theory.Constants, fstar, v0, a0 float64, maxSteps int) (*Figure, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	j := c.Jury()
	if !(fstar > j.FStarMaxExplicitHz && fstar < j.FStarMaxSemiImplicitHz) {
		return nil, fmt.Errorf("f* = %g Hz is not between the explicit (%.1f Hz) and semi-implicit (%.1f Hz) limits",
			fstar, j.FStarMaxExplicitHz, j.FStarMaxSemiImplicitHz)
	}
	if maxSteps < 2 {
		return nil, fmt.Errorf("maxSteps %d < 2", maxSteps)
	}
	if math.Hypot(v0, a0) == 0 || !isFinite(v0) || !isFinite(a0) {
		return nil, fmt.Errorf("initial state (%g, %g) must be finite and nonzero", v0, a0)
	}
	kappa, err := c.KappaForTargetHz(fstar)
	if err != nil {
		return nil, err
	}
	eta, gamma := theory.EqualGains(kappa)
	ve, ae := c.ExplicitMatrix(eta, gamma).Trajectory(v0, a0, maxSteps)
	steps := maxSteps
	for k := range ve {
		if math.Hypot(ve[k], ae[k]) > 1.5 {
			steps = k
			break
		}
	}
	ve, ae = ve[:steps+1], ae[:steps+1]
	vs, as := c.SemiImplicitMatrix(eta, gamma).Trajectory(v0, a0, steps)
	p := newPlot(fmt.Sprintf("Appendix A.2 · FS module alone, zero input\nphase plane at f* = %g Hz (κ = %.4g 1/s², %d steps)", fstar, kappa, steps),
		"V", "a")
	cx, cy := unitCircle(361)
	if err := firstErr(
		addCurve(p, cx, cy, "unit circle", grey, dashed, vg.Points(1)),
		addCurve(p, ve, ae, "explicit Euler (diverges)", colorAt(1), solid, vg.Points(1)),
		addCurve(p, vs, as, "semi-implicit Euler (converges)", colorAt(0), solid, vg.Points(1.5)),
		addPoints(p, []float64{v0}, []float64{a0}, "start", black, draw.CircleGlyph{}, vg.Points(3)),
	); err != nil {
		return nil, err
	}
	lim := 1.6
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -lim, lim, -lim, lim
	p.Legend.Top = true
	fig := single("02_phase_plane", "Appendix A.2: zero-input (V, a) trajectories between the two Jury limits: explicit Euler spirals out across the unit circle, semi-implicit converges.", p)
	fig.Width, fig.Height = 6*vg.Inch, 6*vg.Inch
	return fig, nil
}

// CTvsDTTarget is figure 02_ct_vs_dt_target (Theorem 2, Appendix A.3). Left: the realized
// discrete-time target f*_DT (Hz) of the semi-implicit FS module against the continuous-time target
// f*_CT it was parameterized with (κ from Eq. 5), in closed form (Theorem 2) and by a dense numerical
// sweep of |H_d|, with the identity line; points of the DT-exact inverse (κ chosen so that f*_DT equals
// the target) must sit on the identity. Right: the ratio of the DT-exact κ to the CT κ* of Eq. 5.
// Targets run over (0, fmax] Hz with n points; fmax must be below the semi-implicit limit.
func CTvsDTTarget(c theory.Constants, fmax float64, n int) (*Figure, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if n < 2 {
		return nil, fmt.Errorf("n = %d < 2", n)
	}
	if !(fmax > 0) || math.IsInf(fmax, 0) {
		return nil, fmt.Errorf("fmax %g Hz is not positive and finite", fmax)
	}
	fs := theory.LinSpace(fmax/float64(n), fmax, n)
	closed, sweep, exactF, ratio := nans(n), nans(n), nans(n), nans(n)
	for i, f := range fs {
		kappa, err := c.KappaForTargetHz(f)
		if err != nil {
			return nil, err
		}
		if v, ok := c.DTTargetHz(kappa); ok {
			closed[i] = v
		}
		if v, ok := c.DTSweepTargetHz(kappa); ok {
			sweep[i] = v
		}
		kx, err := c.KappaDTExact(f)
		if err != nil {
			continue
		}
		ratio[i] = kx / kappa
		if v, ok := c.DTTargetHz(kx); ok {
			exactF[i] = v
		}
	}
	left := newPlot(fmt.Sprintf("Theorem 2 · FS module alone, discrete time\nrealized target against the CT target  (Δt = %g s)", c.Dt),
		"CT target f*_CT (Hz)", "realized DT target f*_DT (Hz)")
	every := max(1, n/20)
	var sx, sy, ex, ey []float64
	for i := 0; i < n; i += every {
		sx, sy = append(sx, fs[i]), append(sy, sweep[i])
		ex, ey = append(ex, fs[i]), append(ey, exactF[i])
	}
	if err := firstErr(
		addCurve(left, []float64{0, fmax}, []float64{0, fmax}, "identity f*_DT = f*_CT", grey, dashed, vg.Points(1)),
		addCurve(left, fs, closed, "Theorem 2 closed form (κ from Eq. 5)", colorAt(0), solid, vg.Points(1.5)),
		addPoints(left, sx, sy, "dense sweep of |H_d|", colorAt(1), draw.CrossGlyph{}, vg.Points(3.5)),
		addPoints(left, ex, ey, "DT-exact inverse", colorAt(2), draw.CircleGlyph{}, vg.Points(2.5)),
	); err != nil {
		return nil, err
	}
	left.Legend.Top = true
	left.Legend.Left = true
	right := newPlot("DT-exact inverse\nits κ relative to κ* of Eq. 5", "target f* (Hz)", "κ_DT-exact / κ*_CT")
	if err := firstErr(
		addCurve(right, fs, ratio, "", colorAt(2), solid, vg.Points(1.5)),
		addHLine(right, 1, 0, fmax, "", grey, dotted),
	); err != nil {
		return nil, err
	}
	return sideBySide("02_ct_vs_dt_target",
		"Theorem 2: the realized DT target of the semi-implicit FS module against the CT target (closed form and sweep), and the DT-exact inverse.",
		left, right, 4.5*vg.Inch), nil
}

// unitCircle returns n points of the unit circle, the first and the last at (1, 0).
func unitCircle(n int) (x, y []float64) {
	for _, t := range theory.LinSpace(0, 2*math.Pi, n) {
		x, y = append(x, math.Cos(t)), append(y, math.Sin(t))
	}
	return x, y
}

// minMax returns the smallest and largest finite values over all slices.
func minMax(xss ...[]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, xs := range xss {
		for _, x := range xs {
			if isFinite(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	return lo, hi
}
