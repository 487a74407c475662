package nb

import (
	"bytes"
	"github.com/fits-snn/fits/internal/owned"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
	"gonum.org/v1/plot"
)

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

func TestCatalogFiguresRenderAndSave(t *testing.T) {
	dir := t.TempDir()
	for _, e := range Catalog() {
		t.Run(e.Name, func(t *testing.T) {
			if !strings.HasPrefix(e.Name, e.Group+"_") {
				t.Errorf("name %q does not start with its group %q", e.Name, e.Group)
			}
			fig, err := e.Build()
			if err != nil {
				t.Fatal(err)
			}
			if fig.Name != e.Name {
				t.Errorf("built figure is named %q, catalog says %q", fig.Name, e.Name)
			}
			if fig.Caption == "" {
				t.Error("empty caption")
			}
			// Every panel title must say which response it shows.
			for _, row := range fig.Panels {
				for _, p := range row {
					title := p.Title.Text
					if !strings.Contains(title, "alone") && !strings.Contains(title, "closed-loop") && !strings.Contains(title, "DT-exact") {
						t.Errorf("title %q does not say which response it shows (TS/FS alone or closed loop)", title)
					}
				}
			}
			svgPath, pngPath, err := Save(fig, dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if svgPath != filepath.Join(dir, e.Name+".svg") || pngPath != filepath.Join(dir, e.Name+".png") {
				t.Errorf("paths %q, %q", svgPath, pngPath)
			}
			svg, err := os.ReadFile(svgPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(svg, svgFontFamily) || bytes.Contains(svg, []byte("font-family:Liberation Serif;")) {
				t.Error("SVG text does not name fallback fonts")
			}
			if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("</svg>")) || len(svg) < 2000 {
				t.Errorf("%s is not a plausible SVG (%d bytes)", svgPath, len(svg))
			}
			png, err := os.ReadFile(pngPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(png, pngMagic) || len(png) < 5000 {
				t.Errorf("%s is not a plausible PNG (%d bytes)", pngPath, len(png))
			}
		})
	}
	// No temporary files left behind by the atomic writes: the figures and the record of what was
	// written (package owned), nothing else.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*len(Catalog()) + 1; len(entries) != want {
		t.Errorf("%d files in the output folder, want %d", len(entries), want)
	}
	if _, err := os.Stat(filepath.Join(dir, owned.RecordFile)); err != nil {
		t.Errorf("no record of the figures written: %v", err)
	}
}

func TestSaveIsDeterministic(t *testing.T) {
	fig, err := Build("01_target_vs_kappa")
	if err != nil {
		t.Fatal(err)
	}
	a, err := fig.SVG()
	if err != nil {
		t.Fatal(err)
	}
	fig2, _ := Build("01_target_vs_kappa")
	b, err := fig2.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two builds of the same figure give different SVG")
	}
}

