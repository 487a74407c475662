package nb

import (
	"bytes"
	"encoding/base64"
	"math"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
)

func epochs(n int, withVal bool) []train.Epoch {
	var out []train.Epoch
	for i := range n {
		e := train.Epoch{Epoch: i + 1, Loss: 2 / float64(i+1), TrainAcc: 0.1 * float64(i+1), TestAcc: 0.08 * float64(i+1)}
		if withVal {
			v := 0.09 * float64(i+1)
			e.ValAcc = &v
		}
		out = append(out, e)
	}
	return out
}

// render checks that fig renders to a plausible SVG and PNG and returns the SVG.
func render(t *testing.T, fig *Figure) string {
	t.Helper()
	svg, err := fig.SVG()
	if err != nil {
		t.Fatal(err)
	}
	png, err := fig.PNG(72)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, pngMagic) || !bytes.Contains(svg, []byte("</svg>")) {
		t.Fatalf("%s: not a PNG and an SVG", fig.Name)
	}
	return string(svg)
}

func TestTrainingCurves(t *testing.T) {
	for _, tc := range []struct {
		name   string
		runs   []Curves
		epochs int
		wantX  float64
		err    bool
	}{
		{"two finished runs", []Curves{{"lif", epochs(5, true)}, {"fs", epochs(5, true)}}, 0, 5, false},
		{"live: one run in progress", []Curves{{"lif", epochs(20, false)}, {"fs", epochs(3, false)}}, 20, 20, false},
		{"live: before the first epoch", []Curves{{"fsts M=1", nil}}, 20, 20, false},
		{"longer than planned", []Curves{{"lif", epochs(7, true)}}, 4, 7, false},
		{"no run", nil, 3, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fig, err := TrainingCurves(tc.runs, tc.epochs)
			if erred(t, err, tc.err) {
				return
			}
			if fig.Name != "05_training_curves" || len(fig.Panels) != 1 || len(fig.Panels[0]) != 2 {
				t.Fatalf("figure %s with %d rows", fig.Name, len(fig.Panels))
			}
			loss, acc := fig.Panels[0][0], fig.Panels[0][1]
			if loss.X.Max != tc.wantX || acc.X.Max != tc.wantX || loss.X.Min != 1 {
				t.Errorf("x range [%g, %g], want [1, %g]", loss.X.Min, loss.X.Max, tc.wantX)
			}
			if acc.Y.Min != 0 || acc.Y.Max != 100 {
				t.Errorf("accuracy axis [%g, %g], want [0, 100]", acc.Y.Min, acc.Y.Max)
			}
			maxLoss := 0.0
			for _, r := range tc.runs {
				for _, e := range r.Epochs {
					maxLoss = math.Max(maxLoss, e.Loss)
				}
			}
			if maxLoss > 0 && (loss.Y.Max < maxLoss || loss.Y.Max > 1.1*maxLoss) {
				t.Errorf("loss axis up to %g, the largest loss is %g", loss.Y.Max, maxLoss)
			}
			svg := render(t, fig)
			for _, r := range tc.runs {
				if !strings.Contains(svg, r.Label) {
					t.Errorf("legend lacks %q", r.Label)
				}
			}
		})
	}
}

func TestCurvesOfAndRunLabel(t *testing.T) {
	r := &train.Result{Model: "fsts", M: 2, Epochs: epochs(2, false)}
	c := CurvesOf(r)
	if c.Label != "fsts M=2" || len(c.Epochs) != 2 {
		t.Errorf("%+v", c)
	}
	if RunLabel("fs", 0) != "fs" {
		t.Error(RunLabel("fs", 0))
	}
}

// activity returns an activity of 2 samples, 10 bins of 4 ms, 5 inputs and two layers of 3 neurons;
// neuron n of every layer fires in the bins k with k % (n+1) == 0 in sample 1.
func activity() *analysis.Activity {
	mk := func(units int, on func(s, k, n int) bool) analysis.Trains {
		tr := make(analysis.Trains, 2)
		for s := range tr {
			tr[s] = make([][]float32, 10)
			for k := range tr[s] {
				tr[s][k] = make([]float32, units)
				for n := range units {
					if on(s, k, n) {
						tr[s][k][n] = 1
					}
				}
			}
		}
		return tr
	}
	hidden := func(s, k, n int) bool { return s == 1 && k%(n+1) == 0 }
	return &analysis.Activity{
		Split: analysis.SplitTest, Index: []int{4, 9}, Dt: 0.004, Labels: []int{1, 2}, Predicted: []int{1, 0},
		Input:  mk(5, func(s, k, n int) bool { return (k+n)%3 == 0 }),
		Hidden: []analysis.Trains{mk(3, hidden), mk(3, hidden)},
	}
}

