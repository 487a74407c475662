package nb

import (
	"fmt"
	"math"
	"slices"

	"github.com/fits-snn/fits/fits/theory"
)

// Colours shared by the panels (Okabe–Ito, as the static figures).
const (
	cBlue, cOrange, cGreen, cPink, cSky, cGrey, cBlack, cYellow = "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#999999", "#222222", "#E69F00"
)

func unitLabels(v []float64, unit string) []string {
	var out []string
	for _, x := range v {
		out = append(out, fmt.Sprintf("%g%s", x, unit))
	}
	return out
}

// indexOf returns the index of v in vs (exact match), or 0.
func indexOf(vs []float64, v float64) int { return max(slices.Index(vs, v), 0) }

// nestingControl toggles the nesting of Eq. 10's stages: the released code's or the paper's (theory.Nesting).
var nestingControl = PanelControl{Name: "nesting", Label: "Eq. 10 nesting", Values: []float64{0, 1},
	Labels: []string{"off: released code (innermost first)", "on: paper (outermost first)"}, Toggle: true}

// Frequencies of the zero-input trajectories and the f* axis of the discretization panel.
const (
	discSteps = 40 // zero-input steps in the phase plane
	discFMax  = 130
)

// DiscretizationPanelConfig is the grid of notebook 02's panel.
type DiscretizationPanelConfig struct {
	Dt, TauM, TauA []float64 // seconds
	FStar          []float64 // requested targets, Hz
}

// DefaultDiscretizationPanelConfig is the grid of notebook 02: Δt ∈ {1, 2, 4, 8} ms, τm ∈ {10, 20, 40,
// 100} ms, τa ∈ {100, 200, 500} ms and eight targets from 5 to 90 Hz, starting at the SSC constants
// (Δt = 4 ms, τm = 40 ms, τa = 200 ms) and f* = 10 Hz, where both updates are stable (notebook 02's
// "what to look for" then moves f* past the explicit limit, 13.8 Hz).
func DefaultDiscretizationPanelConfig() DiscretizationPanelConfig {
	return DiscretizationPanelConfig{
		Dt:    []float64{0.001, 0.002, 0.004, 0.008},
		TauM:  []float64{0.01, 0.02, 0.04, 0.1},
		TauA:  []float64{0.1, 0.2, 0.5},
		FStar: []float64{5, 10, 14, 20, 40, 60, 77, 90},
	}
}

