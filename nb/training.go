package nb

import (
	"encoding/base64"
	"fmt"
	"html"
	"image/color"
	"math"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/train"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figures of notebook 05 (training): learning curves, spike rasters and target-frequency histograms
// of trained runs. Their data come from fits/train (result.json, progress events) and fits/analysis
// (checkpoints); accuracies are shown in percent, frequencies in Hz, time in ms.

// Curves are one run's per-epoch measurements with the label its legend shows.
type Curves struct {
	Label  string
	Epochs []train.Epoch
}

// RunLabel names a run by its model, with the TS order for FS+TS ("fsts M=1").
func RunLabel(model string, m int) string {
	if m > 0 {
		return fmt.Sprintf("%s M=%d", model, m)
	}
	return model
}

// TrainingCurves is figure 05_training_curves. Left: the mean training cross-entropy of every epoch.
// Right: accuracy (%) after every epoch on the training examples (solid, measured during the epoch, in
// training mode), the validation split (dashed, when the protocol has one) and the test split (dotted).
// One colour per run. epochs fixes the x axis to [1, epochs], so that a figure redrawn after every epoch
// of a training run keeps its axes; 0 fits the longest run. Runs without epochs yet only take a colour.
func TrainingCurves(runs []Curves, epochs int) (*Figure, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("training curves: no run")
	}
	maxLoss := 0.0
	for _, r := range runs {
		epochs = max(epochs, len(r.Epochs))
		for _, e := range r.Epochs {
			if isFinite(e.Loss) {
				maxLoss = math.Max(maxLoss, e.Loss)
			}
		}
	}
	loss := newPlot("training loss (cross-entropy, mean over the epoch)", "epoch", "loss")
	acc := newPlot("accuracy: train (solid), validation (dashed), test (dotted)", "epoch", "accuracy (%)")
	for i, r := range runs {
		c := colorAt(i)
		n := len(r.Epochs)
		xs, ls, tr, va, te := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		hasVal := false
		for j, e := range r.Epochs {
			xs[j], ls[j], tr[j], te[j] = float64(e.Epoch), e.Loss, 100*e.TrainAcc, 100*e.TestAcc
			va[j] = math.NaN()
			if e.ValAcc != nil {
				va[j], hasVal = 100**e.ValAcc, true
			}
		}
		// The legend names every run, with a swatch in its colour, even before its first epoch.
		loss.Legend.Add(r.Label, &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(2)}})
		if n == 0 {
			continue
		}
		if err := firstErr(
			addCurve(loss, xs, ls, "", c, solid, vg.Points(1.5)),
			addPoints(loss, xs, ls, "", c, draw.CircleGlyph{}, vg.Points(2)),
			addCurve(acc, xs, tr, "", c, solid, vg.Points(1.5)),
			addCurve(acc, xs, te, "", c, dotted, vg.Points(1.5)),
			addPoints(acc, xs, te, "", c, draw.CircleGlyph{}, vg.Points(2)),
		); err != nil {
			return nil, err
		}
		if hasVal {
			if err := addCurve(acc, xs, va, "", c, dashed, vg.Points(1.5)); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range []*plot.Plot{loss, acc} {
		p.X.Min, p.X.Max = 1, math.Max(float64(epochs), 2)
		p.X.Tick.Marker = epochTicks{}
	}
	loss.Y.Min, loss.Y.Max = 0, 1.05*maxLoss
	if maxLoss == 0 {
		loss.Y.Max = 1
	}
	acc.Y.Min, acc.Y.Max = 0, 100
	loss.Legend.Top, loss.Legend.Left = false, true // losses fall: the lower left is where they are not
	return sideBySide("05_training_curves",
		"Training curves: loss per epoch (left) and accuracy after each epoch (right; train solid, validation dashed, test dotted), one colour per neuron model.",
		loss, acc, 4.2*vg.Inch), nil
}

// epochTicks puts ticks on whole epochs, at most about ten of them.
type epochTicks struct{}

func (epochTicks) Ticks(lo, hi float64) []plot.Tick {
	step := math.Max(1, math.Ceil((hi-lo)/10))
	var out []plot.Tick
	for e := math.Ceil(lo); e <= hi; e += step {
		out = append(out, plot.Tick{Value: e, Label: fmt.Sprint(e)})
	}
	return out
}

// RasterRun is the activity of one run on some examples, with its label.
type RasterRun struct {
	Label    string
	Activity *analysis.Activity
}

