package nb

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TargetMagnitude is figure 01_target_magnitude (Theorem 1): the continuous-time FS magnitude response
// |H(jΩ)| of Eq. 3 against f = Ω/(2π) in Hz, one curve per requested target f* (Hz), with κ set by the
// inverse map of Eq. 5. Each curve is shown in dB relative to its value at f*, so every curve must peak
// at 0 dB exactly at its marked f*. The response is the FS module alone in continuous time.
func TargetMagnitude(c theory.Constants, fstars []float64) (*Figure, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if len(fstars) == 0 {
		return nil, fmt.Errorf("no target frequency given")
	}
	fmax := 0.0
	for _, f := range fstars {
		if !(f > 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("target frequency %g Hz is not positive and finite", f)
		}
		fmax = max(fmax, f)
	}
	freqs := theory.LogSpace(min(0.1, fstars[0]/10), max(1000, 10*fmax), 600)
	p := newPlot(fmt.Sprintf("Theorem 1 · FS module alone, continuous time\n|H(jΩ)| for several targets f*  (τm = %g s, τa = %g s)", c.TauM, c.TauA),
		"f (Hz)", "|H(j2πf)| relative to |H(j2πf*)| (dB)")
	logX(p)
	lo := 0.0
	for i, fs := range fstars {
		kappa, err := c.KappaForTargetHz(fs)
		if err != nil {
			return nil, err
		}
		ct := c.CT(kappa)
		ref := ct.Magnitude(theory.RadPerSecFromHz(fs))
		ys := make([]float64, len(freqs))
		for j, f := range freqs {
			ys[j] = db(ct.Magnitude(theory.RadPerSecFromHz(f)) / ref)
			lo = min(lo, ys[j])
		}
		col := colorAt(i)
		if err := addCurve(p, freqs, ys, fmt.Sprintf("f* = %.3g Hz (κ* = %.4g 1/s²)", fs, kappa), col, solid, vg.Points(1.5)); err != nil {
			return nil, err
		}
		if err := addPoints(p, []float64{fs}, []float64{0}, "", col, draw.CircleGlyph{}, vg.Points(3.5)); err != nil {
			return nil, err
		}
	}
	p.Y.Min = math.Max(lo, -40)
	p.Y.Max = 3
	return single("01_target_magnitude", "Theorem 1: CT FS magnitude response for several targets f*; each peaks at its f* (marked).", p), nil
}

// TargetVsKappa is figure 01_target_vs_kappa (Theorem 1): the continuous-time target frequency
// f*_CT = Ω*(κ)/(2π) in Hz of Eq. 4 against κ in 1/s² (log–log), the threshold κ₀ below which no nonzero
// target exists, and the round trip of the inverse map (Eq. 5) at log-spaced targets between fmin and
// fmax Hz, which must land on the curve.
func TargetVsKappa(c theory.Constants, fmin, fmax float64, n int) (*Figure, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	targets, err := theory.LogSpacedHz(fmin, fmax, n)
	if err != nil {
		return nil, err
	}
	mu, rho := c.Mu(), c.Rho()
	k0 := theory.KappaThreshold(mu, rho)
	kmax, err := c.KappaForTargetHz(2 * fmax)
	if err != nil {
		return nil, err
	}
	kappas := theory.LogSpace(k0*1.0001, kmax, 500)
	fs := nans(len(kappas))
	for i, k := range kappas {
		if f, ok := c.TargetHz(k); ok && f > 0 {
			fs[i] = f
		}
	}
	p := newPlot(fmt.Sprintf("Theorem 1 · FS module alone, continuous time\ntarget frequency against κ  (τm = %g s, τa = %g s)", c.TauM, c.TauA),
		"κ = ηγ (1/s²)", "f*_CT (Hz)")
	logX(p)
	logY(p)
	if err := addCurve(p, kappas, fs, "f*(κ), Eq. 4", colorAt(0), solid, vg.Points(1.5)); err != nil {
		return nil, err
	}
	ks := make([]float64, len(targets))
	for i, f := range targets {
		if ks[i], err = c.KappaForTargetHz(f); err != nil {
			return nil, err
		}
	}
	if err := addPoints(p, ks, targets, "κ*(f*), inverse Eq. 5", colorAt(1), draw.CircleGlyph{}, vg.Points(3.5)); err != nil {
		return nil, err
	}
	p.Y.Min, p.Y.Max = fmin/10, 2*fmax
	if err := addVLine(p, k0, p.Y.Min, p.Y.Max, fmt.Sprintf("κ₀ = %.3g 1/s² (no nonzero target below)", k0), grey, dashed); err != nil {
		return nil, err
	}
	return single("01_target_vs_kappa", "Theorem 1: target frequency against κ (Eq. 4) and the inverse map (Eq. 5) at log-spaced targets.", p), nil
}
