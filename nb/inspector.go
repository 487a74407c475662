package nb

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
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
		before.Beta = append(before.Beta, theory.BetaOf(l.Neuron.BetaHatInit))
		before.Lambda = append(before.Lambda, theory.LambdaOf(l.Neuron.LambdaHatInit))
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
	kappa, err := DiscretizationKappa(c, p.FHz, cfg.DTExact)
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
		lo, hi := minMax(yb, ya)
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
	var xs, ys []float64
	ticks := make([]plot.Tick, len(h))
	for s := range h {
		ticks[s] = plot.Tick{Value: float64(s), Label: fmt.Sprintf("#%d (class %d)", a.Index[s], a.Labels[s])}
		for k, row := range h[s] {
			if row[neuronIndex] != 0 {
				xs, ys = append(xs, float64(k)*ms), append(ys, float64(s))
			}
		}
	}
	if err := addBoxes(left, xs, ys, fmt.Sprintf("spikes (%d)", len(xs)), colorAt(1), vg.Points(1.5)); err != nil {
		return nil, err
	}
	left.Y.Tick.Marker = plot.ConstantTicks(ticks)
	left.Y.Min, left.Y.Max = -0.5, float64(len(h))-0.5
	left.X.Min, left.X.Max = 0, float64(len(h[0]))*ms
	right, err := rasterPanel(fmt.Sprintf("layer %d on example #%d (class %d): neuron %d in colour", layer+1, a.Index[0], a.Labels[0], neuronIndex),
		"neuron", h[0], a.Dt, grey)
	if err != nil {
		return nil, err
	}
	xs, ys = nil, nil
	for k, row := range h[0] {
		if row[neuronIndex] != 0 {
			xs, ys = append(xs, float64(k)*ms), append(ys, float64(neuronIndex))
		}
	}
	if err := addBoxes(right, xs, ys, fmt.Sprintf("neuron %d", neuronIndex), colorAt(1), vg.Points(2)); err != nil {
		return nil, err
	}
	return sideBySide("13_neuron_raster",
		"Spikes of the inspected neuron on several test examples (left) and its whole layer on the first example (right), from the trained network without dropout.",
		left, right, 4*vg.Inch), nil
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

// InspectedRun is the run folder notebook 13 inspects: $FITS_INSPECT_RUN when set (any feedforward run
// written by `fits train` or `fits import`), else seed 1 of the FiTS run of Table 1's SHD row under root
// (shd-best/fsts-m1/w128, the run Table 5 and Figure 3 analyse).
func InspectedRun(root string) string {
	if d := os.Getenv("FITS_INSPECT_RUN"); d != "" {
		return d
	}
	return experiment.RunDir(root, "shd-best/fsts-m1/w128", 1)
}

// Inspector is what notebook 13 inspects of one trained run, neuron by neuron: its hidden layers (learned
// f*, β, λ beside the initial f*) and its spikes on a few test examples.
type Inspector struct {
	// Title names the run: "<dataset> <model> M=<M> W=<width> seed <seed>".
	Title string
	// Layers are the run's hidden layers (analysis.Run.Layers); each has target frequencies.
	Layers []analysis.Layer
	// Activity holds the network's spikes on the first test examples, without dropout.
	Activity *analysis.Activity
}

