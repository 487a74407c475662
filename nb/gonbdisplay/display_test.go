package gonbdisplay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fits-snn/fits/nb"
)

// Outside a GoNB kernel the display calls are no-ops, but they still render (and report render
// errors) and CatalogFigure still saves its files.
func TestCatalogFigureSavesOutsideAKernel(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FITS_FIGURES_DIR", dir)
	if err := CatalogFigure("04_pole_vs_target"); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".svg", ".png"} {
		if st, err := os.Stat(filepath.Join(dir, "04_pole_vs_target"+ext)); err != nil || st.Size() == 0 {
			t.Errorf("%s not saved: %v", ext, err)
		}
	}
	if err := CatalogFigure("no_such_figure"); err == nil {
		t.Error("unknown figure accepted")
	}
}

func TestDisplayReportsRenderErrors(t *testing.T) {
	empty := &nb.Figure{Name: "empty"}
	for name, show := range map[string]func() error{
		"Figure":    func() error { return Figure(empty) },
		"FigureSVG": func() error { return FigureSVG(empty) },
		"FigurePNG": func() error { return FigurePNG(empty, 100) },
		"Figures":   func() error { return Figures(empty) },
		"ShowAndSave": func() error {
			return ShowAndSave(empty, t.TempDir())
		},
	} {
		if err := show(); err == nil {
			t.Errorf("%s: a figure without panels was accepted", name)
		}
	}
	p, err := nb.NewPanel(nb.DefaultPanelConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := Panel(p); err != nil {
		t.Errorf("Panel: %v", err)
	}
}

func TestNeuronInspectorWithoutABrowserOrARun(t *testing.T) {
	t.Setenv("FITS_HEADLESS", "1")
	if err := NeuronInspector(nil, 8); err != nil {
		t.Errorf("headless: %v", err)
	}
	t.Setenv("FITS_HEADLESS", "")
	if err := NeuronInspector(nil, 8); err != nil {
		t.Errorf("no run: %v", err)
	}
}
