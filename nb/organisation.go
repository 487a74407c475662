package nb

import (
	"fmt"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/experiment"
)

// Notebook 08 (learned organisation): the paper's Figure 2 (target-frequency shifts Δf* and group-delay
// shifts Δτ per hidden layer, Section 5.1) and Figure A.2 (learned β and λ, Appendix C) from the runs'
// checkpoints, through fits/analysis. The paper publishes these as figures without numbers: each output
// compares the shape of ours with the paper's statements.

// oursIn is how the captions of notebook 08 name the source of the runs of a mode ("ours: quick mode").
func oursIn(mode experiment.Mode) string { return fmt.Sprintf("ours: %s mode", mode) }

// protocolOfRuns names the model-selection protocol of runs ("official-val"), "" for none.
func protocolOfRuns(runs []*analysis.Run) string {
	if len(runs) == 0 {
		return ""
	}
	return string(runs[0].Config.Protocol)
}

// Figure2Left is the left half of Figure 2 from runs (analysis.TargetShifts): per group of seeds, a table
// of the shifts Δf* = f*_learned − f*_init per hidden layer (Hz; pooled over the neurons of all seeds, and
// the per-seed mean as mean ± std over seeds) with the median log₂(f*_learned / f*_init) in octaves and the
// share of neurons that moved down; the histograms of both (figure 08_fig2_left_target_shifts); and the
// paper's reading (the second layer shifts more strongly toward lower targets than the first) checked on
// the per-seed means. An error wrapping ErrNoRuns when runs is empty.
func Figure2Left(runs []*analysis.Run, mode experiment.Mode) (*Output, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("Figure 2: %w", ErrNoRuns)
	}
	return figure2LeftOfRuns(runs, oursIn(mode))
}

// figure2LeftOfRuns is Figure2Left of runs, whose source the captions name ("ours: quick mode").
func figure2LeftOfRuns(runs []*analysis.Run, source string) (*Output, error) {
	rep, err := analysis.TargetShifts(runs, analysis.ShiftOptions{})
	if err != nil {
		return nil, err
	}
	return figure2Left(rep, source, protocolOfRuns(runs))
}

func figure2Left(rep *analysis.ShiftReport, source, protocol string) (*Output, error) {
	out := &Output{}
	for _, g := range rep.Groups {
		var dHz, ratio []Hist
		t := Table{Caption: fmt.Sprintf("Figure 2, left · Δf* per layer, %s, %s protocol, %d seeds (%s; the paper publishes the figure only)", g.Key, protocol, len(g.Runs), source),
			Header: []string{"layer", "neurons (all seeds)", "mean Δf* (Hz)", "median Δf* (Hz)", "per-seed mean Δf* (Hz), mean ± std", "median log₂ ratio (octaves)", "moved down (%)"}}
		for li, l := range g.Layers {
			var d, lr []float64
			for _, r := range g.Runs {
				d = append(d, r.Layers[li].DeltaHz...)
				lr = append(lr, r.Layers[li].LogRatio...)
			}
			down := 0
			for _, v := range d {
				if v < 0 {
					down++
				}
			}
			name := fmt.Sprintf("hidden layer %d", l.Layer+1)
			dHz, ratio = append(dHz, Hist{Label: name, Values: d}), append(ratio, Hist{Label: name, Values: lr})
			t.Rows = append(t.Rows, []string{fmt.Sprint(l.Layer + 1), fmt.Sprint(l.Delta.N), fmt.Sprintf("%+.3f", l.Delta.Mean), fmt.Sprintf("%+.3f", l.Delta.Median),
				fmt.Sprintf("%+.3f ± %.3f", l.SeedMean.Mean, l.SeedMean.Std), fmt.Sprintf("%+.3f", l.LogRatio.Median), fmt.Sprintf("%.0f", 100*float64(down)/float64(max(len(d), 1)))})
		}
		fig, err := HistogramFigure("08_fig2_left_target_shifts",
			fmt.Sprintf("Figure 2, left (%s): learned target-frequency shifts of the FS module per hidden layer, pooled over %d seeds.", source, len(g.Runs)),
			[]HistogramPanel{
				{Title: "Figure 2 left · Δf* = f*_learned − f*_init", XLabel: "Δf* (Hz)", YLabel: "neurons (fraction)", Normalize: true, Bins: 30, Hists: dHz},
				{Title: "the same as a log ratio", XLabel: "log₂(f*_learned / f*_init) (octaves)", YLabel: "neurons (fraction)", Normalize: true, Bins: 30, Hists: ratio},
			}, 0)
		if err != nil {
			return nil, err
		}
		out.Tables, out.Figures = append(out.Tables, t), append(out.Figures, fig)
		if len(g.Layers) >= 2 {
			l1, l2 := g.Layers[0].SeedMean.Mean, g.Layers[1].SeedMean.Mean
			verdict := "does not hold here"
			if l2 < l1 && l2 < 0 {
				verdict = "holds here"
			}
			out.Notes = append(out.Notes, fmt.Sprintf("**The paper's reading** — the second layer shifts more strongly toward lower targets than the first — %s: mean shift per seed %+.3f Hz (layer 1) vs %+.3f Hz (layer 2).", verdict, l1, l2))
		}
	}
	return out, nil
}

