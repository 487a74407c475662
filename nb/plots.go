package nb

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Generic figures of the results notebooks (06 on): histograms, curves with bands and scatter plots
// built from plain numbers, so that notebooks can draw what any analysis returns. Every panel has a
// title, axis labels (with units: the caller writes them) and a legend; every figure a name (its file
// stem, starting with the notebook number) and a caption.

// Hist is one histogram of a HistogramPanel: the values counted and the legend label.
type Hist struct {
	Label  string
	Values []float64
}

// HistogramPanel is one panel of histograms drawn over the same bins as outlines (steps).
type HistogramPanel struct {
	Title, XLabel string
	// YLabel defaults to "count", or "fraction" with Normalize.
	YLabel string
	// Lo and Hi are the range of the bins; both zero: the range of the finite values. Values outside
	// are counted in the first or last bin.
	Lo, Hi float64
	// Bins is the number of bins (default 20).
	Bins int
	// LogX spaces the bins evenly on a log scale and draws a log x axis (values ≤ 0 go to the first bin).
	LogX bool
	// Normalize divides each histogram by its number of values.
	Normalize bool
	Hists     []Hist
}

// HistogramFigure draws the panels in rows of cols (cols ≤ 0: all in one row).
func HistogramFigure(name, caption string, panels []HistogramPanel, cols int) (*Figure, error) {
	return panelFigure(name, caption, panels, cols, 5.5, 3.6, histogramPanel)
}

func histogramPanel(hp HistogramPanel) (*plot.Plot, error) {
	if len(hp.Hists) == 0 {
		return nil, fmt.Errorf("panel %q has no histogram", hp.Title)
	}
	lo, hi := hp.Lo, hp.Hi
	if lo == 0 && hi == 0 {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, h := range hp.Hists {
			for _, v := range h.Values {
				if isFinite(v) && (!hp.LogX || v > 0) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
		if lo > hi {
			return nil, fmt.Errorf("panel %q has no finite value", hp.Title)
		}
		if lo == hi {
			pad := math.Max(math.Abs(lo)*0.05, 1e-3)
			if hp.LogX {
				lo, hi = lo/1.1, hi*1.1
			} else {
				lo, hi = lo-pad, hi+pad
			}
		}
	}
	if !(lo < hi) || (hp.LogX && lo <= 0) {
		return nil, fmt.Errorf("panel %q: bad bin range [%g, %g]", hp.Title, lo, hi)
	}
	bins := hp.Bins
	if bins <= 0 {
		bins = 20
	}
	var edges []float64
	if hp.LogX {
		edges = LogBinEdges(lo, hi, bins)
	} else {
		edges = make([]float64, bins+1)
		for i := range edges {
			edges[i] = lo + (hi-lo)*float64(i)/float64(bins)
		}
	}
	ylabel := hp.YLabel
	if ylabel == "" {
		ylabel = "count"
		if hp.Normalize {
			ylabel = "fraction"
		}
	}
	p := newPlot(hp.Title, hp.XLabel, ylabel)
	if hp.LogX {
		logX(p)
	}
	top := 0.0
	for i, h := range hp.Hists {
		counts, _ := LogHistogram(h.Values, edges) // every value but NaN, in its bin
		n := 0.0
		for _, c := range counts {
			n += c
		}
		for j := range counts {
			if hp.Normalize && n > 0 {
				counts[j] /= n
			}
			top = math.Max(top, counts[j])
		}
		if err := addStep(p, edges, counts, fmt.Sprintf("%s (n = %d)", h.Label, int(n)), colorAt(i), vg.Points(1.8)); err != nil {
			return nil, err
		}
	}
	p.X.Min, p.X.Max = edges[0], edges[bins]
	p.Y.Min, p.Y.Max = 0, math.Max(1.25*top, 1e-9)
	return p, nil
}

// Curve is one labelled line y(x) with an optional band [Lo, Hi] (e.g. mean ± std), drawn as a light
// fill of the line's colour. Non-finite points leave gaps.
type Curve struct {
	Label  string
	X, Y   []float64
	Lo, Hi []float64
	Dashed bool
}

// CurvePanel is one panel of curves.
type CurvePanel struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	// ZeroLine draws y = 0 (thin grey), for shifts that change sign.
	ZeroLine bool
	// YMin and YMax fix the y range when YMin < YMax.
	YMin, YMax float64
	// VLines are x positions marked with thin dotted grey lines (e.g. a target frequency).
	VLines []float64
	Curves []Curve
}

// CurveFigure draws the panels in rows of cols (cols ≤ 0: all in one row).
func CurveFigure(name, caption string, panels []CurvePanel, cols int) (*Figure, error) {
	return panelFigure(name, caption, panels, cols, 6, 4, curvePanel)
}

func curvePanel(cp CurvePanel) (*plot.Plot, error) {
	if len(cp.Curves) == 0 {
		return nil, fmt.Errorf("panel %q has no curve", cp.Title)
	}
	p := newPlot(cp.Title, cp.XLabel, cp.YLabel)
	if cp.LogX {
		logX(p)
	}
	if cp.LogY {
		logY(p)
		p.Y.Tick.Marker = plot.LogTicks{Prec: 1}
	}
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for i, c := range cp.Curves {
		col := colorAt(i)
		if len(c.Lo) > 0 || len(c.Hi) > 0 {
			if err := addBand(p, c.X, c.Lo, c.Hi, col); err != nil {
				return nil, fmt.Errorf("curve %q: %w", c.Label, err)
			}
		}
		style := solid
		if c.Dashed {
			style = dashed
		}
		if err := addCurve(p, c.X, c.Y, c.Label, col, style, vg.Points(1.6)); err != nil {
			return nil, err
		}
		for j, x := range c.X {
			if isFinite(x) && isFinite(c.Y[j]) && (!cp.LogX || x > 0) {
				xlo, xhi = math.Min(xlo, x), math.Max(xhi, x)
			}
		}
	}
	if cp.ZeroLine && xlo < xhi {
		if err := addHLine(p, 0, xlo, xhi, "", grey, solid); err != nil {
			return nil, err
		}
	}
	if cp.YMin < cp.YMax {
		p.Y.Min, p.Y.Max = cp.YMin, cp.YMax
	}
	for _, x := range cp.VLines {
		p.Add(vLineMarker{x: x})
	}
	return p, nil
}

// vLineMarker is a dotted vertical line across the whole data area at x.
type vLineMarker struct{ x float64 }

func (v vLineMarker) Plot(c draw.Canvas, p *plot.Plot) {
	x := p.X.Norm(v.x)
	if !(x >= 0 && x <= 1) {
		return
	}
	xc := c.Min.X + vg.Length(x)*(c.Max.X-c.Min.X)
	c.StrokeLine2(draw.LineStyle{Color: grey, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2)}},
		xc, c.Min.Y, xc, c.Max.Y)
}

