package nb

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/fits-snn/fits/internal/filesafe"
	"github.com/fits-snn/fits/internal/owned"
)

// Figure is one figure: a grid of gonum plots (panels) drawn together on one canvas.
type Figure struct {
	// Name is the file stem under figures/, e.g. "01_target_magnitude"; it starts with the
	// notebook number.
	Name string
	// Caption says in one sentence what the figure shows and which response (TS alone, FS alone or
	// the closed-loop neuron).
	Caption string
	// Panels holds the plots row by row: Panels[row][col]. A nil entry leaves its cell empty.
	Panels [][]*plot.Plot
	// Width and Height are the size of the whole canvas; zero selects 6 in × 4 in per panel.
	Width, Height vg.Length
}

// DefaultDPI is the PNG resolution used by Save.
const DefaultDPI = 150

var svgFontFamily = []byte(`font-family:'Liberation Serif','Times New Roman',Times,serif;`)

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// single returns a one-panel figure.
func single(name, caption string, p *plot.Plot) *Figure {
	return &Figure{Name: name, Caption: caption, Panels: [][]*plot.Plot{{p}}}
}

// sideBySide returns a figure of two panels in one row, 12 in wide and height tall.
func sideBySide(name, caption string, left, right *plot.Plot, height vg.Length) *Figure {
	return &Figure{Name: name, Caption: caption, Panels: [][]*plot.Plot{{left, right}}, Width: 12 * vg.Inch, Height: height}
}

// Size returns the canvas size, filling in the defaults (6 in × 4 in per panel), plus the height of the
// legends drawn below each row of panels.
func (f *Figure) Size() (w, h vg.Length) {
	rows, cols := len(f.Panels), 0
	for _, r := range f.Panels {
		cols = max(cols, len(r))
	}
	w, h = cmp.Or(f.Width, vg.Length(cols)*6*vg.Inch), cmp.Or(f.Height, vg.Length(rows)*4*vg.Inch)
	for _, r := range f.Panels {
		h += rowLegendHeight(r)
	}
	return w, h
}

// Legends are drawn below their plot, outside the data area, so that no legend covers a curve or a
// title: one entry per line, left-aligned with the data area, in a strip as tall as the row's largest
// legend.

// legendGap separates the x-axis label from the legend below it, and the legend from the canvas' edge.
const legendGap = 2 * vg.Millimeter

// legendHeight returns the height of p's legend (0 without entries).
func legendHeight(p *plot.Plot) vg.Length {
	if p == nil {
		return 0
	}
	return p.Legend.Rectangle(draw.Canvas{}).Size().Y
}

// rowLegendHeight returns the height of the legend strip below a row of panels (0 when none has one).
func rowLegendHeight(row []*plot.Plot) vg.Length {
	h := vg.Length(0)
	for _, p := range row {
		h = max(h, legendHeight(p))
	}
	if h > 0 {
		h += 2 * legendGap
	}
	return h
}

// PanelLayout is where a panel's parts land on the canvas: its data area and its legend (empty without
// entries). Figure.place computes them for drawing and for checks.
type PanelLayout struct {
	Data, Legend vg.Rectangle
}

// splitLegend divides a panel's canvas into the plot above and the legend strip of height lh below.
func splitLegend(p *plot.Plot, c draw.Canvas, lh vg.Length) (plotC, legendC draw.Canvas) {
	plotC = draw.Crop(c, 0, 0, lh, 0)
	legendC = c
	legendC.Min.Y = c.Min.Y + min(lh, legendGap)
	legendC.Max.Y = c.Min.Y + lh - legendGap
	legendC.Min.X = p.DataCanvas(plotC).Min.X
	return plotC, legendC
}

// validate checks that the figure has at least one panel and a usable name.
func (f *Figure) validate() error {
	if f == nil {
		return errors.New("nil figure")
	}
	if !validName.MatchString(f.Name) {
		return fmt.Errorf("figure name %q: use letters, digits, '_', '-', '.'", f.Name)
	}
	if !slices.ContainsFunc(f.Panels, func(r []*plot.Plot) bool { return slices.ContainsFunc(r, func(p *plot.Plot) bool { return p != nil }) }) {
		return fmt.Errorf("figure %s has no panels", f.Name)
	}
	return nil
}