// DiscretizationPanel is notebook 02's panel (Appendix A.2, Theorem 2). Controls dt, taum, taua, fstar
// and the toggle exact (κ from Eq. 5, or the DT-exact inverse). Plots:
//
//   - stab: the spectral radius of the explicit and semi-implicit zero-input updates (η = γ = √κ) against
//     κΔt², their stable ranges shaded (the Jury bounds), the current κΔt² marked;
//   - phase: the zero-input trajectories (V, a) of both updates from (1, 0), 40 steps, and the unit circle;
//   - target: the realized DT target f*_DT (Theorem 2) against the requested f*, the identity, the Jury
//     limits of f*, and the current point;
//   - mag: |H_d| of the semi-implicit module, dB re its maximum, with f* and f*_DT marked.
func DiscretizationPanel(cfg DiscretizationPanelConfig) (*GridPanel, error) {
	kbGrid := theory.LogSpace(1e-4, 10, 120)
	fGrid := theory.LinSpace(0.5, discFMax, 120)
	magGrid := theory.LogSpace(0.5, discFMax, 90)
	cx, cy := unitCircle(73)
	frame := func(at []int) (PanelFrame, error) {
		c := theory.Constants{Dt: cfg.Dt[at[0]], TauM: cfg.TauM[at[1]], TauA: cfg.TauA[at[2]]}
		fs, exact := cfg.FStar[at[3]], at[4] == 1
		if err := c.Validate(); err != nil {
			return PanelFrame{}, err
		}
		kappa, exactErr := DiscretizationKappa(c, fs, exact)
		j := c.Jury()
		// stab
		re, rs := make([]float64, len(kbGrid)), make([]float64, len(kbGrid))
		for i, kb := range kbGrid {
			eta, gamma := theory.EqualGains(c.KappaFromBar(kb))
			re[i] = c.ExplicitMatrix(eta, gamma).SpectralRadius()
			rs[i] = c.SemiImplicitMatrix(eta, gamma).SpectralRadius()
		}
		kbE, kbS := c.KappaBar(j.KappaMaxExplicit), c.KappaBar(j.KappaMaxSemiImplicit)
		var mark, pts, ptsY []float64
		var ve, ae, vs, as []float64
		magX, magY := magGrid, nans(len(magGrid))
		fdt, hasDT := math.NaN(), false
		stableE, stableS := false, false
		if exactErr == nil {
			kb := c.KappaBar(kappa)
			eta, gamma := theory.EqualGains(kappa)
			me, ms := c.ExplicitMatrix(eta, gamma), c.SemiImplicitMatrix(eta, gamma)
			stableE, stableS = me.JuryStable(), ms.JuryStable()
			mark = []float64{kb}
			pts, ptsY = []float64{kb, kb}, []float64{me.SpectralRadius(), ms.SpectralRadius()}
			ve, ae = me.Trajectory(1, 0, discSteps)
			vs, as = ms.Trajectory(1, 0, discSteps)
			fdt, hasDT = c.DTTargetHz(kappa)
			// Refined around f*_DT, so that the drawn peak is Theorem 2's.
			if hasDT {
				magX = RefineGrid(magGrid, fdt)
			}
			magY = dtMagnitudeDB(c, c.FS(kappa), magX, fdt, hasDT)
		}
		// target: the realized target over requested targets, in the current mode.
		realized := nans(len(fGrid))
		for i, f := range fGrid {
			if k, err := DiscretizationKappa(c, f, exact); err == nil && c.FS(k).Stable() {
				if v, ok := c.DTTargetHz(k); ok {
					realized[i] = v
				}
			}
		}
		var cur, curY, fdtMark []float64
		if hasDT {
			cur, curY, fdtMark = []float64{fs}, []float64{fdt}, []float64{fdt}
		}
		limits := []float64{j.FStarMaxExplicitHz, j.FStarMaxSemiImplicitHz}
		mode := "κ from the CT inverse (Eq. 5)"
		if exact {
			mode = "κ from the DT-exact inverse (Theorem 2 solved for κ̄)"
		}
		var readout string
		if exactErr != nil {
			readout = fmt.Sprintf("%s: none for f* = %g Hz at Δt = %g ms (%v)", mode, fs, 1000*c.Dt, exactErr)
		} else {
			dtText := "none (no interior maximum)"
			if hasDT {
				dtText = fmt.Sprintf("%.2f Hz, gap f*_DT − f* = %+.2f Hz", fdt, fdt-fs)
			}
			readout = fmt.Sprintf("%s: κ = %.5g 1/s², κΔt² = %.4g  ·  Jury bounds on κΔt²: explicit %.4g (f* ≤ %.1f Hz), semi-implicit %.4g (f* ≤ %.1f Hz)  ·  explicit %s, semi-implicit %s  ·  f*_DT (Theorem 2) = %s",
				mode, kappa, c.KappaBar(kappa), kbE, j.FStarMaxExplicitHz, kbS, j.FStarMaxSemiImplicitHz,
				stableWord(stableE), stableWord(stableS), dtText)
		}
		return PanelFrame{Readout: readout, Series: [][]PanelData{
			{{X: []float64{1e-4, kbE}}, {X: []float64{1e-4, kbS}}, {Y: []float64{1}}, {Y: re}, {Y: rs}, {X: mark}, {X: pts, Y: ptsY}},
			{{X: cx, Y: cy}, {X: ve, Y: ae, Alt: !stableE}, {X: vs, Y: as, Alt: !stableS}, {X: []float64{1}, Y: []float64{0}}},
			{{X: limits}, {X: fGrid, Y: fGrid}, {Y: realized}, {X: cur, Y: curY}},
			{{X: []float64{fs}}, {X: fdtMark}, {X: magX, Y: magY, Alt: !stableS}},
		}}, nil
	}
	return NewGridPanel(GridPanelSpec{
		Controls: []PanelControl{
			{Name: "dt", Label: "Δt", Values: cfg.Dt, Labels: scaledLabels(cfg.Dt, 1000, "ms"), Initial: indexOf(cfg.Dt, 0.004)},
			{Name: "taum", Label: "τm", Values: cfg.TauM, Labels: scaledLabels(cfg.TauM, 1000, "ms"), Initial: indexOf(cfg.TauM, 0.04)},
			{Name: "taua", Label: "τa", Values: cfg.TauA, Labels: scaledLabels(cfg.TauA, 1000, "ms"), Initial: indexOf(cfg.TauA, 0.2)},
			{Name: "fstar", Label: "f*", Values: cfg.FStar, Labels: unitLabels(cfg.FStar, " Hz"), Initial: indexOf(cfg.FStar, 10)},
			{Name: "exact", Label: "exact DT", Values: []float64{0, 1}, Labels: []string{"off: κ by Eq. 5", "on: DT-exact κ"}, Toggle: true},
		},
		Plots: []PanelPlot{
			{Name: "stab", Title: "Appendix A.2: stability regions (Jury) vs κΔt²",
				X: PanelAxis{Label: "κΔt²", Min: 1e-4, Max: 10, Log: true}, Y: PanelAxis{Label: "spectral radius", Min: 0.4, Max: 1.6},
				Grid: kbGrid, Series: []PanelSeries{
					{Name: "bandE", Kind: SeriesBands, Color: cOrange, Opacity: 0.15, Legend: "explicit stable"},
					{Name: "bandS", Kind: SeriesBands, Color: cBlue, Opacity: 0.12, Legend: "semi-implicit stable"},
					{Name: "one", Kind: SeriesHLines, Color: cBlack, Dash: "3 3"},
					{Name: "explicit", Color: cOrange, Legend: "explicit"},
					{Name: "semi", Color: cBlue, Legend: "semi-implicit (Eq. 6)"},
					{Name: "kb", Kind: SeriesVLines, Color: cBlack, Legend: "current κΔt²"},
					{Name: "kbpts", Kind: SeriesPoints, Color: cBlack},
				}},
			{Name: "phase", Title: "Appendix A.2: zero-input trajectories from (V, a) = (1, 0)",
				X: PanelAxis{Label: "V", Min: -1.6, Max: 1.6}, Y: PanelAxis{Label: "a", Min: -1.6, Max: 1.6}, Width: 300, Height: 280,
				Series: []PanelSeries{
					{Name: "circle", Color: cGrey, Dash: "4 3", Width: 1},
					{Name: "explicit", Color: cOrange, Width: 1.5, AltDash: "5 2", Legend: "explicit"},
					{Name: "semi", Color: cBlue, Width: 1.5, AltDash: "5 2", Legend: "semi-implicit"},
					{Name: "start", Kind: SeriesPoints, Color: cBlack},
				}},
			{Name: "target", Title: "Theorem 2: realized f*_DT vs requested f*",
				X: PanelAxis{Label: "requested f* (Hz)", Min: 0, Max: discFMax}, Y: PanelAxis{Label: "f*_DT (Hz)", Min: 0, Max: discFMax},
				Grid: fGrid, Series: []PanelSeries{
					{Name: "limits", Kind: SeriesVLines, Color: cGrey, Dash: "2 3", Legend: "Jury limits of f* (explicit, semi-implicit)"},
					{Name: "identity", Color: cGrey, Width: 1, Legend: "f*_DT = f*"},
					{Name: "realized", Color: cOrange, Legend: "realized f*_DT"},
					{Name: "current", Kind: SeriesPoints, Color: cBlack},
				}},
			{Name: "mag", Title: "Theorem 2: |H_d| of the semi-implicit FS module",
				X: PanelAxis{Label: "f (Hz)", Min: 0.5, Max: discFMax, Log: true}, Y: PanelAxis{Label: "dB re max", Min: -40, Max: 3, Ticks: dbTicks(-40, 0)},
				Grid: magGrid, Series: []PanelSeries{
					{Name: "fstar", Kind: SeriesVLines, Color: cBlue, Dash: "4 3", Legend: "f*"},
					{Name: "fdt", Kind: SeriesVLines, Color: cOrange, Dash: "2 3", Legend: "f*_DT"},
					{Name: "hd", Color: cOrange, AltDash: "6 4", Legend: "|H_d| (dashed: unstable)"},
				}},
		},
		Frame: frame,
	})
}