// addBand fills the area between lo(x) and hi(x) with a light version of c, over the longest stretches
// where all three are finite.
func addBand(p *plot.Plot, xs, lo, hi []float64, c color.Color) error {
	if len(lo) != len(xs) || len(hi) != len(xs) {
		return errors.New("band: lengths of x, lo and hi differ")
	}
	r, g, b, _ := c.RGBA()
	fill := color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0x40}
	var seg []int
	flush := func() error {
		if len(seg) < 2 {
			seg = seg[:0]
			return nil
		}
		var pts plotter.XYs
		for _, i := range seg {
			pts = append(pts, plotter.XY{X: xs[i], Y: hi[i]})
		}
		for k := len(seg) - 1; k >= 0; k-- {
			pts = append(pts, plotter.XY{X: xs[seg[k]], Y: lo[seg[k]]})
		}
		poly, err := plotter.NewPolygon(pts)
		if err != nil {
			return err
		}
		poly.Color = fill
		poly.LineStyle.Width = 0
		p.Add(poly)
		seg = seg[:0]
		return nil
	}
	for i := range xs {
		if isFinite(xs[i]) && isFinite(lo[i]) && isFinite(hi[i]) {
			seg = append(seg, i)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return flush()
}

// Points is one labelled set of (x, y) markers of a ScatterPanel.
type Points struct {
	Label string
	X, Y  []float64
}

// ScatterPanel is one scatter plot.
type ScatterPanel struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	// Identity draws the line y = x over the data's range (grey, dashed), labelled "y = x".
	Identity bool
	Points   []Points
}

// ScatterFigure draws the panels in rows of cols (cols ≤ 0: all in one row).
func ScatterFigure(name, caption string, panels []ScatterPanel, cols int) (*Figure, error) {
	return panelFigure(name, caption, panels, cols, 5.5, 4.5, scatterPanel)
}

func scatterPanel(sp ScatterPanel) (*plot.Plot, error) {
	if len(sp.Points) == 0 {
		return nil, fmt.Errorf("panel %q has no points", sp.Title)
	}
	p := newPlot(sp.Title, sp.XLabel, sp.YLabel)
	if sp.LogX {
		logX(p)
		p.X.Tick.Marker = plot.LogTicks{Prec: 1}
	}
	if sp.LogY {
		logY(p)
		p.Y.Tick.Marker = plot.LogTicks{Prec: 1}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}}
	for i, s := range sp.Points {
		xs, ys := make([]float64, 0, len(s.X)), make([]float64, 0, len(s.Y))
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("points %q: %d x values, %d y values", s.Label, len(s.X), len(s.Y))
		}
		for j := range s.X {
			if (sp.LogX && s.X[j] <= 0) || (sp.LogY && s.Y[j] <= 0) {
				continue
			}
			xs, ys = append(xs, s.X[j]), append(ys, s.Y[j])
			if isFinite(s.X[j]) && isFinite(s.Y[j]) {
				lo, hi = math.Min(lo, math.Min(s.X[j], s.Y[j])), math.Max(hi, math.Max(s.X[j], s.Y[j]))
			}
		}
		if err := addPoints(p, xs, ys, fmt.Sprintf("%s (n = %d)", s.Label, len(xs)), colorAt(i), glyphs[i%len(glyphs)], vg.Points(2)); err != nil {
			return nil, err
		}
	}
	if sp.Identity && lo < hi {
		if err := addCurve(p, []float64{lo, hi}, []float64{lo, hi}, "y = x", grey, dashed, vg.Points(1)); err != nil {
			return nil, err
		}
	}
	// Points along y = x leave the lower right empty.
	p.Legend.Top, p.Legend.Left = !sp.Identity, !sp.Identity
	return p, nil
}

