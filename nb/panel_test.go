package nb

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
)

func smallPanelConfig() PanelConfig {
	return PanelConfig{
		TauM: []float64{0.02, 0.04}, TauA: []float64{0.2}, FStar: []float64{5, 20, 90},
		Dt: 0.004, FMin: 0.5, FMax: 200, Points: 200, FloorDB: -40, Initial: [3]int{1, 0, 1},
	}
}

func TestPanelCurves(t *testing.T) {
	p, err := NewPanel(smallPanelConfig())
	if err != nil {
		t.Fatal(err)
	}
	nyq := 1 / (2 * 0.004)
	for i := range 2 {
		for k, fs := range []float64{5, 20, 90} {
			f, ct, dt, err := p.Curves(i, 0, k)
			if err != nil {
				t.Fatal(err)
			}
			// The CT curve is drawn through its peak: 0 dB (within 0.1 dB) at f* itself.
			best := 0
			for n := range ct {
				if ct[n] > ct[best] {
					best = n
				}
			}
			at := slices.Index(f, fs)
			if at < 0 || ct[best] > 0.005 || ct[at] < -0.1 {
				t.Errorf("τm idx %d, f* = %g: CT peak %g dB at %g Hz", i, fs, ct[best], f[best])
			}
			below := false
			for n := range f {
				if f[n] >= nyq && !math.IsNaN(dt[n]) {
					t.Errorf("DT value %g at %g Hz above Nyquist", dt[n], f[n])
				}
				if f[n] < nyq && (math.IsNaN(dt[n]) || dt[n] > 0.005) {
					t.Errorf("DT value %g dB at %g Hz", dt[n], f[n])
				}
				below = below || ct[n] < -40
			}
			// Values below the axis are kept (the plot cuts them at its edge), never raised to the floor.
			if fs == 90 && !below {
				t.Errorf("f* = 90 Hz: no CT value below −40 dB; the curve was flattened onto the floor")
			}
		}
	}
	// f* = 90 Hz is above the semi-implicit limit (77.2 Hz at SSC constants): flagged unstable.
	unstable, _ := p.Series("mag", "dt", 1, 0, 2)
	stable, _ := p.Series("mag", "dt", 1, 0, 1)
	if !unstable.Alt || stable.Alt {
		t.Errorf("stability flags: f* = 90 Hz drawn unstable %v, f* = 20 Hz %v", unstable.Alt, stable.Alt)
	}
	// The realized DT target is Theorem 2's.
	k20, _ := theory.SSC.KappaForTargetHz(20)
	want, _ := theory.SSC.DTTargetHz(k20)
	if got, _ := p.Series("mag", "fdt", 1, 0, 1); len(got.X) != 1 || math.Abs(got.X[0]-want) > 1e-3*want {
		t.Errorf("f*_DT = %v, want %g", got.X, want)
	}
	if _, _, _, err := p.Curves(2, 0, 0); err == nil {
		t.Error("out-of-range slider position accepted")
	}
}

func TestPanelHTML(t *testing.T) {
	cfg := smallPanelConfig()
	p, err := NewPanel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := p.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(h, `type="range"`); n != 3 {
		t.Errorf("%d range inputs, want 3", n)
	}
	for _, want := range []string{`id="` + p.ID + `"`, `data-param="taum"`, `data-param="taua"`, `data-param="fstar"`,
		`max="1"`, `max="0"`, `max="2"`, `data-curve="ct"`, `data-curve="dt"`, "<svg", "<script>", "addEventListener('input'"} {
		if !strings.Contains(h, want) {
			t.Errorf("panel HTML lacks %q", want)
		}
	}
	// The initial paths are drawn in Go from the initial slider position.
	f, ct, _, _ := p.Curves(1, 0, 1)
	ax := newGridAxes(p.plots[0])
	if d := ax.path(SeriesLine, PanelData{X: f, Y: ct}, nil); !strings.Contains(h, `data-curve="ct" d="`+d+`"`) || len(d) < 100 {
		t.Errorf("initial CT path missing or short (%d chars)", len(d))
	}
	// The embedded data parses and holds every grid combination.
	d := embeddedData(t, h)
	if n := len(cfg.TauM) * len(cfg.TauA) * len(cfg.FStar); len(d.Frames) != n {
		t.Errorf("embedded data has %d frames, want %d", len(d.Frames), n)
	}
	if g := d.Plots[0].Grid; g < 0 || len(d.Arrays[g]) != cfg.Points {
		t.Errorf("frequency grid of %d points, want %d", len(d.Arrays[g]), cfg.Points)
	}
	if strings.Contains(h, "<script>") && !strings.Contains(d.Readouts[0], "κ*") {
		t.Errorf("read-out %q", d.Readouts[0])
	}
	// Two panels on one page get different ids.
	q, _ := NewPanel(cfg)
	if q.ID == p.ID {
		t.Error("two panels share an id")
	}
}

func TestDefaultPanelSize(t *testing.T) {
	p, err := NewPanel(DefaultPanelConfig())
	if err != nil {
		t.Fatal(err)
	}
	h, err := p.HTML()
	if err != nil {
		t.Fatal(err)
	}
	// The panel is embedded in notebooks and exported HTML: keep it small.
	if len(h) > 600_000 {
		t.Errorf("default panel is %d bytes", len(h))
	}
}

func TestNewPanelRejectsBadConfig(t *testing.T) {
	mod := func(f func(*PanelConfig)) PanelConfig { c := smallPanelConfig(); f(&c); return c }
	tests := []struct {
		name string
		cfg  PanelConfig
	}{
		{"empty τm", mod(func(c *PanelConfig) { c.TauM = nil })},
		{"one point", mod(func(c *PanelConfig) { c.Points = 1 })},
		{"inverted range", mod(func(c *PanelConfig) { c.FMin, c.FMax = 10, 1 })},
		{"floor ≥ 0", mod(func(c *PanelConfig) { c.FloorDB = 0 })},
		{"initial out of range", mod(func(c *PanelConfig) { c.Initial = [3]int{0, 1, 0} })},
		{"Δt ≥ τm", mod(func(c *PanelConfig) { c.Dt = 0.03 })},
		{"negative target", mod(func(c *PanelConfig) { c.FStar = []float64{-3} })},
	}
	for _, tc := range tests {
		if _, err := NewPanel(tc.cfg); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func BenchmarkDefaultPanel(b *testing.B) {
	for b.Loop() {
		p, err := NewPanel(DefaultPanelConfig())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.HTML(); err != nil {
			b.Fatal(err)
		}
	}
}