func stableWord(ok bool) string {
	if ok {
		return "stable"
	}
	return "UNSTABLE"
}

// DiscretizationKappa is κ of the discretization panel for requested target fs: Eq. 5's CT inverse, or
// with exact the DT-exact inverse (theory.Constants.KappaDTExact).
func DiscretizationKappa(c theory.Constants, fs float64, exact bool) (float64, error) {
	if exact {
		return c.KappaDTExact(fs)
	}
	return c.KappaForTargetHz(fs)
}

// TSPanelConfig is the grid of notebook 03's panel.
type TSPanelConfig struct {
	Constants theory.Constants
	FStar     float64   // Hz, fixed
	Beta      []float64 // per-stage slider values of β_m
	Lambda    []float64 // per-stage slider values of λ_m
	StepT     int       // steps of the step response
}

// DefaultTSPanelConfig: SSC constants, f* = 20 Hz, β ∈ {−0.5, 0, 0.5}, λ ∈ {0.1, 0.3, 0.5, 0.9} per stage,
// a 0.4 s step response.
func DefaultTSPanelConfig() TSPanelConfig {
	return TSPanelConfig{Constants: theory.SSC, FStar: 20, Beta: []float64{-0.5, 0, 0.5}, Lambda: []float64{0.1, 0.3, 0.5, 0.9}, StepT: 100}
}

