package nb

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A GridPanel is an interactive HTML/JS figure precomputed on a grid: every combination of its controls'
// values is computed in Go (by fits/theory or fits/sim) when the panel is built, and embedded as JSON;
// the browser only picks the frame that the sliders and toggles index and redraws SVG paths. It therefore
// works without a kernel: headless, in exported HTML, in any browser. The figure drawn in Go for the
// initial position shows even where scripts do not run.
//
// Conventions the browser test relies on: every input carries data-param = the control's name, its value
// label data-value = the name; every SVG path data-curve = the series' name inside an <svg> with
// data-plot = the plot's name; the read-out has data-role=readout; the root element's data-index is the
// frame shown and data-state the controls' current values as JSON.
type GridPanel struct {
	// ID is the HTML id of the panel's root element; NewGridPanel picks a random one.
	ID       string
	controls []PanelControl
	plots    []PanelPlot
	frames   []PanelFrame
	digits   int
	stack    bool
}

// PanelControl is one control of a GridPanel: a slider over Values, or a checkbox over two values
// (Toggle: unchecked is Values[0], checked Values[1]).
type PanelControl struct {
	Name    string    // data-param of the input: letters, digits and '_' only
	Label   string    // text left of the input
	Values  []float64 // the values the grid takes
	Labels  []string  // text right of the input, one per value; nil: the value itself
	Toggle  bool      // a checkbox instead of a slider (exactly two values)
	Initial int       // initial index into Values
}

// PanelAxis is one axis of a PanelPlot.
type PanelAxis struct {
	Label    string
	Min, Max float64
	Log      bool      // log10 scale (Min > 0)
	Ticks    []float64 // tick positions; nil: chosen automatically
}

// SeriesKind is how a PanelSeries is drawn.
type SeriesKind string

// The kinds of series.
const (
	SeriesLine   SeriesKind = "line"   // a polyline through (X[n], Y[n]); the pen lifts at NaN
	SeriesVLines SeriesKind = "vlines" // a full-height vertical line at every X[n]
	SeriesHLines SeriesKind = "hlines" // a full-width horizontal line at every Y[n]
	SeriesBands  SeriesKind = "bands"  // shaded full-height intervals [X[2n], X[2n+1]]
	SeriesPoints SeriesKind = "points" // a circle at every (X[n], Y[n])
)

// PanelSeries is the style of one series of a PanelPlot; its data come from the frames.
type PanelSeries struct {
	Name    string // data-curve of its SVG path
	Legend  string // legend text; empty: not in the legend
	Kind    SeriesKind
	Color   string  // CSS colour
	Width   float64 // stroke width; 0 means 2 (1 for vlines and hlines)
	Dash    string  // SVG stroke-dasharray; "" is solid
	AltDash string  // dash pattern of frames that set PanelData.Alt (e.g. an unstable regime)
	Opacity float64 // fill opacity of bands; 0 means 0.18
}

// PanelPlot is one SVG plot of a GridPanel.
type PanelPlot struct {
	Name   string // data-plot of its <svg>
	Title  string // shown above the plot (name the paper's equation, theorem or figure)
	X, Y   PanelAxis
	Grid   []float64 // x values shared by line series whose frame data have no X
	Width  int       // pixels; 0 means 440
	Height int       // pixels; 0 means 260
	Series []PanelSeries
	// Top, when set, is a second axis along the top edge: labelled ticks at positions in X's units (e.g.
	// the instantaneous frequency of a chirp against time).
	Top *PanelTopAxis
}

// PanelTopAxis is a second x axis drawn along a plot's top edge.
type PanelTopAxis struct {
	Label  string
	Ticks  []float64 // positions in the plot's X units
	Labels []string  // one per tick
}

// PanelData is the data of one series in one frame.
type PanelData struct {
	X, Y []float64
	Alt  bool // draw with the series' AltDash
}

// PanelFrame is everything drawn at one grid position: Series[p][s] is series s of plot p.
type PanelFrame struct {
	Series  [][]PanelData
	Readout string
}

// GridPanelSpec describes a GridPanel: its controls, plots, and the function that computes one frame.
type GridPanelSpec struct {
	Controls []PanelControl
	Plots    []PanelPlot
	// Frame computes the frame at grid position at (one index into each control's Values).
	Frame func(at []int) (PanelFrame, error)
	// Digits is the number of significant digits kept in the embedded data; 0 means 4.
	Digits int
	// Stack draws the plots in one column, left edges aligned (plots of equal width and x range then
	// share their x positions), whatever the width of the page; otherwise they wrap side by side.
	Stack bool
}

