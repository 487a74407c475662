package nb

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette is the Okabe–Ito colour-blind-safe palette (black first).
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, // yellow
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
}

var (
	black = color.RGBA{0, 0, 0, 0xff}
	grey  = color.RGBA{0x80, 0x80, 0x80, 0xff}
)

// colorAt returns the i-th palette colour, cycling.
func colorAt(i int) color.Color { return palette[((i%len(palette))+len(palette))%len(palette)] }

// lineStyle selects how a curve is stroked.
type lineStyle int

const (
	solid lineStyle = iota
	dashed
	dotted
)

// newPlot returns a plot with a title, axis labels, a light grid and the legend at the top right.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = vg.Points(18)
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xdd}
	g.Horizontal.Color = color.Gray{Y: 0xdd}
	p.Add(g)
	return p
}

// logX puts the x axis on a log scale with decade ticks.
func logX(p *plot.Plot) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
}

// logY puts the y axis on a log scale with decade ticks.
func logY(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
}

// addCurve draws y(x) as a line, split into separate segments wherever x or y is not finite (a gap
// marks where the quantity does not exist). label, when non-empty, is added to the legend once.
func addCurve(p *plot.Plot, xs, ys []float64, label string, c color.Color, style lineStyle, width vg.Length) error {
	if len(xs) != len(ys) {
		return fmt.Errorf("curve %q: %d x values but %d y values", label, len(xs), len(ys))
	}
	var seg plotter.XYs
	labelled := false
	flush := func() error {
		if len(seg) == 0 {
			return nil
		}
		l, err := plotter.NewLine(seg)
		if err != nil {
			return fmt.Errorf("curve %q: %w", label, err)
		}
		l.Color = c
		l.Width = width
		switch style {
		case dashed:
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		case dotted:
			l.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2)}
		}
		p.Add(l)
		if label != "" && !labelled {
			p.Legend.Add(label, l)
			labelled = true
		}
		seg = nil
		return nil
	}
	for i := range xs {
		if isFinite(xs[i]) && isFinite(ys[i]) {
			seg = append(seg, plotter.XY{X: xs[i], Y: ys[i]})
			continue
		}
		if err := flush(); err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if !labelled && label != "" {
		return fmt.Errorf("curve %q has no finite point", label)
	}
	return nil
}

// addPoints draws markers at the finite (x, y) pairs.
func addPoints(p *plot.Plot, xs, ys []float64, label string, c color.Color, shape draw.GlyphDrawer, radius vg.Length) error {
	if len(xs) != len(ys) {
		return fmt.Errorf("points %q: %d x values but %d y values", label, len(xs), len(ys))
	}
	var pts plotter.XYs
	for i := range xs {
		if isFinite(xs[i]) && isFinite(ys[i]) {
			pts = append(pts, plotter.XY{X: xs[i], Y: ys[i]})
		}
	}
	if len(pts) == 0 {
		return fmt.Errorf("points %q: no finite point", label)
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("points %q: %w", label, err)
	}
	s.GlyphStyle.Color = c
	s.GlyphStyle.Shape = shape
	s.GlyphStyle.Radius = radius
	p.Add(s)
	if label != "" {
		p.Legend.Add(label, s)
	}
	return nil
}

// addVLine draws a vertical line at x spanning [y0, y1].
func addVLine(p *plot.Plot, x, y0, y1 float64, label string, c color.Color, style lineStyle) error {
	return addCurve(p, []float64{x, x}, []float64{y0, y1}, label, c, style, vg.Points(1))
}

// addHLine draws a horizontal line at y spanning [x0, x1].
func addHLine(p *plot.Plot, y, x0, x1 float64, label string, c color.Color, style lineStyle) error {
	return addCurve(p, []float64{x0, x1}, []float64{y, y}, label, c, style, vg.Points(1))
}

// db returns 20·log10(x), the magnitude in decibels (−Inf for 0).
func db(x float64) float64 { return 20 * math.Log10(x) }

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
