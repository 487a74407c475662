package nb

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The neuron inspector of notebook 13: one trained neuron's parameters, its subthreshold responses
// before and after training, and its spikes.

// NeuronParams are one neuron's FS and TS parameters: the target frequency f* in Hz (the continuous-time
// target of Theorem 1, or the realized discrete-time one when the layer is DT-exact) and the TS
// coefficients β_m ∈ (−1, 1), λ_m ∈ (0, 1) of stages m = 1..M (empty without TS).
type NeuronParams struct {
	FHz          float64
	Beta, Lambda []float64
}

// NeuronOf returns neuron i of a layer at initialization (f* log-spaced, β = tanh(β̂₀), λ = σ(λ̂₀) in every
// stage) and after training (the learned values).
func NeuronOf(l analysis.Layer, i int) (before, after NeuronParams, err error) {
	if l.TargetHz == nil || l.InitialHz == nil {
		return before, after, fmt.Errorf("layer %d (%s) has no target frequencies", l.Index+1, l.Neuron.Kind)
	}
	if i < 0 || i >= len(l.TargetHz) {
		return before, after, fmt.Errorf("neuron %d outside layer %d's %d neurons", i, l.Index+1, len(l.TargetHz))
	}
	before.FHz, after.FHz = l.InitialHz[i], l.TargetHz[i]
	for m := range l.Beta {
		before.Beta = append(before.Beta, math.Tanh(l.Neuron.BetaHatInit))
		before.Lambda = append(before.Lambda, 1/(1+math.Exp(-l.Neuron.LambdaHatInit)))
		after.Beta = append(after.Beta, l.Beta[m][i])
		after.Lambda = append(after.Lambda, l.Lambda[m][i])
	}
	return before, after, nil
}

// NeuronResponses are the subthreshold responses of one neuron on a frequency grid.
type NeuronResponses struct {
	// FrequencyHz is the grid.
	FrequencyHz []float64
	// ClosedLoopDB and ClosedLoopDelayMs are the magnitude (dB) and group delay (ms) of the whole neuron as
	// Algorithm 1 runs it, H(z) = G(z)(z − ρ̄)/((z − μ̄G(z))(z − ρ̄) + κ̄z) (theory.ClosedLoop; the FS module
	// alone when M = 0).
	ClosedLoopDB, ClosedLoopDelayMs []float64
	// TSDelayMs is the group delay (ms) of the TS module alone, G(z) (0 when M = 0).
	TSDelayMs []float64
	// PeakHz is the frequency of the closed loop's largest magnitude on the grid.
	PeakHz float64
}

// ResponsesOf evaluates a neuron of configuration cfg with parameters p on n frequencies log-spaced
// from Nyquist/500 to Nyquist. κ comes from f* by Theorem 1 (Eq. 5), or by the DT-exact inverse when
// cfg.DTExact.
func ResponsesOf(cfg neuron.Config, p NeuronParams, n int) (*NeuronResponses, error) {
	c := cfg.Constants()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	kappa, err := c.KappaForTargetHz(p.FHz)
	if cfg.DTExact {
		kappa, err = c.KappaDTExact(p.FHz)
	}
	if err != nil {
		return nil, err
	}
	ts := theory.TS{Beta: p.Beta, Lambda: p.Lambda}
	if err := ts.Validate(); err != nil {
		return nil, err
	}
	cl := theory.ClosedLoop{FS: c.FS(kappa), TS: ts}
	nyq := c.NyquistHz()
	r := &NeuronResponses{FrequencyHz: theory.LogSpace(nyq/500, nyq*0.999, n)}
	ms := 1000 * c.Dt
	best := math.Inf(-1)
	for _, f := range r.FrequencyHz {
		w := c.RadPerSampleFromHz(f)
		m := db(cl.Magnitude(w))
		r.ClosedLoopDB = append(r.ClosedLoopDB, m)
		r.ClosedLoopDelayMs = append(r.ClosedLoopDelayMs, ms*cl.GroupDelay(w))
		r.TSDelayMs = append(r.TSDelayMs, ms*ts.GroupDelay(w))
		if m > best {
			best, r.PeakHz = m, f
		}
	}
	return r, nil
}