var panelName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// NewGridPanel checks spec and computes every frame.
func NewGridPanel(spec GridPanelSpec) (*GridPanel, error) {
	if len(spec.Controls) == 0 || len(spec.Plots) == 0 || spec.Frame == nil {
		return nil, fmt.Errorf("panel: need controls, plots and a frame function")
	}
	g := &GridPanel{ID: "fits-panel-" + randomHex(6), digits: cmp.Or(spec.Digits, 4), stack: spec.Stack}
	n := 1
	for _, c := range spec.Controls {
		if !panelName.MatchString(c.Name) || slices.ContainsFunc(g.controls, func(d PanelControl) bool { return d.Name == c.Name }) {
			return nil, fmt.Errorf("panel: control name %q is not a fresh identifier", c.Name)
		}
		if len(c.Values) == 0 || (c.Toggle && len(c.Values) != 2) {
			return nil, fmt.Errorf("panel: control %s has %d values", c.Name, len(c.Values))
		}
		if c.Labels == nil {
			for _, v := range c.Values {
				c.Labels = append(c.Labels, strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		if len(c.Labels) != len(c.Values) {
			return nil, fmt.Errorf("panel: control %s has %d labels for %d values", c.Name, len(c.Labels), len(c.Values))
		}
		if c.Initial < 0 || c.Initial >= len(c.Values) {
			return nil, fmt.Errorf("panel: control %s: initial index %d out of range [0, %d)", c.Name, c.Initial, len(c.Values))
		}
		g.controls = append(g.controls, c)
		n *= len(c.Values)
	}
	for _, p := range spec.Plots {
		if !panelName.MatchString(p.Name) {
			return nil, fmt.Errorf("panel: plot name %q is not an identifier", p.Name)
		}
		for _, a := range []PanelAxis{p.X, p.Y} {
			if !(a.Max > a.Min) || (a.Log && !(a.Min > 0)) || math.IsInf(a.Max, 0) || math.IsInf(a.Min, 0) {
				return nil, fmt.Errorf("panel: plot %s: axis %q range [%g, %g] is not valid", p.Name, a.Label, a.Min, a.Max)
			}
		}
		if p.Top != nil && len(p.Top.Labels) != len(p.Top.Ticks) {
			return nil, fmt.Errorf("panel: plot %s: %d top-axis labels for %d ticks", p.Name, len(p.Top.Labels), len(p.Top.Ticks))
		}
		p.Width, p.Height = cmp.Or(p.Width, 440), cmp.Or(p.Height, 260)
		for i, s := range p.Series {
			if !panelName.MatchString(s.Name) {
				return nil, fmt.Errorf("panel: plot %s: series name %q is not an identifier", p.Name, s.Name)
			}
			switch s.Kind {
			case SeriesLine, SeriesVLines, SeriesHLines, SeriesBands, SeriesPoints:
			case "":
				p.Series[i].Kind = SeriesLine
			default:
				return nil, fmt.Errorf("panel: plot %s: series %s has unknown kind %q", p.Name, s.Name, s.Kind)
			}
		}
		p.Grid = roundedAll(p.Grid, g.digits)
		g.plots = append(g.plots, p)
	}
	at := make([]int, len(g.controls))
	for f := range n {
		g.position(f, at)
		fr, err := spec.Frame(append([]int(nil), at...))
		if err != nil {
			return nil, fmt.Errorf("panel: frame %v: %w", g.state(at), err)
		}
		if len(fr.Series) != len(g.plots) {
			return nil, fmt.Errorf("panel: frame %v has %d plots, want %d", g.state(at), len(fr.Series), len(g.plots))
		}
		for p, ss := range fr.Series {
			if len(ss) != len(g.plots[p].Series) {
				return nil, fmt.Errorf("panel: frame %v, plot %s: %d series, want %d", g.state(at), g.plots[p].Name, len(ss), len(g.plots[p].Series))
			}
			for s := range ss {
				d := &ss[s]
				kind := g.plots[p].Series[s].Kind
				d.X, d.Y = roundedAll(d.X, g.digits), roundedAll(d.Y, g.digits)
				if kind != SeriesLine && d.X == nil {
					d.X = []float64{} // only line series take the plot's grid: no X is no marks
				}
				switch {
				case kind == SeriesLine && d.X == nil && len(d.Y) != len(g.plots[p].Grid):
					return nil, fmt.Errorf("panel: frame %v, %s/%s: %d values on a grid of %d", g.state(at), g.plots[p].Name, g.plots[p].Series[s].Name, len(d.Y), len(g.plots[p].Grid))
				case (kind == SeriesLine || kind == SeriesPoints) && d.X != nil && len(d.X) != len(d.Y):
					return nil, fmt.Errorf("panel: frame %v, %s/%s: %d x and %d y values", g.state(at), g.plots[p].Name, g.plots[p].Series[s].Name, len(d.X), len(d.Y))
				case kind == SeriesBands && len(d.X)%2 != 0:
					return nil, fmt.Errorf("panel: frame %v, %s/%s: bands need pairs of x", g.state(at), g.plots[p].Name, g.plots[p].Series[s].Name)
				}
			}
		}
		g.frames = append(g.frames, fr)
	}
	return g, nil
}

// Index returns the frame index of grid position at: row-major over the controls, the last fastest.
func (g *GridPanel) Index(at []int) (int, error) {
	if len(at) != len(g.controls) {
		return 0, fmt.Errorf("panel: %d indices for %d controls", len(at), len(g.controls))
	}
	idx := 0
	for i, c := range g.controls {
		if at[i] < 0 || at[i] >= len(c.Values) {
			return 0, fmt.Errorf("panel: control %s: index %d out of range [0, %d)", c.Name, at[i], len(c.Values))
		}
		idx = idx*len(c.Values) + at[i]
	}
	return idx, nil
}

// position writes the grid position of frame f into at.
func (g *GridPanel) position(f int, at []int) {
	for i := len(g.controls) - 1; i >= 0; i-- {
		n := len(g.controls[i].Values)
		at[i] = f % n
		f /= n
	}
}

// state returns name=value pairs of grid position at, for messages.
func (g *GridPanel) state(at []int) string {
	var parts []string
	for i, c := range g.controls {
		parts = append(parts, fmt.Sprintf("%s=%s", c.Name, c.Labels[at[i]]))
	}
	return strings.Join(parts, " ")
}

// Frame returns the frame at grid position at, as embedded (values rounded to the panel's digits).
func (g *GridPanel) Frame(at ...int) (PanelFrame, error) {
	idx, err := g.Index(at)
	if err != nil {
		return PanelFrame{}, err
	}
	return g.frames[idx], nil
}

// Series returns the data of series name of plot plotName at grid position at, with X filled from the
// plot's Grid when the frame has none.
func (g *GridPanel) Series(plotName, name string, at ...int) (PanelData, error) {
	fr, err := g.Frame(at...)
	if err != nil {
		return PanelData{}, err
	}
	for p, pl := range g.plots {
		if pl.Name != plotName {
			continue
		}
		for s, se := range pl.Series {
			if se.Name == name {
				d := fr.Series[p][s]
				if d.X == nil && se.Kind == SeriesLine {
					d.X = pl.Grid
				}
				return d, nil
			}
		}
	}
	return PanelData{}, fmt.Errorf("panel: no series %s/%s", plotName, name)
}

// roundedAll rounds every value of v to d significant digits (roundSig); nil stays nil.
func roundedAll(v []float64, d int) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = roundSig(x, d)
	}
	return out
}

// roundSig rounds v to d significant digits (NaN and ±Inf become NaN: the pen lifts there).
func roundSig(v float64, d int) float64 {
	if !isFinite(v) {
		return math.NaN()
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', d, 64), 64)
	return r
}

// gridAxes maps data to pixels for one plot; the script receives the same numbers.
type gridAxes struct {
	X0    float64 `json:"x0"` // pixel of X.Min
	X1    float64 `json:"x1"` // pixel of X.Max
	Y0    float64 `json:"y0"` // pixel of Y.Max (top)
	Y1    float64 `json:"y1"` // pixel of Y.Min (bottom)
	XMin  float64 `json:"a0"`
	XMax  float64 `json:"a1"`
	YMin  float64 `json:"b0"`
	YMax  float64 `json:"b1"`
	XLog  bool    `json:"xl"`
	YLog  bool    `json:"yl"`
	W, H  float64 `json:"-"`
	xTick []float64
	yTick []float64
}

func newGridAxes(p PanelPlot) gridAxes {
	a := gridAxes{W: float64(p.Width), H: float64(p.Height), X0: 56, Y0: 10}
	if p.Top != nil {
		a.Y0 = 30 // room for the top axis' labels
	}
	a.X1, a.Y1 = a.W-12, a.H-38
	a.XMin, a.XMax, a.XLog = p.X.Min, p.X.Max, p.X.Log
	a.YMin, a.YMax, a.YLog = p.Y.Min, p.Y.Max, p.Y.Log
	a.xTick, a.yTick = p.X.Ticks, p.Y.Ticks
	if a.xTick == nil {
		a.xTick = autoTicks(p.X)
	}
	if a.yTick == nil {
		a.yTick = autoTicks(p.Y)
	}
	return a
}

func axisT(v float64, log bool) float64 {
	if log {
		return math.Log10(v)
	}
	return v
}

// clampPx keeps far-off points finite and small in the SVG (the plot is clipped anyway).
func clampPx(v float64) float64 { return math.Max(-9999, math.Min(9999, v)) }

func (a gridAxes) px(x float64) float64 {
	t0, t1 := axisT(a.XMin, a.XLog), axisT(a.XMax, a.XLog)
	return clampPx(a.X0 + (axisT(x, a.XLog)-t0)/(t1-t0)*(a.X1-a.X0))
}

func (a gridAxes) py(y float64) float64 {
	t0, t1 := axisT(a.YMin, a.YLog), axisT(a.YMax, a.YLog)
	return clampPx(a.Y1 - (axisT(y, a.YLog)-t0)/(t1-t0)*(a.Y1-a.Y0))
}

func okOn(v float64, log bool) bool { return isFinite(v) && (!log || v > 0) }

// path draws series data d of kind k; the script's path() is the same function.
func (a gridAxes) path(k SeriesKind, d PanelData, grid []float64) string {
	var b strings.Builder
	xs := d.X
	if xs == nil {
		xs = grid
	}
	switch k {
	case SeriesLine:
		pen := false
		for n := range d.Y {
			if n >= len(xs) || !okOn(xs[n], a.XLog) || !okOn(d.Y[n], a.YLog) {
				pen = false
				continue
			}
			c := "L"
			if !pen {
				c = "M"
			}
			pen = true
			fmt.Fprintf(&b, "%s%.1f,%.1f", c, a.px(xs[n]), a.py(d.Y[n]))
		}
	case SeriesPoints:
		for n := range d.Y {
			if n < len(xs) && okOn(xs[n], a.XLog) && okOn(d.Y[n], a.YLog) {
				fmt.Fprintf(&b, "M%.1f,%.1fm-3.5,0a3.5,3.5 0 1,0 7,0a3.5,3.5 0 1,0 -7,0", a.px(xs[n]), a.py(d.Y[n]))
			}
		}
	case SeriesVLines:
		for _, x := range xs {
			if okOn(x, a.XLog) {
				fmt.Fprintf(&b, "M%.1f,%.1fL%.1f,%.1f", a.px(x), a.Y0, a.px(x), a.Y1)
			}
		}
	case SeriesHLines:
		for _, y := range d.Y {
			if okOn(y, a.YLog) {
				fmt.Fprintf(&b, "M%.1f,%.1fL%.1f,%.1f", a.X0, a.py(y), a.X1, a.py(y))
			}
		}
	case SeriesBands:
		for n := 0; n+1 < len(xs); n += 2 {
			if okOn(xs[n], a.XLog) && okOn(xs[n+1], a.XLog) {
				x0, x1 := a.px(xs[n]), a.px(xs[n+1])
				fmt.Fprintf(&b, "M%.1f,%.1fL%.1f,%.1fL%.1f,%.1fL%.1f,%.1fZ", x0, a.Y0, x1, a.Y0, x1, a.Y1, x0, a.Y1)
			}
		}
	}
	return b.String()
}

// autoTicks picks decades (and 2, 5 multiples over short ranges) on a log axis, 1-2-5 steps on a
// linear one.
func autoTicks(ax PanelAxis) []float64 {
	var ts []float64
	if ax.Log {
		lo, hi := math.Log10(ax.Min), math.Log10(ax.Max)
		mult := []float64{1}
		if hi-lo < 2.5 {
			mult = []float64{1, 2, 5}
		}
		for e := math.Floor(lo); e <= hi; e++ {
			for _, m := range mult {
				if v := m * math.Pow(10, e); v >= ax.Min*(1-1e-9) && v <= ax.Max*(1+1e-9) {
					ts = append(ts, v)
				}
			}
		}
		return ts
	}
	step := niceStep(ax.Min, ax.Max, 5)
	for v := math.Ceil(ax.Min/step) * step; v <= ax.Max+step*1e-9; v += step {
		ts = append(ts, roundSig(v, 10)+0) // +0 turns −0 into 0
	}
	return ts
}

func tickLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(roundSig(v, 6), 'g', -1, 64)
}

// jsNum writes v as a JSON number (NaN as null).
func jsNum(b *strings.Builder, v float64) {
	if !isFinite(v) {
		b.WriteString("null")
		return
	}
	b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
}

// encode returns the panel's data as JSON: controls, plot axes and series kinds, a table of distinct
// arrays and readouts, and per frame [readout, (x, y, alt) per series] as indices into those tables
// (x = −1: the plot's grid). Frames that share a curve share its array.
func (g *GridPanel) encode() (string, error) {
	type ctl struct {
		Name   string    `json:"name"`
		Values []float64 `json:"values"`
		Labels []string  `json:"labels"`
		Toggle bool      `json:"toggle"`
	}
	type ser struct {
		Name string     `json:"name"`
		Kind SeriesKind `json:"kind"`
		Dash string     `json:"dash"`
		Alt  string     `json:"alt"`
	}
	type plt struct {
		Name   string   `json:"name"`
		Axes   gridAxes `json:"axes"`
		Grid   int      `json:"grid"`
		Series []ser    `json:"series"`
	}
	arrays := map[string]int{}
	var arrList []json.RawMessage
	intern := func(v []float64) int {
		var b strings.Builder
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			jsNum(&b, x)
		}
		b.WriteByte(']')
		s := b.String()
		if i, ok := arrays[s]; ok {
			return i
		}
		arrays[s] = len(arrList)
		arrList = append(arrList, json.RawMessage(s))
		return len(arrList) - 1
	}
	readouts := map[string]int{}
	var readList []string
	var cs []ctl
	for _, c := range g.controls {
		cs = append(cs, ctl{c.Name, c.Values, c.Labels, c.Toggle})
	}
	var ps []plt
	for _, p := range g.plots {
		q := plt{Name: p.Name, Axes: newGridAxes(p), Grid: -1}
		if p.Grid != nil {
			q.Grid = intern(p.Grid)
		}
		for _, s := range p.Series {
			q.Series = append(q.Series, ser{s.Name, s.Kind, s.Dash, s.AltDash})
		}
		ps = append(ps, q)
	}
	var frames strings.Builder
	frames.WriteByte('[')
	for f, fr := range g.frames {
		if f > 0 {
			frames.WriteByte(',')
		}
		r, ok := readouts[fr.Readout]
		if !ok {
			r = len(readList)
			readouts[fr.Readout] = r
			readList = append(readList, fr.Readout)
		}
		fmt.Fprintf(&frames, "[%d", r)
		for _, ss := range fr.Series {
			for _, d := range ss {
				x := -1
				if d.X != nil {
					x = intern(d.X)
				}
				alt := 0
				if d.Alt {
					alt = 1
				}
				fmt.Fprintf(&frames, ",%d,%d,%d", x, intern(d.Y), alt)
			}
		}
		frames.WriteByte(']')
	}
	frames.WriteByte(']')
	js, err := json.Marshal(struct {
		Controls []ctl             `json:"controls"`
		Plots    []plt             `json:"plots"`
		Arrays   []json.RawMessage `json:"arrays"`
		Readouts []string          `json:"readouts"`
		Above    string            `json:"above"`
		Below    string            `json:"below"`
		Frames   json.RawMessage   `json:"frames"`
	}{cs, ps, arrList, readList, offScaleAbove, offScaleBelow, json.RawMessage(frames.String())})
	return string(js), err
}