// SpikeRasters is figure 05_spike_raster: for sample s of each run's activity (the same example in
// every run), the input (top row, first column only: a dot wherever a channel has at least one spike in
// the bin) and every hidden layer's spikes (one row per layer, one column per run) against time in ms.
// Panel titles give the layer's mean firing rate in Hz on that example and the predicted class.
func SpikeRasters(runs []RasterRun, s int) (*Figure, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("spike rasters: no run")
	}
	layers := -1
	for _, r := range runs {
		a := r.Activity
		if a == nil || s < 0 || s >= len(a.Index) || len(a.Input) != len(a.Index) {
			return nil, fmt.Errorf("spike rasters: run %q has no sample %d", r.Label, s)
		}
		if layers >= 0 && len(a.Hidden) != layers {
			return nil, fmt.Errorf("spike rasters: run %q has %d hidden layers, another %d", r.Label, len(a.Hidden), layers)
		}
		layers = len(a.Hidden)
	}
	first := runs[0].Activity
	panels := make([][]*plot.Plot, layers+1)
	panels[0] = make([]*plot.Plot, len(runs))
	in, err := rasterPanel(fmt.Sprintf("input, example %d of the %s split (class %d)", first.Index[s], first.Split, first.Labels[s]),
		"channel", first.Input[s], first.Dt, black)
	if err != nil {
		return nil, err
	}
	panels[0][0] = in
	for l := range layers {
		panels[l+1] = make([]*plot.Plot, len(runs))
		for i, r := range runs {
			a := r.Activity
			tr := a.Hidden[l][s : s+1]
			title := fmt.Sprintf("%s · layer %d · %.1f Hz · predicted %d", r.Label, l+1, tr.MeanRate()/a.Dt, a.Predicted[s])
			if panels[l+1][i], err = rasterPanel(title, "neuron", a.Hidden[l][s], a.Dt, colorAt(i)); err != nil {
				return nil, err
			}
		}
	}
	return &Figure{
		Name:    "05_spike_raster",
		Caption: "Spike rasters of the trained networks on one test example: the input (top) and each hidden layer's spikes, one column per neuron model.",
		Panels:  panels,
		Width:   vg.Length(len(runs)) * 4.2 * vg.Inch,
		Height:  vg.Length(layers+1) * 2.8 * vg.Inch,
	}, nil
}

// rasterPanel plots a dot at (time in ms, unit) for every nonzero value of x [time][unit].
func rasterPanel(title, unit string, x [][]float32, dt float64, c color.Color) (*plot.Plot, error) {
	p := newPlot(title, "time (ms)", unit)
	var xs, ys []float64
	units := 0
	for k, row := range x {
		units = max(units, len(row))
		for n, v := range row {
			if v != 0 {
				xs, ys = append(xs, 1000*float64(k)*dt), append(ys, float64(n))
			}
		}
	}
	if err := addBoxes(p, xs, ys, "", c, vg.Points(math.Max(0.6, math.Min(1.6, 100/float64(max(units, 1)))))); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max = 0, 1000*float64(len(x))*dt
	p.Y.Min, p.Y.Max = -0.5, float64(units)-0.5
	return p, nil
}

// addBoxes marks spikes: a small square of the given radius at every (x, y), none without points.
func addBoxes(p *plot.Plot, xs, ys []float64, label string, c color.Color, radius vg.Length) error {
	if len(xs) == 0 {
		return nil
	}
	return addPoints(p, xs, ys, label, c, draw.BoxGlyph{}, radius)
}

// TargetRun is what the hidden layers of one run learned, with its label.
type TargetRun struct {
	Label  string
	Layers []analysis.Layer
}

