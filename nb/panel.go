package nb

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"github.com/fits-snn/fits/fits/theory"
)

// PanelConfig sets the grid of an interactive Theorem 1 panel. Every combination of TauM × TauA ×
// FStar is precomputed; the sliders pick one of each.
type PanelConfig struct {
	TauM  []float64 // membrane time constants τm offered by the slider, seconds
	TauA  []float64 // adaptation time constants τa, seconds
	FStar []float64 // target frequencies f*, Hz
	Dt    float64   // timestep Δt of the discrete-time curve, seconds (smaller than every τ)
	// FMin and FMax bound the plotted frequency axis in Hz (log scale). The DT curve stops at the
	// Nyquist frequency 1/(2Δt).
	FMin, FMax float64
	Points     int     // frequencies per curve
	FloorDB    float64 // the y axis runs from FloorDB (negative) to +3 dB; the curves continue below it, off scale
	Initial    [3]int  // initial slider positions: indices into TauM, TauA, FStar
	Width      int     // SVG width in pixels; 0 means 680
	Height     int     // SVG height in pixels; 0 means 340
}

// DefaultPanelConfig is the panel of notebook 01: τm ∈ {10, 20, 40, 100} ms, τa ∈ {50, 100, 200,
// 500} ms, thirteen targets from 1 to 100 Hz (past the semi-implicit Jury limit, 77.2 Hz at the SSC
// constants, so the unstable DT curve can be reached), Δt = 4 ms, starting at the paper's SSC constants
// and f* = 10 Hz.
func DefaultPanelConfig() PanelConfig {
	return PanelConfig{
		TauM:    []float64{0.01, 0.02, 0.04, 0.1},
		TauA:    []float64{0.05, 0.1, 0.2, 0.5},
		FStar:   []float64{1, 2, 3, 5, 10, 15, 20, 30, 50, 70, 77, 80, 100},
		Dt:      0.004,
		FMin:    0.1,
		FMax:    125,
		Points:  120,
		FloorDB: -40,
		Initial: [3]int{2, 2, 4},
	}
}

// Panel is the interactive view of Theorem 1 of notebook 01: sliders over τm, τa and f* redraw the
// continuous-time magnitude response |H(jΩ)| (Eq. 3, κ from Eq. 5) and the discrete-time response
// |H_d(e^{jω})| of the semi-implicit FS module (Theorem 2) at Δt. It is a GridPanel: every curve is
// precomputed by fits/theory and embedded, so the panel works without a kernel.
type Panel struct {
	*GridPanel
	cfg PanelConfig
}

// NewPanel precomputes every curve of cfg.
func NewPanel(cfg PanelConfig) (*Panel, error) {
	if len(cfg.TauM) == 0 || len(cfg.TauA) == 0 || len(cfg.FStar) == 0 {
		return nil, fmt.Errorf("panel: empty τm, τa or f* grid")
	}
	if cfg.Points < 2 {
		return nil, fmt.Errorf("panel: %d points per curve, need at least 2", cfg.Points)
	}
	if !(cfg.FMin > 0 && cfg.FMax > cfg.FMin) || math.IsInf(cfg.FMax, 0) {
		return nil, fmt.Errorf("panel: frequency range [%g, %g] Hz is not valid", cfg.FMin, cfg.FMax)
	}
	if !(cfg.FloorDB < 0) {
		return nil, fmt.Errorf("panel: FloorDB %g must be negative", cfg.FloorDB)
	}
	cfg.Width, cfg.Height = cmp.Or(cfg.Width, 680), cmp.Or(cfg.Height, 340)
	f := theory.LogSpace(cfg.FMin, cfg.FMax, cfg.Points)
	frame := func(at []int) (PanelFrame, error) {
		tm, ta, fs := cfg.TauM[at[0]], cfg.TauA[at[1]], cfg.FStar[at[2]]
		c := theory.Constants{TauM: tm, TauA: ta, Dt: cfg.Dt}
		if err := c.Validate(); err != nil {
			return PanelFrame{}, fmt.Errorf("τm = %g s, τa = %g s, Δt = %g s: %w", tm, ta, cfg.Dt, err)
		}
		kappa, err := c.KappaForTargetHz(fs)
		if err != nil {
			return PanelFrame{}, fmt.Errorf("f* = %g Hz: %w", fs, err)
		}
		ct, fsm := c.CT(kappa), c.FS(kappa)
		fdt, hasDT := c.DTTargetHz(kappa)
		// The grid is refined around both peaks, so that the drawn maxima are the closed forms' values.
		fx := RefineGrid(f, fs)
		if hasDT {
			fx = RefineGrid(fx, fdt)
		}
		ref := ct.Magnitude(theory.RadPerSecFromHz(fs))
		ctdb := make([]float64, len(fx))
		for i, x := range fx {
			ctdb[i] = round(db(ct.Magnitude(theory.RadPerSecFromHz(x))/ref), 2)
		}
		dtdb := dtMagnitudeDB(c, fsm, fx, fdt, hasDT)
		fdtText, fdtMark := "none", []float64{}
		if hasDT {
			fdtText, fdtMark = fmt.Sprintf("%.2f Hz", fdt), []float64{fdt}
		}
		readout := fmt.Sprintf("κ* = %.5g 1/s² (Eq. 5)   ·   CT target f* = %g Hz   ·   realized DT target f*_DT = %s (Theorem 2)", kappa, fs, fdtText)
		if !fsm.Stable() {
			readout += "   ·   DT module UNSTABLE: κ* is above the semi-implicit Jury bound"
		}
		return PanelFrame{Readout: readout, Series: [][]PanelData{{
			{X: []float64{fs}}, {X: fdtMark}, {X: fx, Y: ctdb}, {X: fx, Y: dtdb, Alt: !fsm.Stable()},
		}}}, nil
	}
	g, err := NewGridPanel(GridPanelSpec{
		Controls: []PanelControl{
			{Name: "taum", Label: "τm", Values: cfg.TauM, Labels: scaledLabels(cfg.TauM, 1000, "ms"), Initial: cfg.Initial[0]},
			{Name: "taua", Label: "τa", Values: cfg.TauA, Labels: scaledLabels(cfg.TauA, 1000, "ms"), Initial: cfg.Initial[1]},
			{Name: "fstar", Label: "f*", Values: cfg.FStar, Labels: scaledLabels(cfg.FStar, 1, "Hz"), Initial: cfg.Initial[2]},
		},
		Plots: []PanelPlot{{
			Name: "mag", Title: "Theorem 1 (FS module alone): CT |H(jΩ)| and semi-implicit DT |H_d| (Theorem 2)",
			X:    PanelAxis{Label: "f (Hz)", Min: cfg.FMin, Max: cfg.FMax, Log: true},
			Y:    PanelAxis{Label: "dB re peak", Min: cfg.FloorDB, Max: 3, Ticks: dbTicks(cfg.FloorDB, 0)},
			Grid: f, Width: cfg.Width, Height: cfg.Height,
			Series: []PanelSeries{
				{Name: "fstar", Kind: SeriesVLines, Color: "#0072B2", Dash: "4 3", Legend: "f* (dashed)"},
				{Name: "fdt", Kind: SeriesVLines, Color: "#D55E00", Dash: "2 3", Legend: "f*_DT (dotted)"},
				{Name: "ct", Color: "#0072B2", Legend: "CT |H(jΩ)| (Theorem 1, FS alone)"},
				{Name: "dt", Color: "#D55E00", AltDash: "6 4", Legend: fmt.Sprintf("DT |H_d| (semi-implicit, Δt = %g s; dashed: unstable)", cfg.Dt)},
			},
		}},
		Frame: frame,
	})
	if err != nil {
		return nil, err
	}
	return &Panel{GridPanel: g, cfg: cfg}, nil
}