func TestSelect(t *testing.T) {
	names := func(es []Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	tests := []struct {
		only    []string
		want    []string
		wantErr bool
	}{
		{nil, names(Catalog()), false},
		{[]string{"01"}, []string{"01_target_magnitude", "01_target_vs_kappa"}, false},
		{[]string{"04", "01_target_vs_kappa"}, []string{"01_target_vs_kappa", "04_pole_vs_target"}, false},
		{[]string{"02_phase_plane", "02"}, []string{"02_jury_bounds", "02_phase_plane", "02_ct_vs_dt_target"}, false},
		{[]string{" 03_mixing_delay "}, []string{"03_mixing_delay"}, false},
		{[]string{"05"}, nil, true},
		{[]string{"01", "nope"}, nil, true},
	}
	for _, tc := range tests {
		got, err := Select(tc.only)
		if (err != nil) != tc.wantErr {
			t.Errorf("Select(%q) error %v, wantErr %v", tc.only, err, tc.wantErr)
			continue
		}
		if !slices.Equal(names(got), tc.want) {
			t.Errorf("Select(%q) = %q, want %q", tc.only, names(got), tc.want)
		}
	}
	if g := Groups(); !slices.Equal(g, []string{"01", "02", "03", "04"}) {
		t.Errorf("Groups() = %q", g)
	}
}

func TestSaveCatalogSubset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "figures")
	paths, err := SaveCatalog(dir, []string{"04"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "04_pole_vs_target.svg"), filepath.Join(dir, "04_pole_vs_target.png")}
	if !slices.Equal(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	for _, p := range want {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if _, err := SaveCatalog(dir, []string{"bogus"}); err == nil {
		t.Error("unknown group accepted")
	}
}

func TestFigureBuildersRejectBadInput(t *testing.T) {
	c := theory.SSC
	tests := []struct {
		name  string
		build func() (*Figure, error)
	}{
		{"no targets", func() (*Figure, error) { return TargetMagnitude(c, nil) }},
		{"negative target", func() (*Figure, error) { return TargetMagnitude(c, []float64{5, -1}) }},
		{"bad constants", func() (*Figure, error) {
			return TargetMagnitude(theory.Constants{TauM: 0.001, TauA: 0.2, Dt: 0.004}, []float64{5})
		}},
		{"phase plane below explicit limit", func() (*Figure, error) { return PhasePlane(c, 10, 1, 0, 100) }},
		{"phase plane above semi-implicit limit", func() (*Figure, error) { return PhasePlane(c, 80, 1, 0, 100) }},
		{"phase plane zero state", func() (*Figure, error) { return PhasePlane(c, 30, 0, 0, 100) }},
		{"jury fmax", func() (*Figure, error) { return JuryBounds(c, 0) }},
		{"ct-dt n", func() (*Figure, error) { return CTvsDTTarget(c, 50, 1) }},
		{"all-pass |β| ≥ 1", func() (*Figure, error) { return AllPassDelay([]float64{0.5, 1}) }},
		{"mixing λ > 1", func() (*Figure, error) { return MixingDelay(0.5, []float64{1.2}, 5) }},
		{"region β", func() (*Figure, error) { return NegativeDelayRegion([]float64{-1}) }},
		{"closed loop bad TS", func() (*Figure, error) {
			return TSvsClosedLoop(c, 20, theory.TS{Beta: []float64{1.5}, Lambda: []float64{0.5}})
		}},
	}
	for _, tc := range tests {
		if fig, err := tc.build(); err == nil {
			t.Errorf("%s: accepted, built %q", tc.name, fig.Name)
		}
	}
}

func TestFigureValidation(t *testing.T) {
	p := plot.New()
	tests := []struct {
		name string
		fig  *Figure
	}{
		{"nil", nil},
		{"no panels", &Figure{Name: "x"}},
		{"only nil panels", &Figure{Name: "x", Panels: [][]*plot.Plot{{nil}}}},
		{"bad name", &Figure{Name: "../x", Panels: [][]*plot.Plot{{p}}}},
	}
	for _, tc := range tests {
		if _, err := tc.fig.SVG(); err == nil {
			t.Errorf("%s: SVG accepted", tc.name)
		}
		if _, _, err := Save(tc.fig, t.TempDir(), ""); err == nil {
			t.Errorf("%s: Save accepted", tc.name)
		}
	}
	good := single("ok", "", p)
	if _, _, err := Save(good, t.TempDir(), "a/b"); err == nil {
		t.Error("Save accepted a file name with a slash")
	}
}

func TestFiguresDir(t *testing.T) {
	tests := []struct{ figs, gonb, want string }{
		{"/x/figs", "/y/notebooks", "/x/figs"},
		{"", "/y/notebooks", filepath.Join("/y", "figures")},
		{"", "", "figures"},
	}
	for _, tc := range tests {
		t.Setenv("FITS_FIGURES_DIR", tc.figs)
		t.Setenv("GONB_DIR", tc.gonb)
		if got := FiguresDir(); got != tc.want {
			t.Errorf("FiguresDir() with %q, %q = %q, want %q", tc.figs, tc.gonb, got, tc.want)
		}
	}
}

func BenchmarkCatalogPNG(b *testing.B) {
	for b.Loop() {
		for _, e := range Catalog() {
			fig, err := e.Build()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := fig.PNG(DefaultDPI); err != nil {
				b.Fatal(err)
			}
		}
	}
}
