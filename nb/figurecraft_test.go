package nb

import (
	"math"
	"regexp"
	"slices"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// The figure craft every static figure follows (checked on the catalog and on a figure of each generic
// kind): legends below the data, never over a curve or a title; tick labels at every decade of a log
// axis, at every 10 dB of a dB axis (0 dB included), and on 1-2-5 steps elsewhere; captions escaped for
// Markdown.

func craftFigures(t *testing.T) []*Figure {
	t.Helper()
	var figs []*Figure
	for _, e := range Catalog() {
		f, err := e.Build()
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		figs = append(figs, f)
	}
	h, err := HistogramFigure("99_hist", "f* before and after", []HistogramPanel{{Title: "f*", XLabel: "f* (Hz)", LogX: true,
		Hists: []Hist{{Label: "init", Values: []float64{1, 2, 5, 10, 20, 50}}, {Label: "learned", Values: []float64{1.5, 3, 6, 12}}}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return append(figs, h)
}

func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func TestFigureLegendsOutsideTheData(t *testing.T) {
	for _, f := range craftFigures(t) {
		layout, err := f.Layout()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		w, h := f.Size()
		var datas []vg.Rectangle
		for _, row := range layout {
			for _, pl := range row {
				datas = append(datas, pl.Data)
			}
		}
		legends := 0
		for i, row := range layout {
			for j, pl := range row {
				if f.Panels[i][j] == nil || pl.Legend.Size().Y == 0 {
					continue
				}
				legends++
				if pl.Legend.Max.Y > pl.Data.Min.Y {
					t.Errorf("%s panel (%d, %d): legend top %.1f above its data area's bottom %.1f", f.Name, i, j, pl.Legend.Max.Y, pl.Data.Min.Y)
				}
				for _, d := range datas {
					if overlap(pl.Legend, d) {
						t.Errorf("%s panel (%d, %d): legend %v over a data area %v", f.Name, i, j, pl.Legend, d)
					}
				}
				if pl.Legend.Min.X < -0.01 || pl.Legend.Max.X > w+0.01 || pl.Legend.Min.Y < -0.01 || pl.Legend.Max.Y > h+0.01 {
					t.Errorf("%s panel (%d, %d): legend %v outside the %v × %v canvas", f.Name, i, j, pl.Legend, w, h)
				}
			}
		}
		if legends == 0 {
			t.Errorf("%s: no legend found", f.Name)
		}
	}
}

// labelled returns the values of an axis' labelled ticks over its range.
func labelled(a plot.Axis) map[float64]bool {
	out := map[float64]bool{}
	for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if tk.Label != "" {
			out[roundSig(tk.Value, 9)] = true
		}
	}
	return out
}

func TestFigureTickLabels(t *testing.T) {
	for _, f := range craftFigures(t) {
		if _, err := f.Layout(); err != nil { // applies the figures' tickers
			t.Fatal(err)
		}
		for _, row := range f.Panels {
			for _, p := range row {
				if p == nil {
					continue
				}
				for _, a := range []plot.Axis{p.X, p.Y} {
					if _, ok := a.Tick.Marker.(plot.ConstantTicks); ok {
						continue // categories or chosen ticks
					}
					got := labelled(a)
					name := f.Name + " / " + p.Title.Text + " / " + a.Label.Text
					switch _, log := a.Scale.(plot.LogScale); {
					case log:
						for e := math.Ceil(math.Log10(a.Min) - 1e-9); e <= math.Floor(math.Log10(a.Max)+1e-9); e++ {
							if v := roundSig(math.Pow(10, e), 9); !got[v] {
								t.Errorf("%s: decade %g has no label (labels %v)", name, v, got)
							}
						}
					case isDBAxis(a) && a.Max-a.Min >= 20:
						for v := math.Ceil(a.Min/10) * 10; v <= a.Max; v += 10 {
							if !got[roundSig(v, 9)+0] {
								t.Errorf("%s: %g dB has no label (labels %v)", name, v, got)
							}
						}
					default:
						if len(got) < 3 {
							t.Errorf("%s: %d labels on [%g, %g]", name, len(got), a.Min, a.Max)
						}
						if a.Min < 0 && a.Max > 0 && !got[0] {
							t.Errorf("%s: 0 has no label (labels %v)", name, got)
						}
					}
				}
			}
		}
	}
}

// unescaped finds a Markdown or math character not preceded by a backslash.
var unescaped = regexp.MustCompile("(^|[^\\\\])[*_`$\\[\\]]")

func TestCaptionsEscapedForMarkdown(t *testing.T) {
	for _, f := range craftFigures(t) {
		if s := MarkdownText(f.Caption); unescaped.MatchString(s) {
			t.Errorf("%s: caption %q escapes to %q", f.Name, f.Caption, s)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"targets f*; each peaks at its f* (marked).", `targets f\*; each peaks at its f\* (marked).`},
		{"f*_DT and G_M·H_d", `f\*\_DT and G\_M·H\_d`},
		{"$\\tau_m$ [ms]", `\$\\tau\_m\$ \[ms\]`},
	} {
		if got := MarkdownText(tc.in); got != tc.want {
			t.Errorf("MarkdownText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTickText(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0"}, {1, "1"}, {0.1, "0.1"}, {100000, "100000"}, {1e6, "10⁶"}, {5e6, "5·10⁶"}, {1e-4, "10⁻⁴"}, {-30, "-30"}, {2.5, "2.5"}} {
		if got := tickText(tc.v); got != tc.want {
			t.Errorf("tickText(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestStepTicksPassZeroExactly: an axis that crosses 0 with a step that is not a binary fraction labels
// 0 as "0", not as the remainder of a running sum (−1.4·10⁻¹⁷).
func TestStepTicksPassZeroExactly(t *testing.T) {
	var labels []string
	for _, tk := range (stepTicks{Step: 0.1}).Ticks(-0.23, 0.43) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"-0.2", "-0.1", "0", "0.1", "0.2", "0.3", "0.4"}; !slices.Equal(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
}

// Layout returns where each panel's data area and legend land on a canvas of the figure's size,
// Layout()[row][col] (zero for empty cells).
func (f *Figure) Layout() ([][]PanelLayout, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	w, h := f.Size()
	return f.place(vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(36)), false)
}