// NewInspector reads run r's hidden layers and its spikes on the first `examples` examples of the test
// split. An error wrapping ErrNoRuns when r is nil (the run is not there yet); an error when the run's
// neurons have no target frequency (LIF, adaptive LIF).
func NewInspector(r *analysis.Run, examples int) (*Inspector, error) {
	if r == nil {
		return nil, fmt.Errorf("the inspected run: %w", ErrNoRuns)
	}
	layers, err := r.Layers()
	if err != nil {
		return nil, err
	}
	if len(layers) == 0 || layers[0].TargetHz == nil {
		return nil, fmt.Errorf("run %s (%s) has no target frequencies to inspect: choose an FS or FS + TS run", r.Dir, r.Config.Model)
	}
	in := &Inspector{Title: fmt.Sprintf("%s %s M=%d W=%d seed %d", r.Config.Dataset, r.Config.Model, r.Config.M, r.Config.Width, r.Config.Seed), Layers: layers}
	if examples > 0 {
		idx := make([]int, examples)
		for i := range idx {
			idx[i] = i
		}
		if in.Activity, err = r.Spikes(analysis.SplitTest, idx); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// InspectLayers summarizes run r's hidden layers: a line naming the run (folder, model, dataset, M, width,
// seed, epochs) and a table with, per layer, its neurons, the f* range at initialization (Hz), the neuron
// whose f* moved furthest on a log scale (MostShifted) with its f* before and after training (Hz), and the
// mean learned β and λ of each TS stage. An error wrapping ErrNoRuns when r is nil.
func InspectLayers(r *analysis.Run) (*Output, error) {
	in, err := NewInspector(r, 0)
	if err != nil {
		return nil, err
	}
	out := in.layersTable()
	out.Notes = append([]string{fmt.Sprintf("Run `%s`: %s on %s, M = %d, width %d, seed %d, %d epochs.", r.Dir, r.Config.Model, r.Config.Dataset, r.Config.M, r.Config.Width, r.Config.Seed, len(r.Epochs))}, out.Notes...)
	return out, nil
}

// layersTable is InspectLayers' table.
func (in *Inspector) layersTable() *Output {
	t := Table{Caption: "Hidden layers of the inspected run (" + in.Title + ")",
		Header: []string{"layer", "neurons", "f* range at init. (Hz)", "most shifted neuron: f* init. → learned (Hz)", "mean β per stage", "mean λ per stage"}}
	for _, l := range in.Layers {
		n := MostShifted(l)
		var b, lam []string
		for m := range l.Beta {
			b = append(b, fmt.Sprintf("%.3f", analysis.Summarize(l.Beta[m]).Mean))
			lam = append(lam, fmt.Sprintf("%.3f", analysis.Summarize(l.Lambda[m]).Mean))
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(l.Index + 1), fmt.Sprint(l.Neurons), fmt.Sprintf("%.1f – %.1f", l.Neuron.FMinHz, l.Neuron.FMaxHz),
			fmt.Sprintf("#%d: %.2f → %.2f", n, l.InitialHz[n], l.TargetHz[n]), strings.Join(b, ", "), strings.Join(lam, ", ")})
	}
	return &Output{Tables: []Table{t}}
}

// MostShifted returns the last hidden layer and its neuron whose f* moved furthest (MostShifted).
func (in *Inspector) MostShifted() (layer, neuron int) {
	layer = len(in.Layers) - 1
	return layer, MostShifted(in.Layers[layer])
}

// Neuron inspects neuron n of hidden layer li (both from 0): a table of its f* (Hz) and TS coefficients β_m,
// λ_m at initialization, learned, and their change; figure 13_neuron_inspector (InspectorFigure: the
// closed-loop magnitude and group delay and the TS module's group delay, before and after training); and,
// when the inspector holds spikes, figure 13_neuron_raster (NeuronRaster).
func (in *Inspector) Neuron(li, n int) (*Output, error) {
	if li < 0 || li >= len(in.Layers) {
		return nil, fmt.Errorf("no hidden layer %d (the run has %d)", li+1, len(in.Layers))
	}
	l := in.Layers[li]
	before, after, err := NeuronOf(l, n)
	if err != nil {
		return nil, err
	}
	title := fmt.Sprintf("%s · layer %d · neuron %d", in.Title, li+1, n)
	bode, err := InspectorFigure(title, l.Neuron, before, after)
	if err != nil {
		return nil, err
	}
	t := Table{Caption: "Parameters of " + title, Header: []string{"parameter", "initial", "learned", "change"}}
	t.Rows = append(t.Rows, []string{"f* (Hz)", fmt.Sprintf("%.3f", before.FHz), fmt.Sprintf("%.3f", after.FHz), fmt.Sprintf("%+.3f", after.FHz-before.FHz)})
	for m := range after.Beta {
		t.Rows = append(t.Rows,
			[]string{fmt.Sprintf("β%d", m+1), fmt.Sprintf("%.4f", before.Beta[m]), fmt.Sprintf("%.4f", after.Beta[m]), fmt.Sprintf("%+.4f", after.Beta[m]-before.Beta[m])},
			[]string{fmt.Sprintf("λ%d", m+1), fmt.Sprintf("%.4f", before.Lambda[m]), fmt.Sprintf("%.4f", after.Lambda[m]), fmt.Sprintf("%+.4f", after.Lambda[m]-before.Lambda[m])})
	}
	out := &Output{Tables: []Table{t}, Figures: []*Figure{bode}}
	if in.Activity != nil {
		raster, err := NeuronRaster(in.Activity, li, n)
		if err != nil {
			return nil, err
		}
		out.Figures = append(out.Figures, raster)
	}
	return out, nil
}

// InspectMostShifted is Inspector.Neuron of the neuron whose f* moved furthest in run r's last hidden
// layer, with its spikes on the first `examples` test examples. An error wrapping ErrNoRuns when r is nil.
func InspectMostShifted(r *analysis.Run, examples int) (*Output, error) {
	in, err := NewInspector(r, examples)
	if err != nil {
		return nil, err
	}
	return in.Neuron(in.MostShifted())
}
