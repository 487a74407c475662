// Package gonbdisplay shows nb figures, tables and panels inline in a GoNB (Go Jupyter kernel) notebook
// cell. It is the only package of the toolkit that imports GoNB's gonbui, so that the CLI and the
// library build figures without a live kernel.
//
// Every function sends one display_data message to the front end and then waits until GoNB has
// received it (gonbui.Sync), so output is not lost when the cell's program exits right after
// displaying. They work in JupyterLab and in headless execution (nbconvert, nbclient), where the
// outputs are stored in the executed notebook.
package gonbdisplay

import (
	"fmt"
	"os"

	"github.com/fits-snn/fits/nb"
	"github.com/janpfeifer/gonb/gonbui"
)

// Figure shows fig inline as a PNG rendered at 2×96 dpi and drawn at the figure's size (96 CSS pixels
// per inch, never wider than the output area). PNG keeps gonum/plot's own font metrics, so labels and
// legends look exactly like the saved files whatever fonts the browser has.
func Figure(fig *nb.Figure) error {
	h, err := nb.FigureHTML(fig)
	if err != nil {
		return err
	}
	HTML(h)
	return nil
}

// FigureSVG shows fig inline as SVG (vector; text uses the browser's serif font, whose metrics may
// differ slightly from gonum/plot's).
func FigureSVG(fig *nb.Figure) error {
	svg, err := fig.SVG()
	if err != nil {
		return err
	}
	gonbui.DisplaySVG(string(svg))
	gonbui.Sync()
	return nil
}

// FigurePNG shows fig inline as a PNG rendered at dpi dots per inch, at its natural pixel size.
func FigurePNG(fig *nb.Figure, dpi float64) error {
	png, err := fig.PNG(dpi)
	if err != nil {
		return err
	}
	gonbui.DisplayPNG(png)
	gonbui.Sync()
	return nil
}

// Figures shows each figure in order, stopping at the first error.
func Figures(figs ...*nb.Figure) error {
	for _, f := range figs {
		if err := Figure(f); err != nil {
			return fmt.Errorf("figure %s: %w", f.Name, err)
		}
	}
	return nil
}

// Markdown shows Markdown text (with MathJax: $...$ and $$...$$ render as equations).
func Markdown(md string) {
	gonbui.DisplayMarkdown(md)
	gonbui.Sync()
}

// HTML shows an HTML snippet. Scripts in it run when the output is trusted, which JupyterLab grants to
// outputs produced in the current session.
func HTML(html string) {
	gonbui.DisplayHTML(html)
	gonbui.Sync()
}

// Table shows t as an HTML table.
func Table(t nb.Table) { HTML(t.HTML()) }

// Panel shows an interactive panel (HTML + JS, data embedded): nb.Panel, nb.GridPanel or any panel built
// on it.
func Panel(p interface{ HTML() (string, error) }) error {
	html, err := p.HTML()
	if err != nil {
		return err
	}
	HTML(html)
	return nil
}

// CatalogFigure builds the catalog figure name (see nb.Catalog), shows it with its caption, and saves
// it as SVG and PNG under nb.FiguresDir(), the same files `fits figures` writes.
func CatalogFigure(name string) error {
	fig, err := nb.Build(name)
	if err != nil {
		return err
	}
	return ShowAndSave(fig, nb.FiguresDir())
}

// ShowAndSave shows fig inline with its caption and saves it as dir/<fig.Name>.svg and .png.
func ShowAndSave(fig *nb.Figure, dir string) error {
	if err := Figure(fig); err != nil {
		return err
	}
	note, err := nb.SaveWithCaption(fig, dir)
	if err != nil {
		return err
	}
	Markdown(note)
	return nil
}

// Check ends the cell with a one-line error message and exit status 1 when err is not nil, which
// makes the notebook cell (and a headless run) fail; it does nothing otherwise.
func Check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