// draw renders every panel onto c, tiled in a grid with aligned data areas, each legend below its panel.
func (f *Figure) draw(c vg.CanvasSizer) (err error) {
	_, err = f.place(c, true)
	return err
}

// place computes the layout of every panel on c and, with paint, draws them.
func (f *Figure) place(c vg.CanvasSizer, paint bool) (out [][]PanelLayout, err error) {
	// gonum/plot panics on degenerate input (e.g. an empty axis range); report it as an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing figure %s: %v", f.Name, r)
		}
	}()
	dc := draw.New(c)
	rows, cols := len(f.Panels), 0
	for _, r := range f.Panels {
		cols = max(cols, len(r))
	}
	grid := make([][]*plot.Plot, rows)
	for i, r := range f.Panels {
		grid[i] = make([]*plot.Plot, cols)
		copy(grid[i], r)
	}
	// The legend strips are taken from the bottom of each row's tile, so the data areas of a row stay
	// aligned with each other.
	var canvases [][]draw.Canvas
	if rows == 1 && cols == 1 {
		canvases = [][]draw.Canvas{{dc}}
	} else {
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
			PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		canvases = plot.Align(grid, tiles, dc)
	}
	out = make([][]PanelLayout, rows)
	for i := range grid {
		out[i] = make([]PanelLayout, cols)
		lh := rowLegendHeight(grid[i])
		for j, p := range grid[i] {
			if p == nil {
				continue
			}
			figureTicks(p)
			plotC, legendC := splitLegend(p, canvases[i][j], lh)
			out[i][j].Data = p.DataCanvas(plotC).Rectangle
			if size := p.Legend.Rectangle(draw.Canvas{}).Size(); size.Y > 0 {
				out[i][j].Legend = vg.Rectangle{Min: vg.Point{X: legendC.Min.X, Y: legendC.Max.Y - size.Y}, Max: vg.Point{X: legendC.Min.X + size.X, Y: legendC.Max.Y}}
			}
			if !paint {
				continue
			}
			leg := p.Legend
			p.Legend = plot.NewLegend()
			p.Draw(plotC)
			p.Legend = leg
			leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
			leg.Draw(legendC)
		}
	}
	return out, nil
}

// SVG renders the figure as an SVG document.
func (f *Figure) SVG() ([]byte, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	w, h := f.Size()
	c := vgsvg.New(w, h)
	if err := f.draw(c); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figure %s: writing SVG: %w", f.Name, err)
	}
	// gonum/plot measures text with Liberation fonts but names only that family; offer the
	// metric-compatible Times New Roman and a generic serif to viewers that lack it.
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Serif;"), svgFontFamily), nil
}

// PNG renders the figure as a PNG image at dpi dots per inch (DefaultDPI when dpi ≤ 0).
func (f *Figure) PNG(dpi float64) ([]byte, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	if dpi <= 0 {
		dpi = DefaultDPI
	}
	w, h := f.Size()
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(int(dpi)))
	if err := f.draw(c); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figure %s: writing PNG: %w", f.Name, err)
	}
	return buf.Bytes(), nil
}

// Save writes fig as dir/name.svg and dir/name.png (DefaultDPI), creating dir if needed. An empty name
// uses fig.Name. It returns the two paths written.
func Save(fig *Figure, dir, name string) (svgPath, pngPath string, err error) {
	if fig == nil {
		return "", "", errors.New("nil figure")
	}
	name = cmp.Or(name, fig.Name)
	if !validName.MatchString(name) {
		return "", "", fmt.Errorf("figure file name %q: use letters, digits, '_', '-', '.'", name)
	}
	svg, err := fig.SVG()
	if err != nil {
		return "", "", err
	}
	png, err := fig.PNG(DefaultDPI)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	svgPath = filepath.Join(dir, name+".svg")
	pngPath = filepath.Join(dir, name+".png")
	if err := filesafe.WriteFile(svgPath, svg); err != nil {
		return "", "", err
	}
	if err := filesafe.WriteFile(pngPath, png); err != nil {
		return "", "", err
	}
	// Recorded as written by fits, so that `fits figures` may replace them later (package owned).
	if err := owned.Note(dir, name+".svg", name+".png"); err != nil {
		return "", "", err
	}
	return svgPath, pngPath, nil
}