// TSPanelModule returns the TS module of the panel's grid position: M stages (0, 1, 2) with the given
// β, λ per stage and the nesting.
func TSPanelModule(m int, beta, lambda [2]float64, nesting theory.Nesting) theory.TS {
	return theory.TS{Beta: beta[:m:m], Lambda: lambda[:m:m], Nesting: nesting}
}

// NegativeDelayBands returns the frequency intervals (pairs, Hz) on a 600-point grid up to Nyquist where
// the TS module's group delay is negative. For one stage the condition is Proposition 1's exact one
// (theory.NegativeDelay); for more stages the sign of the computed delay.
func NegativeDelayBands(c theory.Constants, ts theory.TS) []float64 {
	var out []float64
	grid := theory.LinSpace(0, c.NyquistHz(), 601)
	in := false
	for _, f := range grid[1 : len(grid)-1] {
		w := c.RadPerSampleFromHz(f)
		var neg bool
		if ts.M() == 1 {
			neg = theory.NegativeDelay(ts.Beta[0], ts.Lambda[0], w)
		} else if ts.M() > 1 {
			neg = ts.GroupDelay(w) < 0
		}
		if neg != in {
			out = append(out, f)
			in = neg
		}
	}
	if in {
		out = append(out, c.NyquistHz())
	}
	return out
}