// The two systems whose group-delay shifts Figure2Right draws.
const (
	systemTS         = "TS module alone"
	systemClosedLoop = "closed-loop neuron"
)

// Figure2Right is the right half of Figure 2 from runs (analysis.DelayShifts against the identity and
// against the initialization): for the first group of seeds, per reference and system (the TS module
// alone, the closed-loop neuron of Algorithm 1) a panel of each hidden layer's mean Δτ(f) over seeds ± the
// std over seeds, in ms against f in Hz up to Nyquist (figure 08_fig2_right_delay_shifts), and a table of
// the largest |mean Δτ| per layer and where, its sign changes over f, the neurons pooled and the unstable
// closed loops. An error wrapping ErrNoRuns when runs is empty.
func Figure2Right(runs []*analysis.Run, mode experiment.Mode) (*Output, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("Figure 2: %w", ErrNoRuns)
	}
	return figure2RightOfRuns(runs, oursIn(mode))
}

// figure2RightOfRuns is Figure2Right of runs, whose source the captions name ("ours: quick mode").
func figure2RightOfRuns(runs []*analysis.Run, source string) (*Output, error) {
	var reps []*analysis.DelayReport
	for _, ref := range []analysis.DelayReference{analysis.DelayVsIdentity, analysis.DelayVsInit} {
		rep, err := analysis.DelayShifts(runs, analysis.DelayOptions{Reference: ref})
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return figure2Right(reps, source, protocolOfRuns(runs))
}

func figure2Right(reps []*analysis.DelayReport, source, protocol string) (*Output, error) {
	var panels []CurvePanel
	summary := Table{Caption: fmt.Sprintf("Figure 2, right · largest mean |Δτ| per layer (ms) and where (Hz), %s protocol (%s; the paper publishes the figure only)", protocol, source),
		Header: []string{"reference", "system", "layer", "max |mean Δτ| (ms)", "at f (Hz)", "sign changes over f", "neurons", "unstable closed loops"}}
	for _, rep := range reps {
		if len(rep.Groups) == 0 {
			return nil, fmt.Errorf("Figure 2, right: no group of runs against the %s", rep.Reference)
		}
		g := rep.Groups[0]
		for _, sys := range []string{systemTS, systemClosedLoop} {
			p := CurvePanel{Title: fmt.Sprintf("Figure 2 right · %s · vs %s", sys, rep.Reference), XLabel: "f (Hz)", YLabel: "Δτ (ms)", ZeroLine: true}
			for _, l := range g.Layers {
				c := l.TS
				if sys == systemClosedLoop {
					c = l.ClosedLoop
				}
				y, lo, hi := make([]float64, len(c.SeedMean)), make([]float64, len(c.SeedMean)), make([]float64, len(c.SeedMean))
				best, at, flips := 0.0, 0.0, 0
				for i := range y {
					y[i] = l.MsPerSample * c.SeedMean[i]
					lo[i], hi[i] = y[i]-l.MsPerSample*c.SeedStd[i], y[i]+l.MsPerSample*c.SeedStd[i]
					if a := max(y[i], -y[i]); a > best {
						best, at = a, g.FrequencyHz[i]
					}
					if i > 0 && y[i]*y[i-1] < 0 {
						flips++
					}
				}
				p.Curves = append(p.Curves, Curve{Label: fmt.Sprintf("hidden layer %d", l.Layer+1), X: g.FrequencyHz, Y: y, Lo: lo, Hi: hi})
				summary.Rows = append(summary.Rows, []string{string(rep.Reference), sys, fmt.Sprint(l.Layer + 1), fmt.Sprintf("%.3f", best), fmt.Sprintf("%.1f", at),
					fmt.Sprint(flips), fmt.Sprint(l.Neurons), fmt.Sprint(l.Unstable)})
			}
			panels = append(panels, p)
		}
	}
	fig, err := CurveFigure("08_fig2_right_delay_shifts",
		fmt.Sprintf("Figure 2, right (%s): learned group-delay shifts per hidden layer, mean ± std over seeds; TS module alone (left) and the closed-loop neuron (right), against the identity (top) and the initialization (bottom).", source),
		panels, 2)
	return figureOutput(fig, err, summary)
}

// FigureA2 is Figure A.2 from runs (analysis.TSParams): the histograms of β ∈ (−1, 1) and λ ∈ (0, 1)
// per hidden layer and TS stage of one checkpoint (the first seed of the first group, as the paper shows
// one; figure 08_figA2_beta_lambda), and a table of both pooled over the group's seeds (mean ± std, median
// [min, max]) beside their initialization β = 0, λ = σ(−3) ≈ 0.047. An error wrapping ErrNoRuns when runs
// is empty.
func FigureA2(runs []*analysis.Run, mode experiment.Mode) (*Output, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("Figure A.2: %w", ErrNoRuns)
	}
	return figureA2OfRuns(runs, oursIn(mode))
}

