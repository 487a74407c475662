package nb

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PaperPoleExample is the example of Appendix A.6: μ = 4, ρ = 1, κ = 2 (1/s, 1/s, 1/s²). Its poles are
// real (4(μρ+κ) = 24 < 25 = (μ+ρ)²) yet the response has a nonzero target Ω* ≈ 1.98 rad/s.
var PaperPoleExample = theory.CT{Mu: 4, Rho: 1, Kappa: 2}

// complexPoleBoundary returns the smallest κ in [lo, hi] (1/s²) at which the CT FS poles become complex
// (theory.CT.PoleFrequency starts to report ok), by bisection on that predicate; ok is false when the
// predicate does not change over [lo, hi].
func complexPoleBoundary(mu, rho, lo, hi float64) (float64, bool) {
	has := func(k float64) bool { _, ok := theory.CT{Mu: mu, Rho: rho, Kappa: k}.PoleFrequency(); return ok }
	if has(lo) || !has(hi) {
		return 0, false
	}
	for range 200 {
		mid := 0.5 * (lo + hi)
		if mid == lo || mid == hi {
			break
		}
		if has(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// poleVsTargetPanel plots Ω*(κ) (Eq. 4) and Ω_pole(κ) (Eq. app_pole_frequency, only where the poles
// are complex) against κ over [kmin, kmax] 1/s², scaled by scale (1 for rad/s, 1/(2π) for Hz).
func poleVsTargetPanel(title, unit string, mu, rho, kmin, kmax, scale float64, logAxes bool) (*plot.Plot, error) {
	var kappas []float64
	if logAxes {
		kappas = theory.LogSpace(kmin, kmax, 600)
	} else {
		kappas = theory.LinSpace(kmin, kmax, 600)
	}
	target, pole := nans(len(kappas)), nans(len(kappas))
	for i, k := range kappas {
		ct := theory.CT{Mu: mu, Rho: rho, Kappa: k}
		if w, ok := ct.Target(); ok {
			target[i] = w * scale
		}
		if w, ok := ct.PoleFrequency(); ok {
			pole[i] = w * scale
		}
	}
	p := newPlot(title, "κ (1/s²)", "frequency ("+unit+")")
	if logAxes {
		logX(p)
	}
	if err := firstErr(
		addCurve(p, kappas, target, "target Ω* (Eq. 4)", colorAt(0), solid, vg.Points(2)),
		addCurve(p, kappas, pole, "pole frequency Ω_pole (complex poles only)", colorAt(1), dashed, vg.Points(2)),
	); err != nil {
		return nil, err
	}
	lo, hi := 0.0, 0.0
	if logAxes {
		logY(p)
		lo, hi = minMax(target, pole)
		lo = math.Max(lo, hi/1e4)
	} else {
		_, hi = minMax(target, pole)
	}
	if kc, ok := complexPoleBoundary(mu, rho, kmin, kmax); ok {
		if err := addVLine(p, kc, lo, hi, fmt.Sprintf("complex-pole boundary κ = %.4g", kc), grey, dotted); err != nil {
			return nil, err
		}
	}
	if k0 := theory.KappaThreshold(mu, rho); k0 > kmin && k0 < kmax {
		if err := addVLine(p, k0, lo, hi, fmt.Sprintf("κ₀ = %.3g (target appears)", k0), grey, dashed); err != nil {
			return nil, err
		}
	}
	p.Y.Min = lo
	p.Legend.Left = true
	return p, nil
}

// PoleVsTarget is figure 04_pole_vs_target (Appendix A.6, FS module alone, continuous time). Left: the
// response-level target Ω* and the pole frequency Ω_pole against κ at the paper's example μ = 4, ρ = 1
// (rad/s), with the complex-pole boundary and the point κ = 2, where the poles are real but Ω* ≈ 1.98.
// Right: the same two frequencies in Hz at the constants c (log κ axis).
func PoleVsTarget(c theory.Constants) (*Figure, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ex := PaperPoleExample
	left, err := poleVsTargetPanel(fmt.Sprintf("Appendix A.6 · FS module alone, CT (μ = %g, ρ = %g)\ntarget frequency vs pole frequency", ex.Mu, ex.Rho),
		"rad/s", ex.Mu, ex.Rho, 0, 8, 1, false)
	if err != nil {
		return nil, err
	}
	w, ok := ex.Target()
	if !ok {
		return nil, fmt.Errorf("the paper's example has no target frequency")
	}
	if err := addPoints(left, []float64{ex.Kappa}, []float64{w}, fmt.Sprintf("κ = %g: Ω* = %.4f, real poles", ex.Kappa, w), black, draw.CircleGlyph{}, vg.Points(4)); err != nil {
		return nil, err
	}
	mu, rho := c.Mu(), c.Rho()
	kmax, err := c.KappaForTargetHz(100)
	if err != nil {
		return nil, err
	}
	right, err := poleVsTargetPanel(fmt.Sprintf("Appendix A.6 · FS module alone, CT (τm = %g s, τa = %g s)\ntarget frequency vs pole frequency", c.TauM, c.TauA),
		"Hz", mu, rho, theory.KappaThreshold(mu, rho)/2, kmax, 1/(2*math.Pi), true)
	if err != nil {
		return nil, err
	}
	return sideBySide("04_pole_vs_target",
		"Appendix A.6: the response-level target frequency is not the pole frequency; at μ=4, ρ=1, κ=2 the poles are real but Ω* ≈ 1.98 rad/s.",
		left, right, 4.5*vg.Inch), nil
}