// InspectorFigure is figure 13_neuron_inspector: the closed-loop neuron's magnitude (dB) and group delay
// (ms), and the TS module's group delay alone (ms), against f in Hz, before training (dashed) and after
// (solid), with the targets f* marked (dotted verticals). title names the run, layer and neuron.
func InspectorFigure(title string, cfg neuron.Config, before, after NeuronParams) (*Figure, error) {
	rb, err := ResponsesOf(cfg, before, 400)
	if err != nil {
		return nil, fmt.Errorf("before training: %w", err)
	}
	ra, err := ResponsesOf(cfg, after, 400)
	if err != nil {
		return nil, fmt.Errorf("after training: %w", err)
	}
	curves := func(yb, ya []float64) []Curve {
		return []Curve{
			{Label: fmt.Sprintf("before training (f* = %.2f Hz)", before.FHz), X: rb.FrequencyHz, Y: yb, Dashed: true},
			{Label: fmt.Sprintf("after training (f* = %.2f Hz)", after.FHz), X: ra.FrequencyHz, Y: ya},
		}
	}
	marks := []float64{before.FHz, after.FHz}
	// panel leaves room above the curves for the legend.
	panel := func(what, ylabel string, yb, ya []float64, zero bool) CurvePanel {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range append(append([]float64(nil), yb...), ya...) {
			if isFinite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if zero {
			lo, hi = math.Min(lo, 0), math.Max(hi, 0)
		}
		p := CurvePanel{Title: title + "\n" + what, XLabel: "f (Hz)", YLabel: ylabel, LogX: true, VLines: marks, ZeroLine: zero, Curves: curves(yb, ya)}
		if lo < hi {
			p.YMin, p.YMax = lo-0.05*(hi-lo), hi+0.35*(hi-lo)
		}
		return p
	}
	panels := []CurvePanel{
		panel("closed-loop neuron: magnitude", "|H| (dB)", rb.ClosedLoopDB, ra.ClosedLoopDB, false),
		panel("closed-loop neuron: group delay", "group delay (ms)", rb.ClosedLoopDelayMs, ra.ClosedLoopDelayMs, true),
	}
	if len(after.Beta) > 0 {
		panels = append(panels, panel("TS module alone: group delay", "group delay (ms)", rb.TSDelayMs, ra.TSDelayMs, true))
	}
	fig, err := CurveFigure("13_neuron_inspector",
		"One trained neuron before (dashed) and after (solid) training: the closed-loop neuron of Algorithm 1 (magnitude, group delay) and, with TS, the TS module alone; dotted lines mark f* before and after.",
		panels, 0)
	if err != nil {
		return nil, err
	}
	for _, row := range fig.Panels {
		for _, p := range row {
			p.Legend.Top, p.Legend.Left = true, false
		}
	}
	return fig, nil
}

// NeuronRaster is figure 13_neuron_raster: left, the spikes of one neuron (layer, index) on every example
// of an activity (one row per example, labelled with its class); right, the whole layer on the first
// example, with the chosen neuron's spikes in colour. Time in ms.
func NeuronRaster(a *analysis.Activity, layer, neuronIndex int) (*Figure, error) {
	if a == nil || layer < 0 || layer >= len(a.Hidden) || len(a.Hidden[layer]) == 0 {
		return nil, fmt.Errorf("neuron raster: no layer %d", layer+1)
	}
	h := a.Hidden[layer]
	if len(h[0]) == 0 || neuronIndex < 0 || neuronIndex >= len(h[0][0]) {
		return nil, fmt.Errorf("neuron raster: no neuron %d in layer %d", neuronIndex, layer+1)
	}
	ms := 1000 * a.Dt
	left := newPlot(fmt.Sprintf("layer %d, neuron %d: spikes on %d %s examples", layer+1, neuronIndex, len(h), a.Split), "time (ms)", "example")
	var pts plotter.XYs
	ticks := make([]plot.Tick, len(h))
	for s := range h {
		ticks[s] = plot.Tick{Value: float64(s), Label: fmt.Sprintf("#%d (class %d)", a.Index[s], a.Labels[s])}
		for k, row := range h[s] {
			if row[neuronIndex] != 0 {
				pts = append(pts, plotter.XY{X: float64(k) * ms, Y: float64(s)})
			}
		}
	}
	if len(pts) > 0 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Shape: draw.BoxGlyph{}, Radius: vg.Points(1.5), Color: colorAt(1)}
		left.Add(sc)
		left.Legend.Add(fmt.Sprintf("spikes (%d)", len(pts)), sc)
	}
	left.Y.Tick.Marker = plot.ConstantTicks(ticks)
	left.Y.Min, left.Y.Max = -0.5, float64(len(h))-0.5
	left.X.Min, left.X.Max = 0, float64(len(h[0]))*ms
	right, err := rasterPanel(fmt.Sprintf("layer %d on example #%d (class %d): neuron %d in colour", layer+1, a.Index[0], a.Labels[0], neuronIndex),
		"neuron", h[0], a.Dt, grey)
	if err != nil {
		return nil, err
	}
	var mine plotter.XYs
	for k, row := range h[0] {
		if row[neuronIndex] != 0 {
			mine = append(mine, plotter.XY{X: float64(k) * ms, Y: float64(neuronIndex)})
		}
	}
	if len(mine) > 0 {
		sc, err := plotter.NewScatter(mine)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Shape: draw.BoxGlyph{}, Radius: vg.Points(2), Color: colorAt(1)}
		right.Add(sc)
		right.Legend.Add(fmt.Sprintf("neuron %d", neuronIndex), sc)
	}
	return &Figure{
		Name:    "13_neuron_raster",
		Caption: "Spikes of the inspected neuron on several test examples (left) and its whole layer on the first example (right), from the trained network without dropout.",
		Panels:  [][]*plot.Plot{{left, right}},
		Width:   12 * vg.Inch,
		Height:  4 * vg.Inch,
	}, nil
}

// MostShifted returns the neuron of a layer whose learned target moved furthest from its initial value
// on a log scale (|log(f*_learned / f*_init)|), or 0 when the layer has no targets.
func MostShifted(l analysis.Layer) int {
	best, idx := -1.0, 0
	for i := range l.TargetHz {
		if l.TargetHz[i] <= 0 || l.InitialHz[i] <= 0 {
			continue
		}
		if d := math.Abs(math.Log(l.TargetHz[i] / l.InitialHz[i])); d > best {
			best, idx = d, i
		}
	}
	return idx
}