// TargetHistograms is figure 05_target_histograms: for every run whose neurons have a target frequency
// (rows) and every hidden layer (columns), the histogram of the target frequencies f* at initialization
// (thick light grey: log-spaced, so flat on the log axis) and after training (in colour), over bins
// log-spaced bins shared by all panels; bins ≤ 0 picks about 1.5·√n bins for n neurons per layer
// (between 4 and 30). Targets at or below the lowest bin edge (a
// target clamped to 0 Hz) are counted in the first bin and their number is given in the legend.
func TargetHistograms(runs []TargetRun, bins int) (*Figure, error) {
	lo, hi := math.Inf(1), math.Inf(-1)
	neurons := 0
	var rows []TargetRun
	for _, r := range runs {
		if len(r.Layers) == 0 || r.Layers[0].TargetHz == nil {
			continue
		}
		rows = append(rows, r)
		for _, l := range r.Layers {
			neurons = max(neurons, len(l.TargetHz))
			for _, f := range append(append([]float64(nil), l.InitialHz...), l.TargetHz...) {
				if f > 0 && isFinite(f) {
					lo, hi = math.Min(lo, f), math.Max(hi, f)
				}
			}
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("target histograms: no run with target frequencies")
	}
	if bins <= 0 {
		bins = min(30, max(4, int(math.Round(1.5*math.Sqrt(float64(neurons))))))
	}
	edges := LogBinEdges(lo/1.1, hi*1.1, bins)
	panels := make([][]*plot.Plot, len(rows))
	for i, r := range rows {
		for _, l := range r.Layers {
			if l.TargetHz == nil || l.InitialHz == nil {
				return nil, fmt.Errorf("target histograms: run %q layer %d has no target frequencies", r.Label, l.Index+1)
			}
			p := newPlot(fmt.Sprintf("%s · hidden layer %d: target frequencies f*", r.Label, l.Index+1), "f* (Hz)", "neurons")
			logX(p)
			before, _ := LogHistogram(l.InitialHz, edges)
			after, under := LogHistogram(l.TargetHz, edges)
			label := "after training"
			if under > 0 {
				label += fmt.Sprintf(" (%d at or below %.2g Hz)", under, edges[0])
			}
			if err := firstErr(
				addStep(p, edges, before, "initial (log-spaced)", lightGrey, vg.Points(5)),
				addStep(p, edges, after, label, colorAt(i+2), vg.Points(1.8)),
			); err != nil {
				return nil, err
			}
			top := 0.0
			for j := range before {
				top = math.Max(top, math.Max(before[j], after[j]))
			}
			p.Y.Min, p.Y.Max = 0, 1.25*top
			p.X.Min, p.X.Max = edges[0], edges[len(edges)-1]
			panels[i] = append(panels[i], p)
		}
	}
	cols := 0
	for _, r := range panels {
		cols = max(cols, len(r))
	}
	return &Figure{
		Name:    "05_target_histograms",
		Caption: "Target frequencies f* of each hidden layer before (light grey, log-spaced initialization) and after training, one row per neuron model with a target frequency.",
		Panels:  panels,
		Width:   vg.Length(cols) * 5.5 * vg.Inch,
		Height:  vg.Length(len(rows)) * 3.2 * vg.Inch,
	}, nil
}

// LogBinEdges returns n+1 bin edges spaced evenly on a log scale over [lo, hi] (0 < lo < hi).
func LogBinEdges(lo, hi float64, n int) []float64 {
	edges := make([]float64, n+1)
	for i := range edges {
		edges[i] = lo * math.Pow(hi/lo, float64(i)/float64(n))
	}
	edges[n] = hi
	return edges
}

// LogHistogram counts values in the bins [edges[i], edges[i+1]) (the last bin includes its upper edge).
// Values below edges[0] (including 0 and negative values) are counted in the first bin and values above
// the last edge in the last bin; under is the number of values at or below edges[0]. NaN values are
// skipped.
func LogHistogram(values, edges []float64) (counts []float64, under int) {
	n := len(edges) - 1
	counts = make([]float64, n)
	for _, v := range values {
		if math.IsNaN(v) {
			continue
		}
		if v <= edges[0] {
			under++
		}
		i := 0
		for i < n-1 && v >= edges[i+1] {
			i++
		}
		counts[i]++
	}
	return counts, under
}

var lightGrey = color.RGBA{0xc8, 0xc8, 0xc8, 0xff}

// addStep draws a histogram's outline: counts over the bins between consecutive edges.
func addStep(p *plot.Plot, edges, counts []float64, label string, c color.Color, width vg.Length) error {
	xs := make([]float64, 0, 2*len(counts)+2)
	ys := make([]float64, 0, 2*len(counts)+2)
	xs, ys = append(xs, edges[0]), append(ys, 0)
	for i, n := range counts {
		xs = append(xs, edges[i], edges[i+1])
		ys = append(ys, n, n)
	}
	xs, ys = append(xs, edges[len(edges)-1]), append(ys, 0)
	return addCurve(p, xs, ys, label, c, solid, width)
}

// FigureHTML returns an <img> element showing fig as a PNG rendered at 2×96 dpi and drawn at the
// figure's size (96 CSS pixels per inch, never wider than the output area): what a notebook can show,
// and replace in place while training runs (gonbdisplay.UpdateFigure).
func FigureHTML(fig *Figure) (string, error) {
	png, err := fig.PNG(192)
	if err != nil {
		return "", err
	}
	w, _ := fig.Size()
	return fmt.Sprintf(`<img alt="%s" style="width:%.0fpx;max-width:100%%" src="data:image/png;base64,%s">`,
		html.EscapeString(fig.Name), float64(w/vg.Inch)*96, base64.StdEncoding.EncodeToString(png)), nil
}