// dbTicks returns ticks every 10 dB from floor (rounded up) to top (0 dB is one of them when in range).
func dbTicks(floor, top float64) []float64 {
	var ts []float64
	for v := math.Ceil(floor/10) * 10; v <= top; v += 10 {
		ts = append(ts, v)
	}
	return ts
}

// Curves returns the precomputed curves at slider positions (i, j, k) (indices into TauM, TauA,
// FStar): the frequencies in Hz (the panel's grid refined around f* and f*_DT), the CT magnitude in dB
// relative to its value at f*, and the DT magnitude in dB relative to its maximum (NaN above Nyquist).
func (p *Panel) Curves(i, j, k int) (f, ct, dt []float64, err error) {
	c, err := p.Series("mag", "ct", i, j, k)
	if err != nil {
		return nil, nil, nil, err
	}
	d, err := p.Series("mag", "dt", i, j, k)
	if err != nil {
		return nil, nil, nil, err
	}
	return c.X, c.Y, d.Y, nil
}

// dtMagnitudeDB returns |H_d| of the semi-implicit FS module fsm at the frequencies f (Hz), in dB re its
// maximum over f and, with hasDT, over f*_DT = fdt (Theorem 2's peak), rounded to 0.01 dB; NaN at and
// above Nyquist.
func dtMagnitudeDB(c theory.Constants, fsm theory.FS, f []float64, fdt float64, hasDT bool) []float64 {
	out, ref := nans(len(f)), 0.0
	if hasDT {
		ref = fsm.Magnitude(c.RadPerSampleFromHz(fdt))
	}
	for i, x := range f {
		if x < c.NyquistHz() {
			out[i] = fsm.Magnitude(c.RadPerSampleFromHz(x))
			ref = math.Max(ref, out[i])
		}
	}
	for i := range out {
		out[i] = round(db(out[i]/ref), 2)
	}
	return out
}

// scaledLabels writes each value times scale to 6 significant digits, followed by the unit ("40 ms").
func scaledLabels(v []float64, scale float64, unit string) []string {
	var out []string
	for _, x := range v {
		out = append(out, fmt.Sprintf("%g %s", roundSig(x*scale, 6), unit))
	}
	return out
}

// nans returns n NaNs: a curve with nothing to draw until its values are set.
func nans(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// clipDB returns v rounded to 0.01 dB and raised to floor (for spectra whose floor means "nothing here").
func clipDB(v, floor float64) float64 {
	if math.IsNaN(v) {
		return v
	}
	return round(math.Max(v, floor), 2)
}

// RefineGrid returns the sorted grid with at and points 0.2 %, 1 % and 4 % to either side of it added
// (those inside the grid's range), so that a curve with a sharp extremum at at is drawn through it.
func RefineGrid(grid []float64, at float64) []float64 {
	out := slices.Clone(grid)
	if len(grid) == 0 || !isFinite(at) {
		return out
	}
	lo, hi := grid[0], grid[len(grid)-1]
	for _, r := range []float64{-0.04, -0.01, -0.002, 0, 0.002, 0.01, 0.04} {
		if x := at * (1 + r); x >= lo && x <= hi && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

func round(v float64, digits int) float64 {
	s := math.Pow(10, float64(digits))
	return math.Round(v*s) / s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