// TSPanel is notebook 03's panel (Eqs. 7–10, Proposition 1, the closed loop of Algorithm 1). Controls m
// (M ∈ {0, 1, 2}), beta1, lambda1, beta2, lambda2 and the toggle nesting (official, the released code's
// innermost-first mix, or paper, Eq. 10). Plots, at fixed τm, τa, Δt and f*:
//
//   - delay: the group delay in samples of the TS module alone G_M (negative region shaded, Proposition 1),
//     of the closed-loop neuron H (theory.ClosedLoop) and of the FS module alone;
//   - delayzoom: the TS delay alone on ±1 sample, where a negative delay of a tenth of a sample shows;
//   - mag: |G_M| (dB), and |H| and |H_d| in dB re the FS module's maximum;
//   - step: the subthreshold response of the closed loop and of FS alone to a unit step (fits/sim, no spikes).
func TSPanel(cfg TSPanelConfig) (*GridPanel, error) {
	c := cfg.Constants
	kappa, err := c.KappaForTargetHz(cfg.FStar)
	if err != nil {
		return nil, err
	}
	fsm := c.FS(kappa)
	fsDT, _ := c.DTTargetHz(kappa)
	grid := RefineGrid(theory.LogSpace(0.5, c.NyquistHz()*0.999, 100), fsDT) // FS alone drawn through its peak
	fsRef := 0.0
	fsMag, fsDelay := make([]float64, len(grid)), make([]float64, len(grid))
	for i, f := range grid {
		w := c.RadPerSampleFromHz(f)
		fsMag[i], fsDelay[i] = fsm.Magnitude(w), fsm.GroupDelay(w)
		fsRef = math.Max(fsRef, fsMag[i])
	}
	for i := range fsMag {
		fsMag[i] = db(fsMag[i] / fsRef)
	}
	tGrid := stepTimes(cfg.StepT, c.Dt)
	fsStep, err := TSPanelStep(c, cfg.FStar, theory.TS{}, cfg.StepT)
	if err != nil {
		return nil, err
	}
	frame := func(at []int) (PanelFrame, error) {
		m := at[0]
		ts := TSPanelModule(m, [2]float64{cfg.Beta[at[1]], cfg.Beta[at[3]]}, [2]float64{cfg.Lambda[at[2]], cfg.Lambda[at[4]]}, theory.Nesting(at[5]))
		cl := theory.ClosedLoop{FS: fsm, TS: ts}
		tsD, clD, tsM, clM := make([]float64, len(grid)), make([]float64, len(grid)), make([]float64, len(grid)), make([]float64, len(grid))
		peak, peakF := 0.0, 0.0
		for i, f := range grid {
			w := c.RadPerSampleFromHz(f)
			tsD[i], clD[i] = ts.GroupDelay(w), cl.GroupDelay(w)
			g, h := ts.Magnitude(w), cl.Magnitude(w)
			tsM[i], clM[i] = db(g), db(h/fsRef)
			if h > peak {
				peak, peakF = h, f
			}
		}
		step, err := TSPanelStep(c, cfg.FStar, ts, cfg.StepT)
		if err != nil {
			return PanelFrame{}, err
		}
		bands := NegativeDelayBands(c, ts)
		desc := "M = 0: no TS module, the neuron is the FS module"
		if m > 0 {
			desc = fmt.Sprintf("M = %d, β = %v, λ = %v, %s nesting (effective Eq. 10 weights %v)", m, ts.Beta, ts.Lambda, ts.Nesting, roundedAll(ts.PaperLambdas(), 4))
		}
		stable := "stable"
		if !cl.Stable() {
			stable = "UNSTABLE closed loop"
		}
		neg := "no negative TS delay"
		if len(bands) > 0 {
			neg = "TS delay negative on"
			for i := 0; i+1 < len(bands); i += 2 {
				neg += fmt.Sprintf(" [%.1f, %.1f] Hz", bands[i], bands[i+1])
			}
		}
		readout := fmt.Sprintf("%s  ·  %s  ·  closed-loop peak at %.1f Hz (%+.1f dB re FS alone; FS alone peaks at f*_DT = %.1f Hz), %s", desc, neg, peakF, db(peak/fsRef), fsDT, stable)
		if peakF >= grid[len(grid)-2] {
			readout += nyquistNote(c, cl)
		}
		return PanelFrame{Readout: readout, Series: [][]PanelData{
			{{X: bands}, {Y: []float64{0}}, {Y: fsDelay}, {Y: tsD}, {Y: clD}},
			{{X: bands}, {Y: []float64{0}}, {Y: tsD}},
			{{Y: fsMag}, {Y: tsM}, {Y: clM}},
			{{Y: fsStep}, {Y: step}},
		}}, nil
	}
	return NewGridPanel(GridPanelSpec{
		Controls: []PanelControl{
			{Name: "m", Label: "M (stages)", Values: []float64{0, 1, 2}, Initial: 1},
			{Name: "beta1", Label: "β₁", Values: cfg.Beta, Initial: indexOf(cfg.Beta, 0.5)},
			{Name: "lambda1", Label: "λ₁", Values: cfg.Lambda, Initial: indexOf(cfg.Lambda, 0.3)},
			{Name: "beta2", Label: "β₂ (M = 2)", Values: cfg.Beta, Initial: indexOf(cfg.Beta, 0.5)},
			{Name: "lambda2", Label: "λ₂ (M = 2)", Values: cfg.Lambda, Initial: indexOf(cfg.Lambda, 0.5)},
			nestingControl,
		},
		Plots: []PanelPlot{
			{Name: "delay", Title: "Eq. 7, Proposition 1: group delay (shaded: TS delay < 0)",
				X: PanelAxis{Label: "f (Hz)", Min: 0.5, Max: c.NyquistHz(), Log: true}, Y: PanelAxis{Label: "samples", Min: -6, Max: 14},
				Grid: grid, Series: []PanelSeries{
					{Name: "neg", Kind: SeriesBands, Color: cPink, Opacity: 0.25, Legend: "negative TS delay"},
					{Name: "zero", Kind: SeriesHLines, Color: cBlack, Dash: "3 3"},
					{Name: "fs", Color: cGrey, Dash: "4 3", Width: 1.5, Legend: "FS alone"},
					{Name: "ts", Color: cGreen, Legend: "TS alone G_M"},
					{Name: "cl", Color: cBlue, Legend: "closed loop H"},
				}},
			{Name: "delayzoom", Title: "The same TS delay near zero (±1 sample): the sign Proposition 1 is about",
				X: PanelAxis{Label: "f (Hz)", Min: 0.5, Max: c.NyquistHz(), Log: true}, Y: PanelAxis{Label: "samples", Min: -1, Max: 1},
				Grid: grid, Series: []PanelSeries{
					{Name: "neg", Kind: SeriesBands, Color: cPink, Opacity: 0.25, Legend: "negative TS delay"},
					{Name: "zero", Kind: SeriesHLines, Color: cBlack, Dash: "3 3"},
					{Name: "ts", Color: cGreen, Legend: "TS alone G_M"},
				}},
			{Name: "mag", Title: "TS alone vs the closed-loop neuron: magnitude",
				X: PanelAxis{Label: "f (Hz)", Min: 0.5, Max: c.NyquistHz(), Log: true}, Y: PanelAxis{Label: "dB (re FS max)", Min: -40, Max: 20, Ticks: dbTicks(-40, 20)},
				Grid: grid, Series: []PanelSeries{
					{Name: "fs", Color: cGrey, Dash: "4 3", Width: 1.5, Legend: "FS alone |H_d|"},
					{Name: "ts", Color: cGreen, Legend: "TS alone |G_M|"},
					{Name: "cl", Color: cBlue, Legend: "closed loop |H|"},
				}},
			{Name: "step", Title: "Algorithm 1 (fits/sim, no spikes): unit-step response",
				X: PanelAxis{Label: "t (s)", Min: 0, Max: float64(cfg.StepT) * c.Dt}, Y: PanelAxis{Label: "Ṽ per unit input", Min: -1, Max: 2},
				Grid: tGrid, Series: []PanelSeries{
					{Name: "fs", Color: cGrey, Dash: "4 3", Width: 1.5, Legend: "FS alone"},
					{Name: "cl", Color: cBlue, Legend: "closed loop"},
				}},
		},
		Frame: frame,
	})
}

