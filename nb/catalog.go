package nb

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/theory"
)

// Entry is one figure of the catalog: the notebook group it belongs to ("01".."04"), its file stem and
// how to build it with the paper's settings.
type Entry struct {
	Group string
	Name  string
	Build func() (*Figure, error)
}

// Default settings of the catalog figures (the paper's SSC constants, τm = 0.04 s, τa = 0.2 s,
// Δt = 4 ms, unless a figure says otherwise).
var (
	// DefaultTargetsHz are the targets f* (Hz) of figure 01_target_magnitude.
	DefaultTargetsHz = []float64{2, 5, 10, 20, 50}
	// DefaultPhasePlaneHz is the target (Hz) of the phase-plane figure, between the explicit (13.8 Hz)
	// and semi-implicit (77.2 Hz) limits.
	DefaultPhasePlaneHz = 16.0
	// DefaultBetas are the all-pass coefficients of figure 03_allpass_delay.
	DefaultBetas = []float64{-0.5, 0, 0.5, 0.8}
	// DefaultMixBeta and DefaultLambdas set figure 03_mixing_delay.
	DefaultMixBeta = 0.5
	DefaultLambdas = []float64{0.1, 0.25, 0.4, 0.6, 0.9}
	// DefaultTS is the TS module (M = 2) of figure 03_ts_vs_closed_loop, at DefaultTSTargetHz.
	DefaultTS         = theory.TS{Beta: []float64{0.6, -0.3}, Lambda: []float64{0.3, 0.5}}
	DefaultTSTargetHz = 20.0
)

// Catalog lists every figure that `fits figures` writes, in order, built with the default settings.
func Catalog() []Entry {
	c := theory.SSC
	return []Entry{
		{"01", "01_target_magnitude", func() (*Figure, error) { return TargetMagnitude(c, DefaultTargetsHz) }},
		{"01", "01_target_vs_kappa", func() (*Figure, error) { return TargetVsKappa(c, 1, 100, 9) }},
		{"02", "02_jury_bounds", func() (*Figure, error) { return JuryBounds(c, 90) }},
		{"02", "02_phase_plane", func() (*Figure, error) { return PhasePlane(c, DefaultPhasePlaneHz, 0.8, 0, 2000) }},
		{"02", "02_ct_vs_dt_target", func() (*Figure, error) { return CTvsDTTarget(c, 75, 75) }},
		{"03", "03_allpass_delay", func() (*Figure, error) { return AllPassDelay(DefaultBetas) }},
		{"03", "03_mixing_delay", func() (*Figure, error) { return MixingDelay(DefaultMixBeta, DefaultLambdas, 8) }},
		{"03", "03_negative_delay_region", func() (*Figure, error) { return NegativeDelayRegion([]float64{0.5, -0.5}) }},
		{"03", "03_ts_vs_closed_loop", func() (*Figure, error) { return TSvsClosedLoop(c, DefaultTSTargetHz, DefaultTS) }},
		{"04", "04_pole_vs_target", func() (*Figure, error) { return PoleVsTarget(c) }},
	}
}

// Groups returns the distinct groups of the catalog, in order ("01", "02", ...).
func Groups() []string {
	var gs []string
	for _, e := range Catalog() {
		if !slices.Contains(gs, e.Group) {
			gs = append(gs, e.Group)
		}
	}
	return gs
}

// Select returns the catalog entries whose group or name is in only (all entries when only is empty).
// An element of only that matches nothing is an error.
func Select(only []string) ([]Entry, error) {
	all := Catalog()
	if len(only) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, w := range only {
		w = strings.TrimSpace(w)
		if !slices.ContainsFunc(all, func(e Entry) bool { return e.Group == w || e.Name == w }) {
			return nil, fmt.Errorf("no figure or group %q (groups: %s)", w, strings.Join(Groups(), ", "))
		}
		want[w] = true
	}
	var out []Entry // in catalog order
	for _, e := range all {
		if want[e.Group] || want[e.Name] {
			out = append(out, e)
		}
	}
	return out, nil
}

// Build builds the catalog figure with the given name.
func Build(name string) (*Figure, error) {
	for _, e := range Catalog() {
		if e.Name == name {
			return e.Build()
		}
	}
	return nil, fmt.Errorf("no figure %q", name)
}

// SaveCatalog builds the selected catalog figures (see Select) and saves each as SVG and PNG under dir.
// It returns the paths written, SVG then PNG per figure, and stops at the first error.
func SaveCatalog(dir string, only []string) ([]string, error) {
	entries, err := Select(only)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		fig, err := e.Build()
		if err != nil {
			return paths, fmt.Errorf("figure %s: %w", e.Name, err)
		}
		svg, png, err := Save(fig, dir, e.Name)
		if err != nil {
			return paths, fmt.Errorf("figure %s: %w", e.Name, err)
		}
		paths = append(paths, svg, png)
	}
	return paths, nil
}

// FiguresDir returns where notebooks save figures: $FITS_FIGURES_DIR when set, else the repository's
// figures/ folder beside the notebooks folder that GoNB reports in $GONB_DIR, else "figures".
func FiguresDir() string {
	if d := os.Getenv("FITS_FIGURES_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("GONB_DIR"); d != "" {
		return filepath.Join(d, "..", "figures")
	}
	return "figures"
}
