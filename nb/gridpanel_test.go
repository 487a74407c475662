package nb

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// embeddedJSON is the data a GridPanel's script receives.
type embeddedJSON struct {
	Controls []struct {
		Name   string    `json:"name"`
		Values []float64 `json:"values"`
		Labels []string  `json:"labels"`
		Toggle bool      `json:"toggle"`
	} `json:"controls"`
	Plots []struct {
		Name   string `json:"name"`
		Grid   int    `json:"grid"`
		Series []struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
		} `json:"series"`
	} `json:"plots"`
	Arrays   [][]*float64 `json:"arrays"`
	Readouts []string     `json:"readouts"`
	Frames   [][]int      `json:"frames"`
}

func embeddedData(t *testing.T, h string) embeddedJSON {
	t.Helper()
	m := regexp.MustCompile(`var D = (\{.*\}), ID = `).FindStringSubmatch(h)
	if m == nil {
		t.Fatal("no embedded data")
	}
	var d embeddedJSON
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	return d
}

// toyPanel is a panel over a (slope) slider and a (shift) toggle: y = a·x + b on x ∈ [1, 10], with a
// marker at x = a and the band [1, a].
func toyPanel(t *testing.T) *GridPanel {
	t.Helper()
	grid := []float64{1, 2, 5, 10}
	g, err := NewGridPanel(GridPanelSpec{
		Controls: []PanelControl{
			{Name: "a", Label: "a", Values: []float64{1, 2, 3}, Initial: 1},
			{Name: "b", Label: "shift", Values: []float64{0, 1}, Labels: []string{"off", "on"}, Toggle: true},
		},
		Plots: []PanelPlot{{Name: "p", X: PanelAxis{Min: 1, Max: 10, Log: true}, Y: PanelAxis{Min: 0, Max: 40}, Grid: grid,
			Series: []PanelSeries{{Name: "line"}, {Name: "mark", Kind: SeriesVLines}, {Name: "band", Kind: SeriesBands},
				{Name: "dot", Kind: SeriesPoints}, {Name: "h", Kind: SeriesHLines}}}},
		Frame: func(at []int) (PanelFrame, error) {
			a, b := []float64{1, 2, 3}[at[0]], float64(at[1])
			y := make([]float64, len(grid))
			for i, x := range grid {
				y[i] = a*x + b
			}
			y[2] = math.NaN() // the pen lifts
			return PanelFrame{Readout: "a = " + []string{"1", "2", "3"}[at[0]], Series: [][]PanelData{{
				{Y: y}, {X: []float64{a}}, {X: []float64{1, a}}, {X: []float64{a}, Y: []float64{a + b}, Alt: b > 0}, {Y: []float64{20}},
			}}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGridPanelFramesAndIndex(t *testing.T) {
	g := toyPanel(t)
	if g.Len() != 6 {
		t.Fatalf("%d frames, want 6", g.Len())
	}
	idx, err := g.Index([]int{2, 1})
	if err != nil || idx != 5 {
		t.Errorf("Index(2, 1) = %d, %v; want 5 (row-major, last control fastest)", idx, err)
	}
	d, err := g.Series("p", "line", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{4, 7, math.NaN(), 31}; len(d.X) != 4 || d.Y[0] != want[0] || d.Y[1] != want[1] || !math.IsNaN(d.Y[2]) || d.Y[3] != want[3] {
		t.Errorf("line at (2, 1): x %v y %v", d.X, d.Y)
	}
	// A band, marker or point series without X draws nothing (it does not take the plot's grid).
	empty, err := NewGridPanel(GridPanelSpec{
		Controls: []PanelControl{{Name: "a", Values: []float64{1}}},
		Plots: []PanelPlot{{Name: "p", X: PanelAxis{Min: 1, Max: 10}, Y: PanelAxis{Min: 0, Max: 1}, Grid: []float64{1, 2, 3, 4},
			Series: []PanelSeries{{Name: "band", Kind: SeriesBands}, {Name: "mark", Kind: SeriesVLines}}}},
		Frame: func([]int) (PanelFrame, error) { return PanelFrame{Series: [][]PanelData{{{}, {}}}}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	eh, _ := empty.HTML()
	if !strings.Contains(eh, `data-curve="band" d=""`) || !strings.Contains(eh, `data-curve="mark" d=""`) || !strings.Contains(eh, ",0,") {
		t.Error("a series with no X is drawn on the plot's grid")
	}
	if _, err := g.Index([]int{3, 0}); err == nil {
		t.Error("out-of-range index accepted")
	}
	if _, err := g.Series("p", "nope", 0, 0); err == nil {
		t.Error("unknown series accepted")
	}
}

func TestGridPanelHTMLMatchesFrames(t *testing.T) {
	g := toyPanel(t)
	h, err := g.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-param="a" type="range" min="0" max="2" step="1" value="1"`, `data-param="b" type="checkbox"`,
		`data-plot="p" data-axes="{&#34;x0&#34;:56,`, `data-curve="line"`, `data-curve="band"`, `data-role="readout"`, `>a = 2<`} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
	// The initial line is drawn in Go: the pen lifts at the NaN.
	ax := newGridAxes(g.plots[0])
	line := ax.path(SeriesLine, PanelData{Y: []float64{2, 4, math.NaN(), 20}}, []float64{1, 2, 5, 10})
	if strings.Count(line, "M") != 2 || !strings.Contains(h, `d="`+line+`"`) {
		t.Errorf("initial line %q not in the HTML", line)
	}
	// Pixel mapping: x = 1 at the left edge, x = 10 at the right; y = 0 at the bottom, 40 at the top.
	if ax.px(1) != ax.X0 || ax.px(10) != ax.X1 || ax.py(0) != ax.Y1 || ax.py(40) != ax.Y0 {
		t.Errorf("axes map corners to (%g, %g, %g, %g)", ax.px(1), ax.px(10), ax.py(0), ax.py(40))
	}
	d := embeddedData(t, h)
	if len(d.Frames) != 6 || len(d.Controls) != 2 || !d.Controls[1].Toggle || d.Controls[1].Labels[1] != "on" {
		t.Fatalf("embedded controls %+v, %d frames", d.Controls, len(d.Frames))
	}
	// Every frame decodes to the stored series: [readout, (x, y, alt) per series].
	for f := range 6 {
		at := []int{f / 2, f % 2}
		fr := d.Frames[f]
		if len(fr) != 1+3*5 {
			t.Fatalf("frame %d has %d entries", f, len(fr))
		}
		want, _ := g.Frame(at...)
		if d.Readouts[fr[0]] != want.Readout {
			t.Errorf("frame %d read-out %q, want %q", f, d.Readouts[fr[0]], want.Readout)
		}
		for s := range 5 {
			xi, yi, alt := fr[1+3*s], fr[2+3*s], fr[3+3*s]
			w := want.Series[0][s]
			if (xi < 0) != (w.X == nil) || (alt == 1) != w.Alt || len(d.Arrays[yi]) != len(w.Y) {
				t.Errorf("frame %d series %d: x %d y %d alt %d, want %+v", f, s, xi, yi, alt, w)
			}
			for n, v := range d.Arrays[yi] {
				if (v == nil) != math.IsNaN(w.Y[n]) || (v != nil && *v != w.Y[n]) {
					t.Errorf("frame %d series %d value %d: %v, want %g", f, s, n, v, w.Y[n])
				}
			}
		}
	}
	// Identical curves are stored once: the hline (20) and the band start are shared by every frame.
	if len(d.Arrays) > 1+6*2+3+3+1+3 {
		t.Errorf("%d distinct arrays: curves are not shared", len(d.Arrays))
	}
}

func TestNewGridPanelRejects(t *testing.T) {
	ok := func() GridPanelSpec {
		return GridPanelSpec{
			Controls: []PanelControl{{Name: "a", Values: []float64{1, 2}}},
			Plots:    []PanelPlot{{Name: "p", X: PanelAxis{Min: 0, Max: 1}, Y: PanelAxis{Min: 0, Max: 1}, Grid: []float64{0, 1}, Series: []PanelSeries{{Name: "s"}}}},
			Frame:    func([]int) (PanelFrame, error) { return PanelFrame{Series: [][]PanelData{{{Y: []float64{0, 1}}}}}, nil },
		}
	}
	if _, err := NewGridPanel(ok()); err != nil {
		t.Fatalf("valid spec rejected: %v", err)
	}
	cases := map[string]func(*GridPanelSpec){
		"bad control name":   func(s *GridPanelSpec) { s.Controls[0].Name = "a b" },
		"toggle of 3":        func(s *GridPanelSpec) { s.Controls[0].Toggle, s.Controls[0].Values = true, []float64{1, 2, 3} },
		"initial":            func(s *GridPanelSpec) { s.Controls[0].Initial = 2 },
		"labels":             func(s *GridPanelSpec) { s.Controls[0].Labels = []string{"x"} },
		"log axis at 0":      func(s *GridPanelSpec) { s.Plots[0].X.Log = true },
		"empty axis":         func(s *GridPanelSpec) { s.Plots[0].Y.Max = 0 },
		"unknown kind":       func(s *GridPanelSpec) { s.Plots[0].Series[0].Kind = "pie" },
		"wrong series count": func(s *GridPanelSpec) { s.Plots[0].Series = append(s.Plots[0].Series, PanelSeries{Name: "t"}) },
		"short curve": func(s *GridPanelSpec) {
			s.Frame = func([]int) (PanelFrame, error) { return PanelFrame{Series: [][]PanelData{{{Y: []float64{0}}}}}, nil }
		},
		"odd bands": func(s *GridPanelSpec) {
			s.Plots[0].Series[0].Kind = SeriesBands
			s.Frame = func([]int) (PanelFrame, error) { return PanelFrame{Series: [][]PanelData{{{X: []float64{0}}}}}, nil }
		},
	}
	for name, mod := range cases {
		s := ok()
		mod(&s)
		if _, err := NewGridPanel(s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestAutoTicks(t *testing.T) {
	if got := autoTicks(PanelAxis{Min: 0.1, Max: 125, Log: true}); len(got) != 4 || got[0] != 0.1 || got[3] != 100 {
		t.Errorf("log ticks %v", got)
	}
	if got := autoTicks(PanelAxis{Min: -1, Max: 1}); len(got) != 5 || got[2] != 0 {
		t.Errorf("linear ticks %v", got)
	}
}

// Len returns the number of frames (the product of the controls' sizes).
func (g *GridPanel) Len() int { return len(g.frames) }

// Set returns the grid position a reader reaches from the panel's initial position by moving the named
// controls to the given values (control name → value, as in the root's data-state); the other controls
// keep their initial positions. A name that is not a control, or a value that is not one of its stops,
// is an error: that setting cannot be reached with the panel's own controls.
func (g *GridPanel) Set(values map[string]float64) ([]int, error) {
	at := make([]int, len(g.controls))
	for i, c := range g.controls {
		at[i] = c.Initial
	}
	for name, v := range values {
		i := slices.IndexFunc(g.controls, func(c PanelControl) bool { return c.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("panel: no control %q", name)
		}
		c := g.controls[i]
		k := slices.IndexFunc(c.Values, func(x float64) bool { return math.Abs(x-v) <= 1e-9*math.Max(1, math.Abs(v)) })
		if k < 0 {
			return nil, fmt.Errorf("panel: control %s has no stop at %g (stops %v)", name, v, c.Values)
		}
		at[i] = k
	}
	return at, nil
}

// Initial returns the panel's initial values (control name → value), as data-state reports them.
func (g *GridPanel) Initial() map[string]float64 {
	out := map[string]float64{}
	for _, c := range g.controls {
		out[c.Name] = c.Values[c.Initial]
	}
	return out
}