type gridTick struct {
	Pos   float64
	Label string
}

type gridSeriesView struct {
	Name, Color, Dash, Fill string
	Width, Opacity          float64
	D                       string
}

type gridLegend struct{ Text, Color, Dash string }

type gridPlotView struct {
	Name, Title, XLabel, YLabel string
	Axes                        string // the pixel mapping as JSON (data-axes), for tests that read curves back
	W, H, X0, X1, Y0, Y1        float64
	XTicks, YTicks              []gridTick
	TopTicks                    []gridTick
	TopLabel                    string
	Series                      []gridSeriesView
	Legend                      []gridLegend
	Above, Below                string // the off-scale notes shown at the initial position
}

type gridControlView struct {
	Name, Label, Text string
	Max, Value        int
	Toggle, Checked   bool
}

type gridView struct {
	ID       string
	Stack    bool
	Controls []gridControlView
	Plots    []gridPlotView
	Readout  string
	Data     template.JS
}

// HTML returns the self-contained snippet: the controls, one <svg> per plot drawn at the initial
// position, the read-out, the embedded data and the script that redraws on every input or change event.
func (g *GridPanel) HTML() (string, error) {
	data, err := g.encode()
	if err != nil {
		return "", fmt.Errorf("panel: encoding data: %w", err)
	}
	at := make([]int, len(g.controls))
	v := gridView{ID: g.ID, Stack: g.stack, Data: template.JS(data)}
	for i, c := range g.controls {
		at[i] = c.Initial
		v.Controls = append(v.Controls, gridControlView{Name: c.Name, Label: c.Label, Text: c.Labels[c.Initial],
			Max: len(c.Values) - 1, Value: c.Initial, Toggle: c.Toggle, Checked: c.Toggle && c.Initial == 1})
	}
	fr, err := g.Frame(at...)
	if err != nil {
		return "", err
	}
	v.Readout = fr.Readout
	for p, pl := range g.plots {
		a := newGridAxes(pl)
		axes, err := json.Marshal(a)
		if err != nil {
			return "", err
		}
		pv := gridPlotView{Name: pl.Name, Title: pl.Title, XLabel: pl.X.Label, YLabel: pl.Y.Label, Axes: string(axes),
			W: a.W, H: a.H, X0: a.X0, X1: a.X1, Y0: a.Y0, Y1: a.Y1}
		for _, t := range a.xTick {
			pv.XTicks = append(pv.XTicks, gridTick{math.Round(a.px(t)*10) / 10, tickLabel(t)})
		}
		for _, t := range a.yTick {
			pv.YTicks = append(pv.YTicks, gridTick{math.Round(a.py(t)*10) / 10, tickLabel(t)})
		}
		if pl.Top != nil {
			pv.TopLabel = pl.Top.Label
			for i, t := range pl.Top.Ticks {
				pv.TopTicks = append(pv.TopTicks, gridTick{math.Round(a.px(t)*10) / 10, pl.Top.Labels[i]})
			}
		}
		for s, se := range pl.Series {
			w := se.Width
			if w == 0 {
				w = 2
				if se.Kind == SeriesVLines || se.Kind == SeriesHLines {
					w = 1
				}
			}
			sv := gridSeriesView{Name: se.Name, Color: se.Color, Width: w, Dash: se.Dash, Fill: "none", Opacity: 1,
				D: a.path(se.Kind, fr.Series[p][s], pl.Grid)}
			if fr.Series[p][s].Alt {
				sv.Dash = se.AltDash
			}
			switch se.Kind {
			case SeriesBands:
				sv.Fill, sv.Width, sv.Opacity = se.Color, 0, cmp.Or(se.Opacity, 0.18)
			case SeriesPoints:
				sv.Fill = se.Color
			}
			pv.Series = append(pv.Series, sv)
			if se.Kind == SeriesLine {
				xs := fr.Series[p][s].X
				if xs == nil {
					xs = pl.Grid
				}
				hi, lo := offScale(pl, xs, fr.Series[p][s].Y)
				if hi {
					pv.Above = offScaleAbove
				}
				if lo {
					pv.Below = offScaleBelow
				}
			}
			if se.Legend != "" {
				pv.Legend = append(pv.Legend, gridLegend{se.Legend, se.Color, se.Dash})
			}
		}
		v.Plots = append(v.Plots, pv)
	}
	var buf bytes.Buffer
	if err := gridTemplate.Execute(&buf, v); err != nil {
		return "", fmt.Errorf("panel: rendering HTML: %w", err)
	}
	return buf.String(), nil
}

