package nb

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/paper"
)

// Notebook 09 (perturbation): the paper's Table A.8 (Appendix C), the test accuracy of FS-only SSC
// checkpoints with their learned target frequencies reset to the initialization or shuffled within each
// layer, as paired changes from the same checkpoint unperturbed.

// perturbCell is one experiment's perturbation: the experiment (its full recipe's width is the paper's
// column) and the group analysis.Perturb aggregated over its checkpoints.
type perturbCell struct {
	experiment experiment.Experiment
	group      analysis.PerturbGroup
}

// TableA8 is Table A.8 from the runs of each experiment (analysis.Perturb with shuffle seed 1: the latest
// checkpoint of every run evaluated unperturbed, with f* reset and with f* shuffled): a table with, per
// width, the paper's row and ours (test accuracy in %, mean ± std over checkpoints, and the paired changes in
// points), the per-checkpoint evaluations, and figure 09_tableA8_paired_changes (the paired changes, paper
// and ours, per width of the paper). An error wrapping ErrNoRuns when groups is empty.
func TableA8(groups []ExperimentRuns, mode experiment.Mode) (*Output, error) {
	if len(groups) == 0 {
		return nil, fmt.Errorf("Table A.8: %w", ErrNoRuns)
	}
	var cells []perturbCell
	for _, g := range groups {
		rep, err := analysis.Perturb(g.Runs, analysis.PerturbOptions{Seed: 1})
		if err != nil {
			return nil, err
		}
		for _, pg := range rep.Groups {
			cells = append(cells, perturbCell{g.Experiment, pg})
		}
	}
	return tableA8(cells, mode)
}

func tableA8(cells []perturbCell, mode experiment.Mode) (*Output, error) {
	published := map[int]paper.Perturbation{}
	for _, p := range paper.Perturbations() {
		published[p.Width] = p
	}
	pct := func(v analysis.MeanStdValue) string { return fmt.Sprintf("%.2f ± %.2f", 100*v.Mean, 100*v.Std) }
	t := Table{Caption: fmt.Sprintf("Table A.8 · target-frequency perturbation on SSC, FS only, latest checkpoint of each run, test accuracy (%%) and paired change (points); the paper's row above ours (ours: %s mode)", mode),
		Header: []string{"W", "source", "checkpoints", "Full (%)", "Reset f* (%)", "(Δ, points)", "Shuffle f* (%)", "(Δ, points)"}}
	long := Table{Caption: "Table A.8 · per checkpoint: test accuracy (%) unperturbed, reset and shuffled, and the paired changes (points)",
		Header: []string{"experiment", "seed", "epoch", "full (%)", "reset (%)", "shuffle (%)", "Δ reset", "Δ shuffle"}}
	ours := map[int]analysis.PerturbGroup{}
	for _, c := range cells {
		w, g := c.experiment.Full.Width, c.group
		p, ok := published[w]
		if !ok {
			return nil, fmt.Errorf("Table A.8 has no width %d (experiment %s)", w, c.experiment.ID)
		}
		t.Rows = append(t.Rows,
			[]string{fmt.Sprint(w), "paper", "5", p.Full.String(), p.Reset.String(), "(" + p.ResetChange.String() + ")", p.Shuffle.String(), "(" + p.ShuffleChange.String() + ")"},
			[]string{fmt.Sprint(w), fmt.Sprintf("ours (trained at W = %d)", g.Key.Width), fmt.Sprint(len(g.Runs)), pct(g.Full), pct(g.Reset), "(" + pct(g.DeltaReset) + ")", pct(g.Shuffle), "(" + pct(g.DeltaShuffle) + ")"})
		for _, r := range g.Runs {
			long.Rows = append(long.Rows, []string{c.experiment.ID, fmt.Sprint(r.Seed), fmt.Sprint(r.Epoch), fmt.Sprintf("%.2f", 100*r.Full.TestAcc),
				fmt.Sprintf("%.2f", 100*r.Reset.TestAcc), fmt.Sprintf("%.2f", 100*r.Shuffle.TestAcc), fmt.Sprintf("%+.2f", 100*r.DeltaReset), fmt.Sprintf("%+.2f", 100*r.DeltaShuffle)})
		}
		ours[w] = g
	}
	// The figure: every width of the paper, ours where a run exists (NaN leaves the marker out).
	var cats []string
	var pR, pRe, pS, pSe, oR, oRe, oS, oSe []float64
	for _, p := range paper.Perturbations() {
		cats = append(cats, fmt.Sprintf("W = %d", p.Width))
		pR, pRe, pS, pSe = append(pR, p.ResetChange.Mean), append(pRe, p.ResetChange.Std), append(pS, p.ShuffleChange.Mean), append(pSe, p.ShuffleChange.Std)
		g, ok := ours[p.Width]
		if !ok {
			oR, oRe, oS, oSe = append(oR, math.NaN()), append(oRe, 0), append(oS, math.NaN()), append(oSe, 0)
			continue
		}
		oR, oRe = append(oR, 100*g.DeltaReset.Mean), append(oRe, 100*g.DeltaReset.Std)
		oS, oSe = append(oS, 100*g.DeltaShuffle.Mean), append(oSe, 100*g.DeltaShuffle.Std)
	}
	oursLabel := fmt.Sprintf("ours (%s mode, mean ± std)", mode)
	panel := func(title string, p, pe, o, oe []float64) CategoryPanel {
		return CategoryPanel{Title: "Table A.8 · " + title, XLabel: "width of the paper's cell", YLabel: "Δ test accuracy (points)", Categories: cats,
			Series: []CategorySeries{{Label: "paper (mean ± std)", Values: p, Errs: pe}, {Label: oursLabel, Values: o, Errs: oe}}}
	}
	fig, err := CategoryFigure("09_tableA8_paired_changes",
		fmt.Sprintf("Table A.8 as a figure: paired change of test accuracy when the learned f* are reset (left) or shuffled within each layer (right), paper and ours (%s mode).", mode),
		[]CategoryPanel{panel("reset f* to the initial log-scale values", pR, pRe, oR, oRe), panel("shuffle f* within each layer", pS, pSe, oS, oSe)}, 0)
	return figureOutput(fig, err, t, long)
}