func TestSpikeRasters(t *testing.T) {
	a := activity()
	fig, err := SpikeRasters([]RasterRun{{"lif", a}, {"fs", a}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels) != 3 || len(fig.Panels[0]) != 2 || fig.Panels[0][1] != nil || fig.Panels[2][1] == nil {
		t.Fatalf("panels %v: want the input in the first row, first column, and 2 layers × 2 runs", fig.Panels)
	}
	p := fig.Panels[1][0]
	if p.X.Min != 0 || p.X.Max != 40 || p.Y.Max != 2.5 {
		t.Errorf("raster axes [%g, %g] ms × up to %g", p.X.Min, p.X.Max, p.Y.Max)
	}
	// Sample 1 of layer 1: 10 + 5 + 4 spikes in 3 neurons × 10 bins of 4 ms: 19/30 per bin / 0.004 s = 158.3 Hz.
	if want := "158.3 Hz"; !strings.Contains(p.Title.Text, want) || !strings.Contains(p.Title.Text, "predicted 0") {
		t.Errorf("title %q, want the rate %s and the prediction", p.Title.Text, want)
	}
	if !strings.Contains(fig.Panels[0][0].Title.Text, "example 9 of the test split (class 2)") {
		t.Errorf("input title %q", fig.Panels[0][0].Title.Text)
	}
	render(t, fig)

	for name, runs := range map[string][]RasterRun{
		"no run":          nil,
		"nil activity":    {{"lif", nil}},
		"layers disagree": {{"lif", a}, {"fs", &analysis.Activity{Index: a.Index, Input: a.Input, Hidden: a.Hidden[:1]}}},
	} {
		if _, err := SpikeRasters(runs, 0); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := SpikeRasters([]RasterRun{{"lif", a}}, 2); err == nil {
		t.Error("sample out of range: want an error")
	}
}

func TestLogHistogram(t *testing.T) {
	edges := LogBinEdges(1, 100, 2) // [1, 10), [10, 100]
	if math.Abs(edges[1]-10) > 1e-12 || edges[2] != 100 {
		t.Fatalf("edges %v", edges)
	}
	for _, tc := range []struct {
		name   string
		values []float64
		want   []float64
		under  int
	}{
		{"inside", []float64{1, 2, 9.99, 10, 50, 100}, []float64{3, 3}, 1},
		{"clamped to zero and above", []float64{0, -1, 1000}, []float64{2, 1}, 2},
		{"NaN skipped", []float64{math.NaN(), 5}, []float64{1, 0}, 0},
		{"empty", nil, []float64{0, 0}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, under := LogHistogram(tc.values, edges)
			if under != tc.under || len(got) != 2 || got[0] != tc.want[0] || got[1] != tc.want[1] {
				t.Errorf("counts %v, %d under; want %v, %d", got, under, tc.want, tc.under)
			}
		})
	}
}

func TestTargetHistograms(t *testing.T) {
	init := []float64{1, 2, 4, 8, 16, 32}
	learned := []float64{0, 1.5, 3, 3, 20, 60}
	layer := func(i int, ts bool) analysis.Layer {
		l := analysis.Layer{Index: i, Neuron: neuron.DefaultConfig(neuron.FS, 0), Neurons: 6, InitialHz: init, TargetHz: learned}
		if ts {
			l.Beta, l.Lambda = [][]float64{make([]float64, 6)}, [][]float64{make([]float64, 6)}
		}
		return l
	}
	runs := []TargetRun{
		{"lif", []analysis.Layer{{Index: 0}, {Index: 1}}}, // no f*: skipped
		{"fs", []analysis.Layer{layer(0, false), layer(1, false)}},
		{"fsts M=1", []analysis.Layer{layer(0, true), layer(1, true)}},
	}
	fig, err := TargetHistograms(runs, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels) != 2 || len(fig.Panels[0]) != 2 {
		t.Fatalf("%d rows, want 2 (runs with f*) × 2 layers", len(fig.Panels))
	}
	p := fig.Panels[1][1]
	if !strings.Contains(p.Title.Text, "fsts M=1 · hidden layer 2") {
		t.Errorf("title %q", p.Title.Text)
	}
	if lo, hi := p.X.Min, p.X.Max; math.Abs(lo-1/1.1) > 1e-12 || math.Abs(hi-66) > 1e-9 {
		t.Errorf("x range [%g, %g], want [1/1.1, 60·1.1]", lo, hi)
	}
	svg := render(t, fig)
	if !strings.Contains(svg, "1 at or below") {
		t.Error("legend does not count the target clamped to 0 Hz")
	}
	if _, err := TargetHistograms(runs[1:], 0); err != nil {
		t.Errorf("automatic bins: %v", err)
	}
	if _, err := TargetHistograms(runs[:1], 0); err == nil {
		t.Error("no run with f*: want an error")
	}
}

func TestFigureHTML(t *testing.T) {
	fig, err := TrainingCurves([]Curves{{"lif", epochs(2, false)}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	h, err := FigureHTML(fig)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "data:image/png;base64,"
	i := strings.Index(h, prefix)
	if !strings.HasPrefix(h, `<img alt="05_training_curves" style="width:1152px;`) || i < 0 {
		t.Fatalf("html %.120q", h)
	}
	png, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(h[i+len(prefix):], `">`))
	if err != nil || !bytes.HasPrefix(png, pngMagic) {
		t.Errorf("embedded image is not a PNG: %v", err)
	}
	if _, err := FigureHTML(&Figure{Name: "empty"}); err == nil {
		t.Error("figure without panels accepted")
	}
}

// CurvesOf returns the curves of a finished run, labelled RunLabel(r.Model, r.M).
func CurvesOf(r *train.Result) Curves {
	return Curves{Label: RunLabel(r.Model, r.M), Epochs: r.Epochs}
}