var gridTemplate = template.Must(template.New("grid").Parse(`<div class="fits-panel" id="{{.ID}}" style="font-family:sans-serif;font-size:13px">
<div style="display:grid;grid-template-columns:auto minmax(120px,320px) auto;gap:2px 8px;align-items:center;margin-bottom:6px;max-width:640px">
{{range .Controls}}<label for="{{$.ID}}-{{.Name}}">{{.Label}}</label>{{if .Toggle}}<input id="{{$.ID}}-{{.Name}}" data-param="{{.Name}}" type="checkbox"{{if .Checked}} checked{{end}} style="justify-self:start">{{else}}<input id="{{$.ID}}-{{.Name}}" data-param="{{.Name}}" type="range" min="0" max="{{.Max}}" step="1" value="{{.Value}}">{{end}}<span data-value="{{.Name}}">{{.Text}}</span>
{{end}}</div>
<div data-role="plots" style="display:flex;{{if .Stack}}flex-direction:column;align-items:flex-start;gap:4px{{else}}flex-wrap:wrap;gap:6px 14px{{end}}">
{{range $p := .Plots}}<div style="width:{{.W}}px"><div style="font-weight:bold;margin:2px 0 0 8px">{{.Title}}</div>
<div data-role="legend" style="margin:0 0 2px 8px;font-size:12px;display:flex;flex-wrap:wrap;gap:0 10px">{{range .Legend}}<span style="color:{{.Color}};white-space:nowrap">{{if .Dash}}╌{{else}}━{{end}} {{.Text}}</span>{{end}}</div>
<svg data-plot="{{.Name}}" data-axes="{{.Axes}}" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" xmlns="http://www.w3.org/2000/svg" style="background:#fff">
<defs><clipPath id="{{$.ID}}-{{.Name}}-clip"><rect x="{{.X0}}" y="{{.Y0}}" width="{{.PlotW}}" height="{{.PlotH}}"/></clipPath></defs>
<g stroke="#e3e3e3" stroke-width="1">{{range .XTicks}}<line x1="{{.Pos}}" x2="{{.Pos}}" y1="{{$p.Y0}}" y2="{{$p.Y1}}"/>{{end}}{{range .YTicks}}<line x1="{{$p.X0}}" x2="{{$p.X1}}" y1="{{.Pos}}" y2="{{.Pos}}"/>{{end}}</g>
<g font-size="11" fill="#333">{{range .XTicks}}<text x="{{.Pos}}" y="{{$p.Y1}}" dy="14" text-anchor="middle">{{.Label}}</text>{{end}}{{range .YTicks}}<text x="{{$p.X0}}" y="{{.Pos}}" dx="-4" dy="4" text-anchor="end">{{.Label}}</text>{{end}}</g>
<text x="{{.X1}}" y="{{.H}}" dy="-4" text-anchor="end" font-size="12">{{.XLabel}}</text>
{{if .TopLabel}}<g data-role="top-axis" font-size="11" fill="#555"><line x1="{{.X0}}" x2="{{.X1}}" y1="{{.Y0}}" y2="{{.Y0}}" stroke="#999"/>{{range .TopTicks}}<path d="M{{.Pos}} {{$p.Y0}}v-3" stroke="#999"/><text x="{{.Pos}}" y="{{$p.Y0}}" dy="-5" text-anchor="middle">{{.Label}}</text>{{end}}<text x="{{.X0}}" y="11" text-anchor="start">{{.TopLabel}}</text></g>{{end}}
<text x="12" y="{{.Y0}}" dy="4" font-size="12" transform="rotate(-90 12 {{.Y0}})" text-anchor="end">{{.YLabel}}</text>
<g clip-path="url(#{{$.ID}}-{{.Name}}-clip)">{{range .Series}}<path data-curve="{{.Name}}" d="{{.D}}" fill="{{.Fill}}" fill-opacity="{{.Opacity}}" stroke="{{if eq .Fill "none"}}{{.Color}}{{else}}none{{end}}" stroke-width="{{.Width}}" stroke-dasharray="{{.Dash}}"/>{{end}}</g>
<g><line x1="{{.X0}}" x2="{{.X0}}" y1="{{.Y0}}" y2="{{.Y1}}" stroke="#333"/><line x1="{{.X0}}" x2="{{.X1}}" y1="{{.Y1}}" y2="{{.Y1}}" stroke="#333"/></g>
<text data-role="above" x="{{.X1}}" y="{{.Y0}}" dx="-3" dy="11" text-anchor="end" font-size="11" fill="#b00">{{.Above}}</text><text data-role="below" x="{{.X1}}" y="{{.Y1}}" dx="-3" dy="-4" text-anchor="end" font-size="11" fill="#b00">{{.Below}}</text>
</svg></div>
{{end}}</div>
<div data-role="readout" style="margin-top:4px;max-width:900px">{{.Readout}}</div>
<script>
(function () {
  var D = {{.Data}}, ID = {{.ID}};
  function start() {
    var root = document.getElementById(ID);
    if (!root) { setTimeout(start, 50); return; }
    var q = function (s) { return root.querySelector(s); };
    var inputs = D.controls.map(function (c) { return q('[data-param=' + c.name + ']'); });
    function fmt(v) { return v.toFixed(1); }
    function draw(A, kind, xs, ys) {
      var t = function (v, l) { return l ? Math.log10(v) : v; };
      var ok = function (v, l) { return v !== null && v !== undefined && isFinite(v) && (!l || v > 0); };
      var cl = function (v) { return Math.max(-9999, Math.min(9999, v)); };
      var px = function (x) { return cl(A.x0 + (t(x, A.xl) - t(A.a0, A.xl)) / (t(A.a1, A.xl) - t(A.a0, A.xl)) * (A.x1 - A.x0)); };
      var py = function (y) { return cl(A.y1 - (t(y, A.yl) - t(A.b0, A.yl)) / (t(A.b1, A.yl) - t(A.b0, A.yl)) * (A.y1 - A.y0)); };
      var s = '', n, pen = false;
      if (kind === 'line') {
        for (n = 0; n < ys.length; n++) {
          if (n >= xs.length || !ok(xs[n], A.xl) || !ok(ys[n], A.yl)) { pen = false; continue; }
          s += (pen ? 'L' : 'M') + fmt(px(xs[n])) + ',' + fmt(py(ys[n]));
          pen = true;
        }
      } else if (kind === 'points') {
        for (n = 0; n < ys.length; n++) {
          if (n < xs.length && ok(xs[n], A.xl) && ok(ys[n], A.yl)) s += 'M' + fmt(px(xs[n])) + ',' + fmt(py(ys[n])) + 'm-3.5,0a3.5,3.5 0 1,0 7,0a3.5,3.5 0 1,0 -7,0';
        }
      } else if (kind === 'vlines') {
        for (n = 0; n < xs.length; n++) if (ok(xs[n], A.xl)) s += 'M' + fmt(px(xs[n])) + ',' + fmt(A.y0) + 'L' + fmt(px(xs[n])) + ',' + fmt(A.y1);
      } else if (kind === 'hlines') {
        for (n = 0; n < ys.length; n++) if (ok(ys[n], A.yl)) s += 'M' + fmt(A.x0) + ',' + fmt(py(ys[n])) + 'L' + fmt(A.x1) + ',' + fmt(py(ys[n]));
      } else if (kind === 'bands') {
        for (n = 0; n + 1 < xs.length; n += 2) {
          if (!ok(xs[n], A.xl) || !ok(xs[n + 1], A.xl)) continue;
          var a = fmt(px(xs[n])), b = fmt(px(xs[n + 1]));
          s += 'M' + a + ',' + fmt(A.y0) + 'L' + b + ',' + fmt(A.y0) + 'L' + b + ',' + fmt(A.y1) + 'L' + a + ',' + fmt(A.y1) + 'Z';
        }
      }
      return s;
    }
    function update() {
      var idx = 0, state = {};
      D.controls.forEach(function (c, i) {
        var k = c.toggle ? (inputs[i].checked ? 1 : 0) : +inputs[i].value;
        idx = idx * c.values.length + k;
        state[c.name] = c.values[k];
        q('[data-value=' + c.name + ']').textContent = c.labels[k];
      });
      var fr = D.frames[idx], j = 1;
      D.plots.forEach(function (p) {
        var svg = q('svg[data-plot=' + p.name + ']'), A = p.axes, hi = false, lo = false;
        p.series.forEach(function (s) {
          var xi = fr[j], yi = fr[j + 1], alt = fr[j + 2];
          j += 3;
          var xs = xi < 0 ? (p.grid < 0 ? [] : D.arrays[p.grid]) : D.arrays[xi], ys = D.arrays[yi];
          var el = svg.querySelector('path[data-curve=' + s.name + ']');
          el.setAttribute('d', draw(A, s.kind, xs, ys));
          el.setAttribute('stroke-dasharray', alt ? s.alt : s.dash);
          if (s.kind === 'line') {
            for (var n = 0; n < ys.length && n < xs.length; n++) {
              if (ys[n] === null || xs[n] === null || xs[n] < A.a0 || xs[n] > A.a1) continue;
              if (ys[n] > A.b1) hi = true;
              if (ys[n] < A.b0) lo = true;
            }
          }
        });
        svg.querySelector('[data-role=above]').textContent = hi ? D.above : '';
        svg.querySelector('[data-role=below]').textContent = lo ? D.below : '';
      });
      q('[data-role=readout]').textContent = D.readouts[fr[0]];
      root.setAttribute('data-index', String(idx));
      root.setAttribute('data-state', JSON.stringify(state));
    }
    inputs.forEach(function (el) {
      el.addEventListener('input', update);
      el.addEventListener('change', update);
    });
    update();
  }
  start();
})();
</script>
</div>`))

// The notes a plot shows while a curve leaves its y range: the curve is cut at the plot's edge, never
// drawn flat along it.
const (
	offScaleAbove = "▲ curve continues above the axis"
	offScaleBelow = "▼ curve continues below the axis"
)

// offScale reports whether the line (xs, ys) has a point inside the x range above (hi) or below (lo) the
// plot's y range.
func offScale(pl PanelPlot, xs, ys []float64) (hi, lo bool) {
	for n := range min(len(xs), len(ys)) {
		if !isFinite(xs[n]) || !isFinite(ys[n]) || xs[n] < pl.X.Min || xs[n] > pl.X.Max {
			continue
		}
		hi = hi || ys[n] > pl.Y.Max
		lo = lo || ys[n] < pl.Y.Min
	}
	return hi, lo
}

// PlotW and PlotH are the plotting area's size (for the clip rectangle).
func (v gridPlotView) PlotW() float64 { return v.X1 - v.X0 }

// PlotH is the plotting area's height.
func (v gridPlotView) PlotH() float64 { return v.Y1 - v.Y0 }