// figureA2OfRuns is FigureA2 of runs, whose source the captions name ("ours: quick mode").
func figureA2OfRuns(runs []*analysis.Run, source string) (*Output, error) {
	rep, err := analysis.TSParams(runs, analysis.TSParamOptions{})
	if err != nil {
		return nil, err
	}
	return figureA2(rep, source, protocolOfRuns(runs))
}

func figureA2(rep *analysis.TSParamReport, source, protocol string) (*Output, error) {
	if len(rep.Groups) == 0 || len(rep.Groups[0].Runs) == 0 || len(rep.Groups[0].Runs[0].Layers) == 0 {
		return nil, fmt.Errorf("Figure A.2: no run with a TS module")
	}
	g := rep.Groups[0]
	one := g.Runs[0]
	var panels []HistogramPanel
	for si := range one.Layers[0].Stages {
		var beta, lambda []Hist
		for _, l := range one.Layers {
			s := l.Stages[si]
			beta = append(beta, Hist{Label: fmt.Sprintf("hidden layer %d", l.Layer+1), Values: s.Beta})
			lambda = append(lambda, Hist{Label: fmt.Sprintf("hidden layer %d", l.Layer+1), Values: s.Lambda})
		}
		panels = append(panels,
			HistogramPanel{Title: fmt.Sprintf("Figure A.2 left · all-pass β, stage %d (seed %d)", si+1, one.Seed), XLabel: "β", YLabel: "neurons", Lo: -1, Hi: 1, Bins: 40, Hists: beta},
			HistogramPanel{Title: fmt.Sprintf("Figure A.2 right · mixing λ, stage %d (seed %d)", si+1, one.Seed), XLabel: "λ", YLabel: "neurons", Lo: 0, Hi: 1, Bins: 40, Hists: lambda})
	}
	fig, err := HistogramFigure("08_figA2_beta_lambda",
		fmt.Sprintf("Figure A.2 (%s): learned TS coefficients β (left) and λ (right) per hidden layer, one checkpoint (%s).", source, one.Dir), panels, 2)
	if err != nil {
		return nil, err
	}
	t := Table{Caption: fmt.Sprintf("Figure A.2 · β and λ pooled over %d seeds, %s, %s protocol (initialization: β = 0, λ = 0.047; %s; the paper publishes the figure only)", len(g.Runs), g.Key, protocol, source),
		Header: []string{"layer", "stage", "β mean ± std", "β median [min, max]", "λ mean ± std", "λ median [min, max]"}}
	for _, l := range g.Pooled {
		for _, s := range l.Stages {
			b, lm := s.BetaSummary, s.LambdaSummary
			t.Rows = append(t.Rows, []string{fmt.Sprint(l.Layer + 1), fmt.Sprint(s.Stage),
				fmt.Sprintf("%+.3f ± %.3f", b.Mean, b.Std), fmt.Sprintf("%+.3f [%+.3f, %+.3f]", b.Median, b.Min, b.Max),
				fmt.Sprintf("%.3f ± %.3f", lm.Mean, lm.Std), fmt.Sprintf("%.3f [%.3f, %.3f]", lm.Median, lm.Min, lm.Max)})
		}
	}
	return &Output{Tables: []Table{t}, Figures: []*Figure{fig}}, nil
}
