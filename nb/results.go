package nb

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ResultTable returns an aggregated table of fits/experiment (our runs beside the paper's published
// numbers, see experiment.Aggregate) as a notebook table: the same header and rows as its Markdown.
func ResultTable(t *experiment.TableResult) Table {
	return Table{
		Caption: fmt.Sprintf("%s · %s (ours: %s mode; cells: %s)", t.Label, t.Caption, t.Mode, t.Quantity),
		Header:  t.Header(),
		Rows:    t.Body(),
	}
}

// ResultNotes returns the notes of an aggregated table (protocol, statistics, stand-in data, skipped
// runs) as a Markdown list, to show under ResultTable.
func ResultNotes(t *experiment.TableResult) string {
	var b strings.Builder
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	return b.String()
}

// ResultFigure draws an aggregated table: one panel per paper column that holds at least one of our
// runs (every column when none does), with the paper's mean ± std (black squares) and ours (mean ±
// sample std over the finished seeds, coloured circles) for each row that has an experiment of ours;
// rows the paper quotes from other works are left out. name is the file stem (e.g.
// "06_table1_ours_vs_paper").
func ResultFigure(name string, t *experiment.TableResult) (*Figure, error) {
	var cols []int
	for j := range t.Columns {
		for _, r := range t.Rows {
			if j < len(r.Cells) && r.Cells[j].Ours != nil {
				cols = append(cols, j)
				break
			}
		}
	}
	if len(cols) == 0 {
		for j := range t.Columns {
			cols = append(cols, j)
		}
	}
	oursLabel := "ours (" + string(t.Mode) + " mode)"
	if t.Mode == experiment.Quick {
		oursLabel = "ours (quick mode: stand-in data, not comparable)"
	}
	var plots []*plot.Plot
	for _, j := range cols {
		var labels []string
		var px, py, pe, ox, oy, oe []float64
		for _, r := range t.Rows {
			if j >= len(r.Cells) || r.Cells[j].Experiment == "" {
				continue
			}
			c := r.Cells[j]
			x := float64(len(labels))
			label := r.Label
			if r.Group != "" {
				label = r.Group + ": " + label
			}
			labels = append(labels, label)
			if c.Paper != nil {
				px, py, pe = append(px, x-0.12), append(py, c.Paper.Mean), append(pe, c.Paper.Std)
			}
			if c.Ours != nil {
				std := 0.0
				if c.Ours.Std != nil {
					std = *c.Ours.Std
				}
				v := c.Ours.Mean
				if t.Label == "Table A.4" {
					v = c.Ours.Median
				}
				ox, oy, oe = append(ox, x+0.12), append(oy, v), append(oe, std)
			}
		}
		if len(labels) == 0 {
			continue
		}
		column := t.Columns[j]
		if _, err := strconv.Atoi(column); err == nil {
			column = "W = " + column
		}
		p := newPlot(fmt.Sprintf("%s · %s · %s", t.Label, t.Caption, column), t.RowHeader, t.Quantity)
		if err := addErrorPoints(p, px, py, pe, "paper (mean ± std)", black, draw.BoxGlyph{}); err != nil {
			return nil, err
		}
		if err := addErrorPoints(p, ox, oy, oe, oursLabel, colorAt(1), draw.CircleGlyph{}); err != nil {
			return nil, err
		}
		categoryAxis(p, labels)
		// Room above the data for the legend: accuracies reach 100 %.
		top := 0.0 // the means and the bars over them (the stds are ≥ 0)
		for i := range py {
			top = math.Max(top, py[i]+pe[i])
		}
		for i := range oy {
			top = math.Max(top, oy[i]+oe[i])
		}
		p.Y.Min, p.Y.Max = 0, math.Max(1.2*top, 1)
		p.Legend.Top, p.Legend.Left = true, true
		plots = append(plots, p)
	}
	caption := fmt.Sprintf("%s (%s): the paper's values beside ours (%s mode, runs in %s).", t.Label, t.Caption, t.Mode, t.Root)
	return gridFigure(name, caption, plots, 2, 6.5, 4.8)
}

// addErrorPoints draws markers at (x, y) with vertical error bars ±e (none when e is 0); nothing when
// there are no points.
func addErrorPoints(p *plot.Plot, xs, ys, es []float64, label string, c color.Color, shape draw.GlyphDrawer) error {
	if len(xs) == 0 {
		return nil
	}
	if err := addPoints(p, xs, ys, label, c, shape, vg.Points(3)); err != nil {
		return err
	}
	var pts struct {
		plotter.XYs
		plotter.YErrors
	}
	for i := range xs {
		if es[i] > 0 && isFinite(es[i]) {
			pts.XYs = append(pts.XYs, plotter.XY{X: xs[i], Y: ys[i]})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{es[i], es[i]})
		}
	}
	if len(pts.XYs) == 0 {
		return nil
	}
	bars, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return err
	}
	bars.Color = c
	p.Add(bars)
	return nil
}

