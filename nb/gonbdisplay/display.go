// Package gonbdisplay shows nb figures, tables and panels inline in a GoNB (Go Jupyter kernel) notebook
// cell. It is the only package of the toolkit that imports GoNB's gonbui, so that the CLI and the
// library build figures without a live kernel.
//
// Every function sends one display_data message to the front end; they work in JupyterLab and in
// headless execution (nbconvert, nbclient), where the outputs are stored in the executed notebook.
package gonbdisplay

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/nb"
	"github.com/janpfeifer/gonb/gonbui"
)

// Figure shows fig inline as SVG (scalable, crisp at any zoom).
func Figure(fig *nb.Figure) error {
	svg, err := fig.SVG()
	if err != nil {
		return err
	}
	gonbui.DisplaySVG(string(svg))
	return nil
}

// FigurePNG shows fig inline as a PNG rendered at dpi dots per inch (use for very dense plots).
func FigurePNG(fig *nb.Figure, dpi float64) error {
	png, err := fig.PNG(dpi)
	if err != nil {
		return err
	}
	gonbui.DisplayPNG(png)
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
func Markdown(md string) { gonbui.DisplayMarkdown(md) }

// HTML shows an HTML snippet. Scripts in it run when the output is trusted, which JupyterLab grants to
// outputs produced in the current session.
func HTML(html string) { gonbui.DisplayHTML(html) }

// Table shows t as an HTML table.
func Table(t nb.Table) { gonbui.DisplayHTML(t.HTML()) }

// Panel shows the interactive panel p (HTML + JS, data embedded).
func Panel(p *nb.Panel) error {
	html, err := p.HTML()
	if err != nil {
		return err
	}
	gonbui.DisplayHTML(html)
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
	svg, _, err := nb.Save(fig, dir, "")
	if err != nil {
		return err
	}
	Markdown(fmt.Sprintf("*%s* (saved as `figures/%s`, `.png`)", fig.Caption, filepath.Base(svg)))
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