// nyquistNote explains a closed-loop peak at the Nyquist edge of the frequency axis: the characteristic
// polynomial of the loop (theory.ClosedLoop.Characteristic) has a real root near z = −1, a mode that flips
// its sign every step, so |H| is largest at 1/(2Δt) and the step response rings at the sampling rate.
func nyquistNote(c theory.Constants, cl theory.ClosedLoop) string {
	note := fmt.Sprintf("  ·  the peak sits at the Nyquist edge, 1/(2Δt) = %.0f Hz, the highest frequency a Δt = %g ms sequence has", c.NyquistHz(), 1000*c.Dt)
	if z, ok := negativeRealRoot(cl.Characteristic()); ok {
		note += fmt.Sprintf(": the loop has a real pole at z = %.3f, a mode that flips sign every step, so the step response rings at the sampling rate", z)
	}
	if g := real(cl.TS.Response(math.Pi)); g < 0 {
		note += fmt.Sprintf(" (each all-pass stage is −1 at Nyquist, so the TS mix there is G = %.2f: it reverses the sign of the voltage fed back)", g)
	}
	return note
}

// negativeRealRoot returns the root of the polynomial p (coefficients, highest power first) in (−1, 0)
// nearest to −1, found by scanning for a sign change and bisecting.
func negativeRealRoot(p []float64) (float64, bool) {
	eval := func(z float64) float64 {
		v := 0.0
		for _, a := range p {
			v = v*z + a
		}
		return v
	}
	const n = 400
	for i := range n {
		a, b := -1+float64(i)/n, -1+float64(i+1)/n
		if eval(a)*eval(b) > 0 {
			continue
		}
		for range 60 {
			m := (a + b) / 2
			if eval(a)*eval(m) <= 0 {
				b = m
			} else {
				a = m
			}
		}
		return (a + b) / 2, true
	}
	return 0, false
}

// PolePanelConfig is the grid of notebook 04's panel (rad/s and 1/s² units, as Appendix A.6).
type PolePanelConfig struct {
	Mu, Rho, Kappa []float64
}

