package nb

import (
	"fmt"
	"image/color"
	"math"

	"github.com/fits-snn/fits/fits/theory"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// omegaGrid returns n angular frequencies in rad/sample spread over (0, π], avoiding ω = 0 exactly.
func omegaGrid(n int) []float64 { return theory.LinSpace(math.Pi/float64(n), math.Pi, n) }

// AllPassDelay is figure 03_allpass_delay (Eq. 8, TS module alone): the group delay τ_A(ω) in samples
// of one first-order all-pass stage against ω in rad/sample, one curve per β (|β| < 1). All curves are
// positive: a pure cascade can only add delay (Section 3.2.1).
func AllPassDelay(betas []float64) (*Figure, error) {
	if len(betas) == 0 {
		return nil, fmt.Errorf("no β given")
	}
	ws := omegaGrid(400)
	p := newPlot("Eq. 8 · TS module alone, one all-pass stage\ngroup delay τ_A(ω) for several β", "ω (rad/sample)", "τ_A (samples)")
	logY(p)
	for i, b := range betas {
		if !(math.Abs(b) < 1) {
			return nil, fmt.Errorf("β = %g: need |β| < 1", b)
		}
		ys := make([]float64, len(ws))
		for j, w := range ws {
			ys[j] = theory.AllPassGroupDelay(b, w)
		}
		if err := addCurve(p, ws, ys, fmt.Sprintf("β = %g", b), colorAt(i), solid, vg.Points(1.5)); err != nil {
			return nil, err
		}
	}
	p.X.Min, p.X.Max = 0, math.Pi
	return single("03_allpass_delay", "Eq. 8: group delay of one all-pass stage (TS alone) for several β; always positive.", p), nil
}

// MixingDelay is figure 03_mixing_delay (Proposition 1, TS module alone, M = 1): the group delay τ_G1(ω)
// in samples of the λ-mixed single stage G1 = (1 − λ) + λA_1 (Eq. app_ts_single_stage_delay) against
// ω in rad/sample at one β, one curve per λ ∈ [0, 1]. For λ < 1/2 it turns negative at high ω, which a
// pure all-pass (λ = 1, dashed) never does. The y axis is clipped to ±clip samples (the delay spikes
// where the mixture nearly cancels).
func MixingDelay(beta float64, lambdas []float64, clip float64) (*Figure, error) {
	if !(math.Abs(beta) < 1) {
		return nil, fmt.Errorf("β = %g: need |β| < 1", beta)
	}
	if len(lambdas) == 0 {
		return nil, fmt.Errorf("no λ given")
	}
	if !(clip > 0) {
		return nil, fmt.Errorf("clip %g must be positive", clip)
	}
	ws := omegaGrid(800)
	lo, hi := 0.0, 0.0
	p := newPlot(fmt.Sprintf("Proposition 1 · TS module alone, one λ-mixed stage (β = %g)\ngroup delay τ_G1(ω) for several λ", beta),
		"ω (rad/sample)", "τ_G1 (samples)")
	for i, l := range lambdas {
		if !(l >= 0 && l <= 1) {
			return nil, fmt.Errorf("λ = %g: need 0 ≤ λ ≤ 1", l)
		}
		ys := make([]float64, len(ws))
		for j, w := range ws {
			ys[j] = theory.MixedStageGroupDelay(beta, l, w)
			lo, hi = math.Min(lo, ys[j]), math.Max(hi, ys[j])
		}
		if err := addCurve(p, ws, ys, fmt.Sprintf("λ = %g", l), colorAt(i), solid, vg.Points(1.5)); err != nil {
			return nil, err
		}
	}
	ap := make([]float64, len(ws))
	for j, w := range ws {
		ap[j] = theory.AllPassGroupDelay(beta, w)
	}
	if err := firstErr(
		addCurve(p, ws, ap, "pure all-pass τ_A", black, dashed, vg.Points(1)),
		addHLine(p, 0, 0, math.Pi, "", grey, dotted),
	); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max = 0, math.Pi
	lo, hi = math.Max(lo, -clip), math.Min(hi, clip)
	p.Y.Min, p.Y.Max = lo-0.6*(hi-lo), hi+0.1*(hi-lo)
	p.Legend.Left = true
	p.Legend.Top = false
	return single("03_mixing_delay", "Proposition 1: group delay of one λ-mixed all-pass stage (TS alone); negative at high ω when λ < 1/2.", p), nil
}

// indicatorGrid is a plotter.GridXYZ of 0/1 values over x (columns) and y (rows).
type indicatorGrid struct {
	xs, ys []float64
	z      [][]float64 // z[row][col]
}

func (g indicatorGrid) Dims() (c, r int)   { return len(g.xs), len(g.ys) }
func (g indicatorGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g indicatorGrid) X(c int) float64    { return g.xs[c] }
func (g indicatorGrid) Y(r int) float64    { return g.ys[r] }

// twoColors is a two-entry palette: false, true.
type twoColors [2]color.Color

func (t twoColors) Colors() []color.Color { return t[:] }

// NegativeDelayRegion is figure 03_negative_delay_region (Proposition 1, exact condition Eq.
// app_ts_neg_delay_condition, TS module alone, M = 1): the set of (λ, ω) where the λ-mixed single stage
// has negative group delay, one panel per β. The shaded cells are where theory.NegativeDelay holds;
// crosses mark grid points where the delay formula itself (Eq. app_ts_single_stage_delay) is negative,
// so the two must coincide. The region never reaches λ ≥ 1/2 (dotted line).
func NegativeDelayRegion(betas []float64) (*Figure, error) {
	if len(betas) == 0 {
		return nil, fmt.Errorf("no β given")
	}
	const nl, nw = 120, 120
	lambdas := theory.LinSpace(0.5/nl, 1-0.5/nl, nl)
	ws := theory.LinSpace(math.Pi/(2*nw), math.Pi-math.Pi/(2*nw), nw)
	row := make([]*plot.Plot, 0, len(betas))
	for _, b := range betas {
		if !(math.Abs(b) < 1) {
			return nil, fmt.Errorf("β = %g: need |β| < 1", b)
		}
		g := indicatorGrid{xs: lambdas, ys: ws, z: make([][]float64, nw)}
		var cx, cy []float64
		for r, w := range ws {
			g.z[r] = make([]float64, nl)
			for c, l := range lambdas {
				if theory.NegativeDelay(b, l, w) {
					g.z[r][c] = 1
				}
				if r%8 == 4 && c%8 == 4 && theory.MixedStageGroupDelay(b, l, w) < 0 {
					cx, cy = append(cx, l), append(cy, w)
				}
			}
		}
		p := newPlot(fmt.Sprintf("Proposition 1 · TS module alone, one stage (β = %g)\nnegative group delay region in (λ, ω)", b), "λ", "ω (rad/sample)")
		hm := plotter.NewHeatMap(g, twoColors{color.RGBA{0xf4, 0xf4, 0xf4, 0xff}, color.RGBA{0x9e, 0xc9, 0xe8, 0xff}})
		hm.Min, hm.Max = 0, 1
		hm.Rasterized = true // one image instead of 14,400 SVG rectangles
		p.Add(hm)
		if err := addVLine(p, 0.5, 0, math.Pi, "λ = 1/2", grey, dotted); err != nil {
			return nil, err
		}
		if len(cx) > 0 {
			if err := addPoints(p, cx, cy, "τ_G1 < 0 by the delay formula", colorAt(1), draw.CrossGlyph{}, vg.Points(2.5)); err != nil {
				return nil, err
			}
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, math.Pi
		p.Legend.Top = false
		row = append(row, p)
	}
	return &Figure{
		Name:    "03_negative_delay_region",
		Caption: "Proposition 1: where a single λ-mixed stage (TS alone) has negative group delay (shaded: the exact condition; crosses: the delay formula).",
		Panels:  [][]*plot.Plot{row},
		Width:   vg.Length(len(row)) * 5.5 * vg.Inch,
		Height:  5 * vg.Inch,
	}, nil
}

// TSvsClosedLoop is figure 03_ts_vs_closed_loop: the magnitude (dB) and group delay (samples) against
// f in Hz (log axis, up to Nyquist) of four discrete-time responses at the CT target fstar Hz (κ from
// Eq. 5): the FS module alone H_d(z), the TS module alone G_M(z), the open cascade G_M·H_d, and the
// closed-loop neuron H(z) = G(z)(z − ρ̄)/((z − μ̄G(z))(z − ρ̄) + κ̄z) that Algorithm 1 realizes because
// its carried state is the mixed voltage (theory.ClosedLoop).
func TSvsClosedLoop(c theory.Constants, fstar float64, ts theory.TS) (*Figure, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := ts.Validate(); err != nil {
		return nil, err
	}
	kappa, err := c.KappaForTargetHz(fstar)
	if err != nil {
		return nil, err
	}
	fs := c.FS(kappa)
	cl := theory.ClosedLoop{FS: fs, TS: ts}
	nyq := c.NyquistHz()
	freqs := theory.LogSpace(nyq/500, nyq*0.999, 500)
	ws := make([]float64, len(freqs))
	for i, f := range freqs {
		ws[i] = c.RadPerSampleFromHz(f)
	}
	type curve struct {
		label    string
		mag, gd  func(w float64) float64
		col      color.Color
		style    lineStyle
		linWidth vg.Length
	}
	curves := []curve{
		{"FS alone H_d", fs.Magnitude, fs.GroupDelay, colorAt(0), solid, vg.Points(1.5)},
		{"TS alone G_M", ts.Magnitude, ts.GroupDelay, colorAt(2), solid, vg.Points(1.5)},
		{"open cascade G_M·H_d",
			func(w float64) float64 { return ts.Magnitude(w) * fs.Magnitude(w) },
			func(w float64) float64 { return ts.GroupDelay(w) + fs.GroupDelay(w) },
			grey, dashed, vg.Points(1.2)},
		{"closed-loop neuron H (Algorithm 1)", cl.Magnitude, cl.GroupDelay, colorAt(1), solid, vg.Points(2)},
	}
	desc := fmt.Sprintf("f*_CT = %g Hz, M = %d, β = %v, λ = %v", fstar, ts.M(), ts.Beta, ts.Lambda)
	mag := newPlot("TS alone vs closed-loop neuron · magnitude\n"+desc, "f (Hz)", "magnitude |H(e^jω)| (dB)")
	gd := newPlot("TS alone vs closed-loop neuron · group delay\n"+desc, "f (Hz)", "group delay (samples)")
	logX(mag)
	logX(gd)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, cv := range curves {
		ym := make([]float64, len(ws))
		yg := make([]float64, len(ws))
		for i, w := range ws {
			ym[i] = db(cv.mag(w))
			yg[i] = cv.gd(w)
		}
		l, h := minMax(ym)
		lo, hi = math.Min(lo, l), math.Max(hi, h)
		if err := firstErr(
			addCurve(mag, freqs, ym, cv.label, cv.col, cv.style, cv.linWidth),
			addCurve(gd, freqs, yg, cv.label, cv.col, cv.style, cv.linWidth),
		); err != nil {
			return nil, err
		}
	}
	if err := addVLine(mag, fstar, -40, 40, "", grey, dotted); err != nil {
		return nil, err
	}
	mag.Y.Min, mag.Y.Max = math.Max(lo, hi-60), hi+0.35*(hi-math.Max(lo, hi-60))
	mag.Legend.Left = true
	gd.Legend.Top = false
	return sideBySide("03_ts_vs_closed_loop",
		"TS alone, FS alone, their open cascade and the closed-loop neuron of Algorithm 1 (magnitude and group delay); the closed loop is not G·H_d.",
		mag, gd, 4.5*vg.Inch), nil
}