// panelFigure builds one plot per panel and tiles them in rows of cols panels of w × h inches (cols ≤ 0:
// all in one row); an error names the figure.
func panelFigure[P any](name, caption string, panels []P, cols int, w, h float64, build func(P) (*plot.Plot, error)) (*Figure, error) {
	var plots []*plot.Plot
	for _, panel := range panels {
		p, err := build(panel)
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", name, err)
		}
		plots = append(plots, p)
	}
	return gridFigure(name, caption, plots, cols, w, h)
}

// gridFigure tiles plots in rows of cols panels of w × h inches each.
func gridFigure(name, caption string, plots []*plot.Plot, cols int, w, h float64) (*Figure, error) {
	if len(plots) == 0 {
		return nil, fmt.Errorf("figure %s has no panel", name)
	}
	if cols <= 0 || cols > len(plots) {
		cols = len(plots)
	}
	var rows [][]*plot.Plot
	for i := 0; i < len(plots); i += cols {
		rows = append(rows, plots[i:min(i+cols, len(plots))])
	}
	fig := &Figure{Name: name, Caption: caption, Panels: rows,
		Width: vg.Length(float64(cols)*w) * vg.Inch, Height: vg.Length(float64(len(rows))*h) * vg.Inch}
	if err := fig.validate(); err != nil {
		return nil, err
	}
	return fig, nil
}

// CategorySeries is one labelled set of values over the categories of a CategoryPanel, with optional
// symmetric error bars; NaN leaves a category without a marker.
type CategorySeries struct {
	Label  string
	Values []float64
	Errs   []float64
}

// CategoryPanel is one panel of markers over named categories (e.g. the rows of a paper table).
type CategoryPanel struct {
	Title, XLabel, YLabel string
	Categories            []string
	Series                []CategorySeries
}

// CategoryFigure draws the panels in rows of cols (cols ≤ 0: all in one row): each series as markers
// (black squares first, then the palette), side by side within each category, with error bars, and a
// legend above the data.
func CategoryFigure(name, caption string, panels []CategoryPanel, cols int) (*Figure, error) {
	return panelFigure(name, caption, panels, cols, 6, 4.5, categoryPanel)
}

func categoryPanel(cp CategoryPanel) (*plot.Plot, error) {
	if len(cp.Categories) == 0 || len(cp.Series) == 0 {
		return nil, fmt.Errorf("panel %q has no categories or no series", cp.Title)
	}
	p := newPlot(cp.Title, cp.XLabel, cp.YLabel)
	lo, hi := math.Inf(1), math.Inf(-1)
	n := len(cp.Series)
	for i, s := range cp.Series {
		if len(s.Values) != len(cp.Categories) || (s.Errs != nil && len(s.Errs) != len(s.Values)) {
			return nil, fmt.Errorf("series %q has %d values for %d categories", s.Label, len(s.Values), len(cp.Categories))
		}
		var xs, ys, es []float64
		for j, v := range s.Values {
			if !isFinite(v) {
				continue
			}
			e := 0.0
			if s.Errs != nil && isFinite(s.Errs[j]) {
				e = s.Errs[j]
			}
			xs = append(xs, float64(j)+0.25*(float64(i)-float64(n-1)/2))
			ys, es = append(ys, v), append(es, e)
			lo, hi = math.Min(lo, v-e), math.Max(hi, v+e)
		}
		var c color.Color = black
		if i > 0 {
			c = colorAt(i)
		}
		glyphs := []draw.GlyphDrawer{draw.BoxGlyph{}, draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}}
		if err := addErrorPoints(p, xs, ys, es, s.Label, c, glyphs[i%len(glyphs)]); err != nil {
			return nil, err
		}
	}
	categoryAxis(p, cp.Categories)
	if lo <= hi {
		base := math.Min(0, lo)
		pad := 0.05 * (hi - base)
		if base < 0 {
			base -= pad
		}
		p.Y.Min, p.Y.Max = base, hi+0.3*(hi-base)+1e-9
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// categoryAxis labels the x axis of p with the categories at 0, 1, 2, ..., slanted, with half a step
// of room at either end.
func categoryAxis(p *plot.Plot, categories []string) {
	ticks := make([]plot.Tick, len(categories))
	for i, l := range categories {
		ticks[i] = plot.Tick{Value: float64(i), Label: l}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Label.Rotation = math.Pi / 7
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.X.Min, p.X.Max = -0.6, float64(len(categories))-0.4
}