// DefaultPolePanelConfig: μ ∈ {1, 2, 4, 8}, ρ ∈ {0.5, 1, 2, 4}, κ from 0.05 to 64, starting at the paper's
// example μ = 4, ρ = 1, κ = 2. The lowest stop lies below the example's threshold κ₀ = 0.099 1/s², so the
// low-pass regime is reachable from the start.
func DefaultPolePanelConfig() PolePanelConfig {
	return PolePanelConfig{
		Mu:    []float64{1, 2, 4, 8},
		Rho:   []float64{0.5, 1, 2, 4},
		Kappa: []float64{0.05, 0.25, 0.5, 1, 2, 3, 4, 6, 8, 16, 32, 64},
	}
}

// ComplexPoleKappa returns the κ above which the poles of s² + (μ+ρ)s + (μρ+κ) are complex,
// (μ − ρ)²/4 (Eq. app_complex_pole_condition).
func ComplexPoleKappa(mu, rho float64) float64 { return (mu - rho) * (mu - rho) / 4 }

// PolePanel is notebook 04's panel (Appendix A.6). Controls mu, rho, kappa. Plots:
//
//   - splane: the pole pair of Eq. 3 in the s-plane and the response peak ±jΩ* on the imaginary axis;
//   - mag: |H(jΩ)| in dB re its maximum, with Ω* and Ω_pole marked;
//   - freqs: Ω* (Eq. 4) and Ω_pole against κ at the current μ, ρ, the range κ₀ < κ ≤ (μ−ρ)²/4 where a target
//     exists with real poles shaded (where the two notions separate), the current κ marked.
func PolePanel(cfg PolePanelConfig) (*GridPanel, error) {
	wGrid := theory.LogSpace(0.02, 20, 110)
	kGrid := theory.LogSpace(0.01, 100, 120)
	frame := func(at []int) (PanelFrame, error) {
		mu, rho, kappa := cfg.Mu[at[0]], cfg.Rho[at[1]], cfg.Kappa[at[2]]
		ct := theory.CT{Mu: mu, Rho: rho, Kappa: kappa}
		p1, p2 := ct.Poles()
		ws, hasT := ct.Target()
		wp, complexPoles := ct.PoleFrequency()
		wx := wGrid
		ref := ct.Magnitude(0)
		if hasT {
			ref = ct.Magnitude(ws)
			wx = RefineGrid(wGrid, ws) // drawn through the peak
		}
		mag := make([]float64, len(wx))
		for i, w := range wx {
			mag[i] = round(db(ct.Magnitude(w)/ref), 2)
		}
		starK, poleK := nans(len(kGrid)), nans(len(kGrid))
		for i, k := range kGrid {
			if w, ok := theory.OmegaStar(mu, rho, k); ok {
				starK[i] = w
			}
			if w, ok := (theory.CT{Mu: mu, Rho: rho, Kappa: k}).PoleFrequency(); ok {
				poleK[i] = w
			}
		}
		k0, kc := theory.KappaThreshold(mu, rho), ComplexPoleKappa(mu, rho)
		var band []float64
		if kc > k0 {
			band = []float64{k0, kc}
		}
		var peakX, peakY, wsMark, wpMark, curStarX, curStarY, curPoleX, curPoleY []float64
		if hasT {
			peakX, peakY, wsMark = []float64{0, 0}, []float64{ws, -ws}, []float64{ws}
			curStarX, curStarY = []float64{kappa}, []float64{ws}
		}
		if complexPoles {
			wpMark = []float64{wp}
			curPoleX, curPoleY = []float64{kappa}, []float64{wp}
		}
		regime := "real poles, no target (low-pass)"
		switch {
		case hasT && complexPoles:
			regime = fmt.Sprintf("complex poles and a target: Ω* = %.3f rad/s, Ω_pole = %.3f rad/s (differ by %.3f)", ws, wp, ws-wp)
		case hasT:
			regime = fmt.Sprintf("REAL poles, yet a target Ω* = %.3f rad/s: the response peak is not a pole frequency", ws)
		case complexPoles:
			regime = fmt.Sprintf("complex poles (Ω_pole = %.3f rad/s) but no nonzero target", wp)
		}
		readout := fmt.Sprintf("poles %s, %s  ·  4(μρ+κ) = %.4g vs (μ+ρ)² = %.4g  ·  κ₀ = %.4g, complex poles above κ = %.4g  ·  %s",
			cfmt(p1), cfmt(p2), 4*(mu*rho+kappa), (mu+rho)*(mu+rho), k0, kc, regime)
		return PanelFrame{Readout: readout, Series: [][]PanelData{
			{{X: []float64{0}}, {Y: []float64{0}}, {X: []float64{real(p1), real(p2)}, Y: []float64{imag(p1), imag(p2)}}, {X: peakX, Y: peakY}},
			{{X: wsMark}, {X: wpMark}, {X: wx, Y: mag}},
			{{X: band}, {Y: starK}, {Y: poleK}, {X: []float64{kappa}}, {X: curStarX, Y: curStarY}, {X: curPoleX, Y: curPoleY}},
		}}, nil
	}
	return NewGridPanel(GridPanelSpec{
		Controls: []PanelControl{
			{Name: "mu", Label: "μ = 1/τm", Values: cfg.Mu, Labels: unitLabels(cfg.Mu, " 1/s"), Initial: indexOf(cfg.Mu, 4)},
			{Name: "rho", Label: "ρ = 1/τa", Values: cfg.Rho, Labels: unitLabels(cfg.Rho, " 1/s"), Initial: indexOf(cfg.Rho, 1)},
			{Name: "kappa", Label: "κ = ηγ", Values: cfg.Kappa, Labels: unitLabels(cfg.Kappa, " 1/s²"), Initial: indexOf(cfg.Kappa, 2)},
		},
		Plots: []PanelPlot{
			{Name: "splane", Title: "Appendix A.6: poles (●) and response peak ±jΩ* (●) in the s-plane",
				X: PanelAxis{Label: "Re s (1/s)", Min: -12, Max: 2}, Y: PanelAxis{Label: "Im s (rad/s)", Min: -10, Max: 10}, Width: 340, Height: 300,
				Series: []PanelSeries{
					{Name: "imaxis", Kind: SeriesVLines, Color: cGrey},
					{Name: "reaxis", Kind: SeriesHLines, Color: cGrey},
					{Name: "poles", Kind: SeriesPoints, Color: cOrange, Legend: "poles"},
					{Name: "peak", Kind: SeriesPoints, Color: cBlue, Legend: "±jΩ* (Theorem 1)"},
				}},
			{Name: "mag", Title: "Eq. 3: |H(jΩ)| with Ω* and Ω_pole",
				X: PanelAxis{Label: "Ω (rad/s)", Min: 0.02, Max: 20, Log: true}, Y: PanelAxis{Label: "dB re max", Min: -40, Max: 3, Ticks: dbTicks(-40, 0)},
				Grid: wGrid, Series: []PanelSeries{
					{Name: "star", Kind: SeriesVLines, Color: cBlue, Dash: "4 3", Legend: "Ω*"},
					{Name: "pole", Kind: SeriesVLines, Color: cOrange, Dash: "2 3", Legend: "Ω_pole"},
					{Name: "h", Color: cBlack, Legend: "|H(jΩ)|"},
				}},
			{Name: "freqs", Title: "Appendix A.6: Ω* and Ω_pole vs κ (shaded: target with real poles)",
				X: PanelAxis{Label: "κ (1/s²)", Min: 0.01, Max: 100, Log: true}, Y: PanelAxis{Label: "rad/s", Min: 0, Max: 10},
				Grid: kGrid, Series: []PanelSeries{
					{Name: "sep", Kind: SeriesBands, Color: cYellow, Opacity: 0.25, Legend: "κ₀ < κ ≤ (μ−ρ)²/4"},
					{Name: "star", Color: cBlue, Legend: "Ω* (Eq. 4)"},
					{Name: "pole", Color: cOrange, Legend: "Ω_pole"},
					{Name: "kappa", Kind: SeriesVLines, Color: cBlack, Dash: "3 3"},
					{Name: "curstar", Kind: SeriesPoints, Color: cBlue},
					{Name: "curpole", Kind: SeriesPoints, Color: cOrange},
				}},
		},
		Frame: frame,
	})
}

func cfmt(z complex128) string {
	if imag(z) == 0 {
		return fmt.Sprintf("%.3f", real(z))
	}
	return fmt.Sprintf("%.3f%+.3fj", real(z), imag(z))
}
