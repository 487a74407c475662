package nb

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
	"gonum.org/v1/plot"
)

// checkRenders renders fig as PNG and SVG and checks that every panel has a title and axis labels and
// that the SVG holds each wanted text.
func checkRenders(t *testing.T, fig *Figure, want ...string) {
	t.Helper()
	png, err := fig.PNG(50)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, pngMagic) {
		t.Error("not a PNG")
	}
	svg, err := fig.SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range fig.Panels {
		for _, p := range row {
			if p.Title.Text == "" || p.Y.Label.Text == "" {
				t.Errorf("panel without title or y label: %q / %q", p.Title.Text, p.Y.Label.Text)
			}
		}
	}
	if fig.Caption == "" {
		t.Error("no caption")
	}
	for _, w := range want {
		if !bytes.Contains(svg, []byte(w)) {
			t.Errorf("SVG lacks %q", w)
		}
	}
}

func TestHistogramFigure(t *testing.T) {
	fig, err := HistogramFigure("08_test", "Two layers.", []HistogramPanel{
		{Title: "β", XLabel: "β", Lo: -1, Hi: 1, Bins: 10, Hists: []Hist{{"layer 1", []float64{-0.5, 0, 0.1, 2}}, {"layer 2", []float64{0.3, math.NaN()}}}},
		{Title: "f*", XLabel: "f* (Hz)", LogX: true, Normalize: true, Hists: []Hist{{"layer 1", []float64{1, 10, 50}}}},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels) != 1 || len(fig.Panels[0]) != 2 {
		t.Fatalf("layout %d×%d", len(fig.Panels), len(fig.Panels[0]))
	}
	if got := fig.Panels[0][1].Y.Label.Text; got != "fraction" {
		t.Errorf("normalized y label %q", got)
	}
	checkRenders(t, fig, "layer 1 (n = 4)", "layer 2 (n = 1)", "f* (Hz)")
	for _, bad := range []HistogramPanel{
		{Title: "empty"},
		{Title: "no finite", Hists: []Hist{{"x", []float64{math.NaN()}}}},
		{Title: "bad range", Lo: 2, Hi: 1, Hists: []Hist{{"x", []float64{1}}}},
		{Title: "log of zero", LogX: true, Lo: 0, Hi: 1e-9, Hists: []Hist{{"x", []float64{0}}}},
	} {
		if _, err := HistogramFigure("08_bad", "bad", []HistogramPanel{bad}, 0); err == nil {
			t.Errorf("panel %q accepted", bad.Title)
		}
	}
}

func TestCurveFigure(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	fig, err := CurveFigure("08_curves", "Shifts.", []CurvePanel{
		{Title: "TS alone", XLabel: "f (Hz)", YLabel: "Δτ (ms)", ZeroLine: true, VLines: []float64{2.5},
			Curves: []Curve{{Label: "layer 1", X: x, Y: []float64{1, -1, 0, math.NaN()}, Lo: []float64{0, -2, -1, 0}, Hi: []float64{2, 0, 1, 0}}}},
		{Title: "closed loop", XLabel: "f (Hz)", YLabel: "Δτ (ms)", LogX: true, YMin: -5, YMax: 5,
			Curves: []Curve{{Label: "layer 2", X: x, Y: x, Dashed: true}}},
		{Title: "third", XLabel: "f (Hz)", YLabel: "y", LogY: true, Curves: []Curve{{Label: "c", X: x, Y: x}}},
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels) != 2 || len(fig.Panels[0]) != 2 || len(fig.Panels[1]) != 1 {
		t.Fatalf("layout: %d rows", len(fig.Panels))
	}
	if p := fig.Panels[0][1]; p.Y.Min != -5 || p.Y.Max != 5 {
		t.Errorf("y range %g..%g", p.Y.Min, p.Y.Max)
	}
	checkRenders(t, fig, "layer 1", "layer 2", "Δτ (ms)")
	if _, err := CurveFigure("08_bad", "bad", []CurvePanel{{Title: "band", Curves: []Curve{{Label: "c", X: x, Y: x, Lo: x[:2], Hi: x}}}}, 0); err == nil {
		t.Error("band of the wrong length accepted")
	}
	if _, err := CurveFigure("08_bad", "bad", nil, 0); err == nil {
		t.Error("figure without panels accepted")
	}
}

func TestScatterFigure(t *testing.T) {
	fig, err := ScatterFigure("10_scatter", "CT vs DT.", []ScatterPanel{{Title: "targets", XLabel: "f*_CT (Hz)", YLabel: "f*_DT (Hz)", Identity: true,
		Points: []Points{{"layer 1", []float64{1, 10, 40}, []float64{1, 9.9, 38}}, {"layer 2", []float64{2}, []float64{2}}}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRenders(t, fig, "y = x", "layer 1 (n = 3)", "layer 2 (n = 1)")
	if _, err := ScatterFigure("10_bad", "bad", []ScatterPanel{{Title: "x", Points: []Points{{"a", []float64{1}, nil}}}}, 0); err == nil {
		t.Error("mismatched points accepted")
	}
}

func TestResultFigure(t *testing.T) {
	root := t.TempDir()
	e, err := experiment.Lookup("ssc/fs/w512")
	if err != nil {
		t.Fatal(err)
	}
	writeResult(t, experiment.RunDir(root, e.ID, 1), e, experiment.Quick, 1, e.Quick.Epochs)
	tr, err := experiment.Aggregate(root, "Table 3", experiment.Quick)
	if err != nil {
		t.Fatal(err)
	}
	fig, err := ResultFigure("07_table3", tr)
	if err != nil {
		t.Fatal(err)
	}
	// Only the W = 512 column holds a run of ours.
	if len(fig.Panels) != 1 || len(fig.Panels[0]) != 1 || !strings.Contains(fig.Panels[0][0].Title.Text, "W = 512") {
		t.Fatalf("panels: %d, title %q", len(fig.Panels[0]), fig.Panels[0][0].Title.Text)
	}
	ticks := fig.Panels[0][0].X.Tick.Marker.(plot.ConstantTicks)
	if len(ticks) != 6 || ticks[0].Label != "Plain LIF" {
		t.Errorf("ticks %v", ticks)
	}
	checkRenders(t, fig, "paper (mean ± std)", "stand-in data")

	// No run at all: every column, paper values only.
	empty, err := experiment.Aggregate(t.TempDir(), "Table A.10", experiment.Full)
	if err != nil {
		t.Fatal(err)
	}
	fig, err = ResultFigure("12_tableA10", empty)
	if err != nil {
		t.Fatal(err)
	}
	checkRenders(t, fig, "paper (mean ± std)", "Plain LIF")
}

func TestLadderTable(t *testing.T) {
	root := t.TempDir()
	acc := map[string]float64{"lif": 0.125, "adaptlif": 0.125, "fs-frozen": 1, "fs": 1, "fsts-m1": 0.99, "fsts-m2": 1}
	for model, a := range acc {
		e, err := experiment.Lookup("ssc/" + model + "/w512")
		if err != nil {
			t.Fatal(err)
		}
		dir := experiment.RunDir(root, e.ID, 1)
		writeResult(t, dir, e, experiment.Quick, 1, e.Quick.Epochs)
		r, err := train.ReadResult(dir)
		if err != nil {
			t.Fatal(err)
		}
		r.TestAccAtBestVal = &a
		b, _ := json.Marshal(r)
		if err := os.WriteFile(filepath.Join(dir, train.ResultFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := experiment.Aggregate(root, "Table 3", experiment.Quick)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := LadderTable(tr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tab.Caption, "Table 3 · the ablation ladder under the official-val protocol") {
		t.Errorf("caption %q", tab.Caption)
	}
	// GSC's quick stand-in has no official validation split: it holds out part of its training set.
	gsc, err := experiment.Aggregate(root, "Table A.5", experiment.Quick)
	if err != nil {
		t.Fatal(err)
	}
	if got := protocolOf(gsc); got != " (the paper's under the official-val protocol, ours under val-split)" {
		t.Errorf("Table A.5 in quick mode: %q", got)
	}
	// Four paper rows (one per width) and ours at W = 512.
	if len(tab.Rows) != 5 {
		t.Fatalf("%d rows: %v", len(tab.Rows), tab.Rows)
	}
	ours := tab.Rows[4]
	want := []string{"512", "ours", "12.50", "12.50", "100.00", "100.00", "100.00", "+0.00", "+87.50", "+0.00", "+0.00", "yes"}
	if !slices.Equal(ours, want) {
		t.Errorf("ours %q, want %q", ours, want)
	}
	for _, r := range tab.Rows[:4] {
		if r[1] != "paper" || r[len(r)-1] != "yes" {
			t.Errorf("the paper's own ladder does not hold its ordering: %q", r)
		}
	}
	if _, err := LadderTable(&experiment.TableResult{Label: "Table 3", Columns: []string{"64"}}); err == nil {
		t.Error("a table without the four models accepted")
	}
}
