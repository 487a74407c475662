package nb

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/experiment"
)

// shiftReport is a group of two seeds of two layers: layer 1's targets move up by 0.5 Hz in seed 1 and
// 1.5 Hz in seed 2, layer 2's down by d2 Hz in both (two neurons each, initial targets 2 and 8 Hz): layer 1's
// median log ratio is the mean of log₂(9.5/8) and log₂(2.5/2), 0.285 octaves.
func shiftReport(d2 float64) *analysis.ShiftReport {
	key := analysis.GroupKey{Dataset: "gsc", Model: "fsts", M: 1, Width: 2}
	g := analysis.ShiftGroup{Key: key}
	shift := func(layer int, d float64) analysis.LayerShifts {
		l := analysis.LayerShifts{Layer: layer, InitialHz: []float64{2, 8}}
		for _, f0 := range l.InitialHz {
			l.LearnedHz = append(l.LearnedHz, f0+d)
			l.DeltaHz = append(l.DeltaHz, d)
			l.LogRatio = append(l.LogRatio, log2(f0+d)-log2(f0))
		}
		l.Delta = analysis.Summarize(l.DeltaHz)
		return l
	}
	for s, d1 := range []float64{0.5, 1.5} {
		g.Runs = append(g.Runs, analysis.RunShifts{Seed: int64(s + 1), Layers: []analysis.LayerShifts{shift(0, d1), shift(1, -d2)}})
	}
	for li := range 2 {
		var all, ratio, means []float64
		for _, r := range g.Runs {
			all, ratio, means = append(all, r.Layers[li].DeltaHz...), append(ratio, r.Layers[li].LogRatio...), append(means, r.Layers[li].Delta.Mean)
		}
		g.Layers = append(g.Layers, analysis.LayerShiftSummary{Layer: li, Delta: analysis.Summarize(all), LogRatio: analysis.Summarize(ratio), SeedMean: analysis.Summarize(means)})
	}
	return &analysis.ShiftReport{Groups: []analysis.ShiftGroup{g}}
}

func TestFigure2Left(t *testing.T) {
	for _, tc := range []struct {
		d2      float64
		verdict string
	}{{1, "holds here"}, {-3, "does not hold here"}} {
		out, err := figure2Left(shiftReport(tc.d2), oursIn(experiment.Quick), "official-val")
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Tables) != 1 || len(out.Figures) != 1 || len(out.Notes) != 1 || out.Figures[0].Name != "08_fig2_left_target_shifts" {
			t.Fatalf("output %+v", out)
		}
		tab := out.Tables[0]
		if !strings.Contains(tab.Caption, "gsc fsts M=1 W=2, official-val protocol, 2 seeds (ours: quick mode") {
			t.Errorf("caption %q", tab.Caption)
		}
		if want := []string{"1", "4", "+1.000", "+1.000", "+1.000 ± 0.707", "+0.285", "0"}; !slices.Equal(tab.Rows[0], want) {
			t.Errorf("layer 1 %q, want %q", tab.Rows[0], want)
		}
		if down := tab.Rows[1][6]; (tc.d2 > 0) != (down == "100") {
			t.Errorf("layer 2 moved down: %s %%", down)
		}
		if !strings.Contains(out.Notes[0], tc.verdict) {
			t.Errorf("Δf2 = %g: note %q, want %q", -tc.d2, out.Notes[0], tc.verdict)
		}
	}
	if _, err := Figure2Left(nil, experiment.Quick); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs: %v", err)
	}
}

func TestFigure2Right(t *testing.T) {
	// One layer, three grid points, 4 ms per sample: the TS shift changes sign once, the closed loop never.
	curves := func(mean ...float64) analysis.DelayCurves {
		return analysis.DelayCurves{SeedMean: mean, SeedStd: make([]float64, len(mean))}
	}
	rep := func(ref analysis.DelayReference) *analysis.DelayReport {
		return &analysis.DelayReport{Reference: ref, Groups: []analysis.DelayGroup{{FrequencyHz: []float64{1, 10, 100},
			Layers: []analysis.LayerDelays{{Layer: 0, Neurons: 8, Unstable: 1, MsPerSample: 4, TS: curves(0.5, -1, -0.25), ClosedLoop: curves(0.1, 0.2, 2)}}}}}
	}
	out, err := figure2Right([]*analysis.DelayReport{rep(analysis.DelayVsIdentity), rep(analysis.DelayVsInit)}, oursIn(experiment.Full), "official-val")
	if err != nil {
		t.Fatal(err)
	}
	rows := out.Tables[0].Rows
	want := [][]string{
		{"identity", "TS module alone", "1", "4.000", "10.0", "1", "8", "1"},
		{"identity", "closed-loop neuron", "1", "8.000", "100.0", "0", "8", "1"},
	}
	if len(rows) != 4 || !slices.Equal(rows[0], want[0]) || !slices.Equal(rows[1], want[1]) || rows[2][0] != "init" {
		t.Errorf("rows %q", rows)
	}
	if fig := out.Figures[0]; fig.Name != "08_fig2_right_delay_shifts" || len(fig.Panels) != 2 || len(fig.Panels[0]) != 2 {
		t.Errorf("figure %s with %d rows", fig.Name, len(fig.Panels))
	}
	if !strings.Contains(out.Tables[0].Caption, "official-val protocol (ours: full mode") {
		t.Errorf("caption %q", out.Tables[0].Caption)
	}
	if _, err := figure2Right([]*analysis.DelayReport{{Reference: analysis.DelayVsInit}}, oursIn(experiment.Full), ""); err == nil {
		t.Error("a report without groups was accepted")
	}
}

func TestFigureA2(t *testing.T) {
	stage := func(beta, lambda []float64) analysis.StageParams {
		return analysis.StageParams{Stage: 1, Beta: beta, Lambda: lambda, BetaSummary: analysis.Summarize(beta), LambdaSummary: analysis.Summarize(lambda)}
	}
	s1 := stage([]float64{-0.2, 0, 0.2}, []float64{0.05, 0.1, 0.3})
	layers := []analysis.LayerTSParams{{Layer: 0, Stages: []analysis.StageParams{s1}}, {Layer: 1, Stages: []analysis.StageParams{s1}}}
	rep := &analysis.TSParamReport{Groups: []analysis.TSParamGroup{{Key: analysis.GroupKey{Dataset: "gsc", Model: "fsts", M: 1, Width: 3},
		Runs: []analysis.RunTSParams{{Dir: "runs/seed-1", Seed: 1, Layers: layers}}, Pooled: layers}}}
	out, err := figureA2(rep, oursIn(experiment.Quick), "official-val")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2", "1", "+0.000 ± 0.200", "+0.000 [-0.200, +0.200]", "0.150 ± 0.132", "0.100 [0.050, 0.300]"}
	if rows := out.Tables[0].Rows; len(rows) != 2 || !slices.Equal(rows[1], want) {
		t.Errorf("rows %q, want the second %q", rows, want)
	}
	fig := out.Figures[0]
	if fig.Name != "08_figA2_beta_lambda" || !strings.Contains(fig.Caption, "runs/seed-1") {
		t.Errorf("figure %s: %q", fig.Name, fig.Caption)
	}
	render(t, fig)
	if _, err := figureA2(&analysis.TSParamReport{}, oursIn(experiment.Quick), ""); err == nil {
		t.Error("an empty report was accepted")
	}
	if _, err := FigureA2(nil, experiment.Quick); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs: %v", err)
	}
}

func log2(x float64) float64 { return math.Log2(x) }
