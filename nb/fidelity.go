package nb

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Notebook 14 (released code vs the paper's text): the differences, the variants, the paired table and
// its figure, of the fidelity study (experiment.Fidelity; MeasureFidelity). Accuracies are shown in
// percent and their differences in percentage points; the f* travel (mean over hidden neurons of
// |ln f*_final − ln f*_init|) in natural-log units.

// FidelityDifferences returns the differences between the paper's text (or this toolkit's first forms)
// and the released code as a table: where the paper states its form, the two forms, the released file,
// the option that gives the paper's form, the default and why, and the variant that measures it.
func FidelityDifferences(ds []experiment.Difference) Table {
	t := Table{
		Caption: "Where the paper's text (or this toolkit's first form, where the paper is silent) and the released code differ",
		Header:  []string{"aspect", "paper", "paper's text / first form", "released code", "released file", "option for the other form", "default (why)", "measured by"},
	}
	for _, d := range ds {
		opt, v := cmp.Or(d.Option, "—"), cmp.Or(d.Variant, "— (not on this stand-in)")
		t.Rows = append(t.Rows, []string{d.Aspect, d.Paper, d.PaperForm, d.Released, d.ReleasedFile, opt,
			d.Default + " (" + d.Why + ")", v})
	}
	return t
}

// FidelityVariants returns the variants as a table: name, the options of `fits train` that give it, and
// what it changes; the caption names the baseline's recipe in mode (the stand-in in quick mode).
func FidelityVariants(mode experiment.Mode) (Table, error) {
	e, err := experiment.Lookup("fidelity/" + experiment.VariantBaseline)
	if err != nil {
		return Table{}, err
	}
	c, err := e.Recipe(mode)
	if err != nil {
		return Table{}, err
	}
	t := Table{Caption: fmt.Sprintf("The variants: each flips options of the released defaults (the baseline; %s mode: %s, %s M = %d, width %d, %d epochs, batch %d, learning rate %g, dropout %g, %s, readout %s)",
		mode, c.Dataset, c.Model, c.M, c.Width, c.Epochs, c.Batch, c.LR, c.Dropout, c.Protocol, c.Resolved().Readout),
		Header: []string{"variant", "options of fits train", "what changes"}}
	for _, v := range experiment.Variants() {
		t.Rows = append(t.Rows, []string{v.Name, cmp.Or(v.Flags, "(none)"), v.Summary})
	}
	return t, nil
}

// FidelityResults is the table of notebook 14: the study measured from the finished runs of a plan
// (MeasureFidelity), with its notes, and written beside the runs into root/fidelity as table.csv, runs.csv
// and table.json.
func FidelityResults(runs []PlannedRun, root string) (*Output, error) {
	t, err := MeasureFidelity(runs)
	if err != nil {
		return nil, err
	}
	paths, err := t.Write(filepath.Join(root, "fidelity"))
	if err != nil {
		return nil, err
	}
	return &Output{Tables: []Table{FidelityTable(t)}, Notes: []string{FidelityNotes(t), "Written: `" + strings.Join(paths, "`, `") + "`"}}, nil
}

// FidelityEffects is the figure of notebook 14 (FidelityFigure, 14_released_vs_paper) and each variant's
// effects in words (FidelityReading), measured from the finished runs of a plan.
func FidelityEffects(runs []PlannedRun) (*Output, error) {
	t, err := MeasureFidelity(runs)
	if err != nil {
		return nil, err
	}
	fig, err := FidelityFigure("14_released_vs_paper", t)
	if err != nil {
		return nil, err
	}
	return &Output{Figures: []*Figure{fig}, Notes: []string{FidelityReading(t)}}, nil
}

// pm formats mean ± std with the given decimals (n = 1: the value alone).
func pm(s PairedStat, scale float64, digits int) string {
	switch s.N {
	case 0:
		return "—"
	case 1:
		return fmt.Sprintf("%.*f (1 seed)", digits, scale*s.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", digits, scale*s.Mean, digits, scale*s.Std)
}

// signed formats paired differences as +mean ± std.
func signed(s PairedStat, scale float64, digits int) string {
	if s.N == 0 {
		return "—"
	}
	m := scale * s.Mean
	if math.Abs(m) < 0.5*math.Pow(10, -float64(digits)) {
		m = 0 // no "-0.000"
	}
	out := fmt.Sprintf("%+.*f", digits, m)
	if s.N > 1 {
		out += fmt.Sprintf(" ± %.*f", digits, scale*s.Std)
	}
	return out
}

// reading says whether paired differences are beyond the seed spread (PairedStat.Clear).
func reading(s PairedStat) string {
	switch {
	case s.N == 0:
		return "—"
	case s.N < 2:
		return "one seed: no spread"
	case s.Clear() && s.Mean > 0:
		return "higher in every seed"
	case s.Clear():
		return "lower in every seed"
	}
	return "within the seed spread"
}

// seedList formats seeds as "1, 2, 3".
func seedList(seeds []int64) string {
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ", ")
}

// FidelityTable returns the study's table: per variant its selected test accuracy and f* travel (mean ±
// std over seeds) and the paired differences from the baseline of the same seed (mean ± std), with a
// reading of each difference against the seed spread. The caption names the task, the seeds and the
// protocol's selection.
func FidelityTable(t *FidelityResult) Table {
	out := Table{
		Caption: fmt.Sprintf("Variant − released defaults, paired by seed (seeds %s): %s, %s M = %d, width %d, %d epochs, dropout %g; accuracy = %s",
			seedList(t.Seeds), t.Dataset, t.Model, t.M, t.Width, t.Epochs, t.Dropout, t.Selection),
		Header: []string{"variant", "options", "seeds", "test acc. (%)", "Δ acc. (points)", "Δ acc. reading",
			"f* travel (ln units)", "Δ f* travel", "Δ travel reading"},
	}
	for _, r := range t.Rows {
		row := []string{r.Variant, cmp.Or(r.Flags, "(released defaults)"), fmt.Sprint(r.TestAcc.N), pm(r.TestAcc, 100, 2)}
		if r.Variant == experiment.VariantBaseline {
			row = append(row, "", "", pm(r.Travel, 1, 3), "", "")
		} else {
			row = append(row, signed(r.DeltaAcc, 100, 2), reading(r.DeltaAcc), pm(r.Travel, 1, 3),
				signed(r.DeltaTravel, 1, 3), reading(r.DeltaTravel))
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// FidelityNotes returns the table's notes as a Markdown list: the protocol, the statistics, what "within
// the seed spread" means, and the table's own notes (unfinished runs).
func FidelityNotes(t *FidelityResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Accuracy: %s, in percent; Δ in percentage points, variant − baseline of the same seed.\n", t.Selection)
	b.WriteString("- f* travel: the mean over both hidden layers' neurons of |ln f*_final − ln f*_init| (0.1 ≈ a 10 % move), f*_final read from the last checkpoint.\n")
	b.WriteString("- mean ± sample standard deviation over the paired seeds. \"within the seed spread\": the differences change sign between seeds or their mean is not larger than their standard deviation; \"higher/lower in every seed\": same sign in every seed and |mean| > std (a reading aid: three seeds give no significance test).\n")
	if base := t.Row(experiment.VariantBaseline); base != nil && base.TestAcc.N > 1 {
		fmt.Fprintf(&b, "- The baseline's own accuracy spreads by %.2f points (std over seeds %s): differences of that size between unpaired runs are noise.\n",
			100*base.TestAcc.Std, seedList(t.Seeds))
	}
	projected, runs := int64(0), 0
	for _, m := range t.Runs {
		if m.Variant == experiment.VariantBaseline {
			projected += m.FreqProjected
			runs++
		}
	}
	if runs > 0 {
		fmt.Fprintf(&b, "- The frequency guard projected %d f* entries in the baseline's %d runs (0: no f* reached the stability cap).\n", projected, runs)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	return b.String()
}

// FidelityReading returns one Markdown line per variant that states its measured effects in words, with
// the numbers and their reading against the seed spread.
func FidelityReading(t *FidelityResult) string {
	var b strings.Builder
	for _, r := range t.Rows {
		if r.Variant == experiment.VariantBaseline {
			continue
		}
		fmt.Fprintf(&b, "- **%s** (`%s`): accuracy %s points (%s); f* travel %s (%s).\n", r.Variant, r.Flags,
			signed(r.DeltaAcc, 100, 2), reading(r.DeltaAcc), signed(r.DeltaTravel, 1, 3), reading(r.DeltaTravel))
	}
	return b.String()
}

// FidelityFigure draws the paired differences of every variant from the baseline: Δ selected test
// accuracy (percentage points, left) and Δ f* travel (natural-log units, right), the mean over seeds
// with ± one standard deviation as error bars, each seed's difference as a small grey dot, and zero as a
// line. name is the file stem (e.g. "14_released_vs_paper").
func FidelityFigure(name string, t *FidelityResult) (*Figure, error) {
	var rows []FidelityRow
	var variants []string
	for _, r := range t.Rows {
		if r.Variant != experiment.VariantBaseline && r.DeltaAcc.N > 0 {
			rows, variants = append(rows, r), append(variants, r.Variant)
		}
	}
	if len(rows) == 0 {
		return nil, errors.New("figure " + name + ": no variant paired with the baseline")
	}
	panel := func(title, ylabel string, scale float64, stat func(FidelityRow) PairedStat) (*plot.Plot, error) {
		p := newPlot(title, "variant (options flipped from the released defaults)", ylabel)
		var xs, ys, es, sx, sy []float64
		lo, hi := 0.0, 0.0
		for i, r := range rows {
			s := stat(r)
			xs, ys, es = append(xs, float64(i)), append(ys, scale*s.Mean), append(es, scale*s.Std)
			lo, hi = math.Min(lo, scale*(s.Mean-s.Std)), math.Max(hi, scale*(s.Mean+s.Std))
			for j, v := range s.Values {
				sx, sy = append(sx, float64(i)+0.15*(float64(j)-float64(len(s.Values)-1)/2)), append(sy, scale*v)
				lo, hi = math.Min(lo, scale*v), math.Max(hi, scale*v)
			}
		}
		if err := addHLine(p, 0, -0.6, float64(len(rows))-0.4, "", grey, solid); err != nil {
			return nil, err
		}
		if err := addPoints(p, sx, sy, "one seed", grey, draw.CircleGlyph{}, vg.Points(1.8)); err != nil {
			return nil, err
		}
		if err := addErrorPoints(p, xs, ys, es, fmt.Sprintf("mean ± std over seeds %s", seedList(t.Seeds)), colorAt(0), draw.BoxGlyph{}); err != nil {
			return nil, err
		}
		categoryAxis(p, variants)
		pad := 0.08 * math.Max(hi-lo, 1e-9)
		p.Y.Min, p.Y.Max = lo-pad, hi+0.35*(hi-lo)+pad
		p.Legend.Top, p.Legend.Left = true, true
		return p, nil
	}
	acc, err := panel("Δ selected test accuracy (variant − baseline)", "Δ accuracy (percentage points)", 100,
		func(r FidelityRow) PairedStat { return r.DeltaAcc })
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", name, err)
	}
	travel, err := panel("Δ f* travel (variant − baseline)", "Δ mean |ln f*_final − ln f*_init|", 1,
		func(r FidelityRow) PairedStat { return r.DeltaTravel })
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", name, err)
	}
	caption := fmt.Sprintf("Each option of the paper's text (or this toolkit's first form) flipped alone from the released defaults (first-forms: all at once) on %s (%s M = %d, width %d, %d epochs, dropout %g), paired by seed: the difference in %s and in how far f* moved during training.",
		t.Dataset, t.Model, t.M, t.Width, t.Epochs, t.Dropout, t.Selection)
	return gridFigure(name, caption, []*plot.Plot{acc, travel}, 2, 6.5, 4.8)
}