// protocolOf names the model-selection protocol of an aggregated table's experiments (" under the
// official-val protocol"), or the paper's and ours where the table's mode uses another one (a quick
// stand-in without an official validation split); "" when none of its cells has an experiment.
func protocolOf(t *experiment.TableResult) string {
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			if c.Experiment == "" {
				continue
			}
			e, err := experiment.Lookup(c.Experiment)
			if err != nil {
				continue
			}
			cfg, err := e.Recipe(t.Mode)
			if err != nil {
				continue
			}
			if cfg.Protocol == e.Full.Protocol {
				return fmt.Sprintf(" under the %s protocol", cfg.Protocol)
			}
			return fmt.Sprintf(" (the paper's under the %s protocol, ours under %s)", e.Full.Protocol, cfg.Protocol)
		}
	}
	return ""
}

// LadderTable checks the ordering of an ablation table (Table 3, A.5, A.6, A.7) that the paper reads
// (Section 5.2): the adaptive LIF with zero-initialized adaptation ≈ plain LIF < FS with frozen targets ≤
// FS with learnable targets, and FS + TS (the best M) ≥ FS. For each width column it gives one row with
// the paper's means and one with ours (where our runs exist): the five means (%) and the four
// differences in percentage points. "≈" is read as |adaptive − LIF| ≤ 1 point, the paper's largest gap
// being 0.66.
func LadderTable(t *experiment.TableResult) (Table, error) {
	out := Table{
		Caption: t.Label + " · the ablation ladder" + protocolOf(t) + ": means (%) and differences (percentage points)",
		Header: []string{"W", "values", "LIF", "adaptive", "FS frozen", "FS", "best FS + TS",
			"adaptive − LIF", "FS frozen − max(LIF, adaptive)", "FS − FS frozen", "best FS + TS − FS", "paper's ordering holds"},
	}
	model := func(id string) string {
		parts := strings.Split(id, "/")
		if len(parts) < 2 {
			return ""
		}
		return parts[1]
	}
	found := false
	for j, col := range t.Columns {
		for _, who := range []string{"paper", "ours"} {
			v := map[string]float64{}
			bestTS := math.NaN()
			for _, r := range t.Rows {
				if j >= len(r.Cells) {
					continue
				}
				c := r.Cells[j]
				x := math.NaN()
				switch {
				case who == "paper" && c.Paper != nil:
					x = c.Paper.Mean
				case who == "ours" && c.Ours != nil:
					x = c.Ours.Mean
				}
				if math.IsNaN(x) {
					continue
				}
				m := model(c.Experiment)
				if strings.HasPrefix(m, "fsts-") {
					if math.IsNaN(bestTS) || x > bestTS {
						bestTS = x
					}
					continue
				}
				v[m] = x
			}
			lif, okL := v["lif"]
			ad, okA := v["adaptlif"]
			fr, okF := v["fs-frozen"]
			fs, okS := v["fs"]
			if !okL || !okA || !okF || !okS {
				continue
			}
			found = true
			num := func(format string, x float64) string {
				if math.IsNaN(x) {
					return "—"
				}
				return fmt.Sprintf(format, x)
			}
			f := func(x float64) string { return num("%.2f", x) }
			d := func(x float64) string { return num("%+.2f", x) }
			holds := math.Abs(ad-lif) <= 1 && fr > math.Max(lif, ad) && fs >= fr && (math.IsNaN(bestTS) || bestTS >= fs)
			verdict := "no"
			if holds {
				verdict = "yes"
			}
			out.Rows = append(out.Rows, []string{col, who, f(lif), f(ad), f(fr), f(fs), f(bestTS),
				d(ad - lif), d(fr - math.Max(lif, ad)), d(fs - fr), d(bestTS - fs), verdict})
		}
	}
	if !found {
		return out, fmt.Errorf("%s: no width column has all four of LIF, adaptive LIF, FS frozen and FS", t.Label)
	}
	return out, nil
}
