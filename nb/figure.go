package nb

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/fits-snn/fits/internal/atomicfile"
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

// Size returns the canvas size, filling in the defaults (6 in × 4 in per panel).
func (f *Figure) Size() (w, h vg.Length) {
	rows, cols := len(f.Panels), 0
	for _, r := range f.Panels {
		cols = max(cols, len(r))
	}
	w, h = f.Width, f.Height
	if w == 0 {
		w = vg.Length(cols) * 6 * vg.Inch
	}
	if h == 0 {
		h = vg.Length(rows) * 4 * vg.Inch
	}
	return w, h
}

// validate checks that the figure has at least one panel and a usable name.
func (f *Figure) validate() error {
	if f == nil {
		return errors.New("nil figure")
	}
	if !validName.MatchString(f.Name) {
		return fmt.Errorf("figure name %q: use letters, digits, '_', '-', '.'", f.Name)
	}
	n := 0
	for _, r := range f.Panels {
		for _, p := range r {
			if p != nil {
				n++
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("figure %s has no panels", f.Name)
	}
	return nil
}

// draw renders every panel onto c, tiled in a grid with aligned data areas.
func (f *Figure) draw(c vg.CanvasSizer) (err error) {
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
	if rows == 1 && cols == 1 {
		f.Panels[0][0].Draw(dc)
		return nil
	}
	grid := make([][]*plot.Plot, rows)
	for i, r := range f.Panels {
		grid[i] = make([]*plot.Plot, cols)
		copy(grid[i], r)
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	return nil
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
	if name == "" {
		name = fig.Name
	}
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
	if err := atomicfile.WriteFile(svgPath, svg); err != nil {
		return "", "", err
	}
	if err := atomicfile.WriteFile(pngPath, png); err != nil {
		return "", "", err
	}
	// Recorded as written by fits, so that `fits figures` may replace them later (package owned).
	if err := owned.Note(dir, name+".svg", name+".png"); err != nil {
		return "", "", err
	}
	return svgPath, pngPath, nil
}
