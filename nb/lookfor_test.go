package nb

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The "What to look for" steps of the notebooks with a panel (01–04, 03b), each executed as a reader would:
// start from the panel's initial position, move the controls the text names to the values it names (a
// value that is not one of the control's stops fails: the step would not be reachable), then check the
// claim on the read-out and on the drawn series. The step's words must appear in the notebook, so that a
// change of the text without a change of this table (or the reverse) fails.
//
// Notebooks 05–14 have no panel: their "what to look for" paragraphs describe results of training runs,
// which their own cells compute (see nb/results.go and the notebooks' checks), not a control to move.

// lookView is one panel at the setting of a step.
type lookView struct {
	g       *GridPanel
	at      []int
	readout string
}

func (v lookView) series(plot, name string) PanelData {
	d, err := v.g.Series(plot, name, v.at...)
	if err != nil {
		panic(err)
	}
	return d
}

// number returns the first number after prefix in the read-out (prefix is a regular expression).
func (v lookView) number(prefix string) (float64, error) {
	m := regexp.MustCompile(prefix + `\s*([+-]?[0-9]+(?:\.[0-9]+)?)`).FindStringSubmatch(v.readout)
	if m == nil {
		return 0, fmt.Errorf("read-out has no %q number: %q", prefix, v.readout)
	}
	return strconv.ParseFloat(m[1], 64)
}

// lookFor is one step: the notebook's words, the controls moved, and the claim's check.
type lookFor struct {
	notebook string             // file under notebooks/
	panel    string             // which panel (lookForPanels)
	step     string             // words of the notebook's text (compared with whitespace normalised)
	set      map[string]float64 // control name → value, from the initial position
	check    func(v lookView) error
}

// has checks that the read-out contains every string.
func has(subs ...string) func(lookView) error {
	return func(v lookView) error {
		for _, s := range subs {
			if !strings.Contains(v.readout, s) {
				return fmt.Errorf("read-out lacks %q: %q", s, v.readout)
			}
		}
		return nil
	}
}

func lacks(s string) func(lookView) error {
	return func(v lookView) error {
		if strings.Contains(v.readout, s) {
			return fmt.Errorf("read-out has %q: %q", s, v.readout)
		}
		return nil
	}
}

func all(checks ...func(lookView) error) func(lookView) error {
	return func(v lookView) error {
		for _, c := range checks {
			if err := c(v); err != nil {
				return err
			}
		}
		return nil
	}
}

// radiusEnd is the distance from the origin of a phase-plane trajectory's last point.
func radiusEnd(d PanelData) float64 {
	n := len(d.X) - 1
	return math.Hypot(d.X[n], d.Y[n])
}

// spiral checks the phase plane: the explicit trajectory ends outside the unit circle (out) or inside,
// and the semi-implicit one likewise.
func spiral(explicitOut, semiOut bool) func(lookView) error {
	return func(v lookView) error {
		for _, c := range []struct {
			name string
			out  bool
		}{{"explicit", explicitOut}, {"semi", semiOut}} {
			d := v.series("phase", c.name)
			if r := radiusEnd(d); (r > 1) != c.out || d.Alt != c.out {
				return fmt.Errorf("%s trajectory ends at radius %.3g (dashed %v), want outside the unit circle: %v", c.name, r, d.Alt, c.out)
			}
		}
		return nil
	}
}

// closedLoopPeak returns the read-out's closed-loop peak (Hz) and its height (dB re FS alone) of notebook 03.
func closedLoopPeak(v lookView) (f, height float64, err error) {
	if f, err = v.number(`closed-loop peak at`); err != nil {
		return 0, 0, err
	}
	height, err = v.number(`closed-loop peak at [0-9.]+ Hz \(`)
	return f, height, err
}

// lookForPanels builds each notebook's panel with the configuration its notebook cell uses.
func lookForPanels(t *testing.T) map[string]*GridPanel {
	t.Helper()
	target, err1 := NewPanel(DefaultPanelConfig())
	disc, err2 := DiscretizationPanel(DefaultDiscretizationPanelConfig())
	ts, err3 := TSPanel(DefaultTSPanelConfig())
	pole, err4 := PolePanel(DefaultPolePanelConfig())
	play, err5 := PlaygroundPanel(DefaultPlaygroundConfig())
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return map[string]*GridPanel{"target": target.GridPanel, "disc": disc, "ts": ts, "pole": pole, "play": play}
}

func lookForSteps() []lookFor {
	const nb01, nb02, nb03, nb03b, nb04 = "01_target_frequency.ipynb", "02_discretization.ipynb", "03_temporal_shaping.ipynb", "03b_single_neuron.ipynb", "04_pole_vs_target.ipynb"
	steps := []lookFor{
		// 01 · Theorem 1
		{nb01, "target", "The panel starts at the SSC constants and $f^\\star = 10$ Hz: the blue curve peaks at 0 dB on its dashed line, and the read-out gives $f^\\star_{DT} = 10.35$ Hz",
			nil, all(has("CT target f* = 10 Hz", "f*_DT = 10.35 Hz"), func(v lookView) error {
				ct := v.series("mag", "ct")
				i := slices.Index(ct.X, 10.0)
				if i < 0 || math.Abs(ct.Y[i]) > 0.01 || slices.Max(ct.Y) > 0.01 {
					return fmt.Errorf("CT curve is not 0 dB at its maximum, at f* = 10 Hz")
				}
				return nil
			})},
		{nb01, "target", "Move $f^\\star$ to 50 Hz and then 70 Hz: $f^\\star_{DT}$ drifts further above (56.14 Hz, then 90.54 Hz)",
			map[string]float64{"fstar": 50}, has("f*_DT = 56.14 Hz")},
		{nb01, "target", "(56.14 Hz, then 90.54 Hz)", map[string]float64{"fstar": 70}, has("f*_DT = 90.54 Hz")},
		{nb01, "target", "At 80 Hz, past the semi-implicit Jury limit (77.2 Hz at these constants, notebook 02), the orange curve turns dashed and the read-out says the DT module is UNSTABLE",
			map[string]float64{"fstar": 80}, all(has("DT module UNSTABLE"), func(v lookView) error {
				if !v.series("mag", "dt").Alt {
					return fmt.Errorf("DT curve not dashed")
				}
				return nil
			})},
		// 02 · Appendix A.2, Theorem 2
		{nb02, "disc", "and $f^\\star = 10$ Hz, where both updates are stable",
			nil, all(has("explicit stable, semi-implicit stable"), spiral(false, false))},
		{nb02, "disc", "Move $f^\\star$ past 14 Hz, to 20 Hz: the black marker leaves the orange (explicit) region, the read-out says explicit UNSTABLE and the explicit trajectory spirals out, while the semi-implicit one still spirals in",
			map[string]float64{"fstar": 20}, all(has("explicit UNSTABLE, semi-implicit stable"), spiral(true, false), func(v lookView) error {
				kb, band := v.series("stab", "kb"), v.series("stab", "bandE")
				if kb.X[0] <= band.X[1] {
					return fmt.Errorf("κΔt² marker %g inside the explicit region [%g, %g]", kb.X[0], band.X[0], band.X[1])
				}
				return nil
			})},
		{nb02, "disc", "The semi-implicit update stays stable up to 77 Hz", map[string]float64{"fstar": 77}, all(has("explicit UNSTABLE, semi-implicit stable"), func(v lookView) error {
			if v.series("phase", "semi").Alt {
				return fmt.Errorf("semi-implicit trajectory dashed (unstable) at 77 Hz")
			}
			return nil
		})},
		{nb02, "disc", "at 90 Hz it is unstable too", map[string]float64{"fstar": 90}, all(has("semi-implicit UNSTABLE"), spiral(true, true))},
		{nb02, "disc", "At 20 Hz the read-out gives the gap $f^\\star_{DT} - f^\\star = +0.88$ Hz",
			map[string]float64{"fstar": 20}, has("gap f*_DT − f* = +0.88 Hz")},
		{nb02, "disc", "Halve $\\Delta t$ to 2 ms: both regions widen in $f^\\star$ (the limits rise from 13.8 and 77.2 Hz to 19.5 and 156.8 Hz) and the gap shrinks to +0.36 Hz",
			map[string]float64{"fstar": 20, "dt": 0.002}, has("f* ≤ 19.5 Hz", "f* ≤ 156.8 Hz", "gap f*_DT − f* = +0.36 Hz")},
		{nb02, "disc", "double it to 8 ms and the gap grows to +2.55 Hz, while the semi-implicit limit falls to 37.4 Hz",
			map[string]float64{"fstar": 20, "dt": 0.008}, has("gap f*_DT − f* = +2.55 Hz", "f* ≤ 37.4 Hz")},
		{nb02, "disc", "(so at 40 Hz both updates are unstable and there is no $f^\\star_{DT}$)",
			map[string]float64{"fstar": 40, "dt": 0.008}, has("explicit UNSTABLE, semi-implicit UNSTABLE", "f*_DT (Theorem 2) = none")},
		{nb02, "disc", "Then switch **exact DT** on: the gap closes to +0.00 Hz",
			map[string]float64{"fstar": 20, "exact": 1}, has("DT-exact inverse", "gap f*_DT − f* = +0.00 Hz")},
		{nb02, "disc", "Then switch **exact DT** on: the gap closes to +0.00 Hz",
			map[string]float64{"fstar": 20, "dt": 0.008, "exact": 1}, has("gap f*_DT − f* = +0.00 Hz")},
		// 03 · Proposition 1 and the closed loop
		{nb03, "ts", "The panel starts at $M = 1$, $\\beta_1 = 0.5$, $\\lambda_1 = 0.3$",
			map[string]float64{"m": 1, "beta1": 0.5, "lambda1": 0.3}, func(v lookView) error {
				if !slices.Equal(v.at, lookForInitial(v.g)) {
					return fmt.Errorf("the initial position is %v, not the text's", v.at)
				}
				return nil
			}},
		{nb03, "ts", "below $1/2$ (0.1, 0.3) a pink band appears at high frequencies", map[string]float64{"lambda1": 0.1}, negativeBand(true)},
		{nb03, "ts", "below $1/2$ (0.1, 0.3) a pink band appears at high frequencies", map[string]float64{"lambda1": 0.3}, negativeBand(true)},
		{nb03, "ts", "it vanishes at $\\lambda_1 \\ge 1/2$ (0.5, 0.9) exactly as Proposition 1 says", map[string]float64{"lambda1": 0.5}, negativeBand(false)},
		{nb03, "ts", "it vanishes at $\\lambda_1 \\ge 1/2$ (0.5, 0.9) exactly as Proposition 1 says", map[string]float64{"lambda1": 0.9}, negativeBand(false)},
		{nb03, "ts", "the zoomed plot shows its size", map[string]float64{"lambda1": 0.3}, func(v lookView) error {
			d := v.series("delayzoom", "ts")
			lo := slices.Min(d.Y)
			if !(lo < -0.05 && lo > -1) {
				return fmt.Errorf("zoomed TS delay reaches %g samples, not a visible negative value on ±1", lo)
			}
			return nil
		}},
		{nb03, "ts", "(the read-out gives where: 15.9 Hz at $\\lambda_1 = 0.3$, against the FS module's 20.9 Hz) and changes its height",
			nil, func(v lookView) error {
				f, h, err := closedLoopPeak(v)
				if err != nil {
					return err
				}
				if f != 15.9 || !strings.Contains(v.readout, "f*_DT = 20.9 Hz") || math.Abs(h) < 1 {
					return fmt.Errorf("closed-loop peak %g Hz at %+g dB: %q", f, h, v.readout)
				}
				return nil
			}},
		{nb03, "ts", "At $\\lambda_1 = 0.9$ the closed-loop peak jumps to the Nyquist edge, 125 Hz, and the step response rings: the read-out says why",
			map[string]float64{"lambda1": 0.9}, all(has("Nyquist edge", "real pole at z = -0.875", "flips sign every step"), func(v lookView) error {
				st := v.series("step", "cl").Y
				flips := 0
				for k := 2; k < 20; k++ {
					if (st[k]-st[k-1])*(st[k-1]-st[k-2]) < 0 {
						flips++
					}
				}
				if flips < 15 {
					return fmt.Errorf("step response changes direction %d times in its first 20 steps; no ringing", flips)
				}
				return nil
			})},
		{nb03, "ts", "At $M = 2$ flip the nesting: the same $\\beta, \\lambda$ give different weights and a different neuron",
			map[string]float64{"m": 2, "nesting": 1}, func(v lookView) error {
				off, _ := v.g.Set(map[string]float64{"m": 2, "nesting": 0})
				fr, _ := v.g.Frame(off...)
				w := regexp.MustCompile(`weights \[[^]]*\]`)
				if w.FindString(fr.Readout) == w.FindString(v.readout) {
					return fmt.Errorf("same weights for both nestings: %s", w.FindString(v.readout))
				}
				a, _ := v.g.Series("mag", "cl", off...)
				if equalFloats(a.Y, v.series("mag", "cl").Y) {
					return fmt.Errorf("same closed-loop response for both nestings")
				}
				return nil
			}},
		// 04 · Appendix A.6
		{nb04, "pole", "The panel starts at the paper's example $\\mu = 4$, $\\rho = 1$, $\\kappa = 2$: both poles sit on the real axis ($-2$, $-3$) while the blue dots mark a peak at $\\Omega^\\star \\approx 1.98$ rad/s",
			nil, has("poles -2.000, -3.000", "REAL poles, yet a target Ω* = 1.975 rad/s")},
		{nb04, "pole", "Raise $\\kappa$ past 2.25, to 3: the poles leave the axis and $\\Omega_{pole}$ appears, below $\\Omega^\\star$ (0.866 against 2.290 rad/s)",
			map[string]float64{"kappa": 3}, all(has("complex poles and a target: Ω* = 2.290 rad/s, Ω_pole = 0.866 rad/s"), func(v lookView) error {
				if p := v.series("mag", "pole"); len(p.X) != 1 {
					return fmt.Errorf("Ω_pole not marked")
				}
				return nil
			})},
		{nb04, "pole", "at large $\\kappa$ the two converge (at $\\kappa = 64$ they differ by 0.377 rad/s)",
			map[string]float64{"kappa": 64}, all(has("differ by 0.377"), func(v lookView) error {
				prev := math.Inf(1)
				for _, k := range []float64{3, 4, 6, 8, 16, 32, 64} {
					at, _ := v.g.Set(map[string]float64{"kappa": k})
					fr, _ := v.g.Frame(at...)
					d, err := lookView{v.g, at, fr.Readout}.number(`differ by`)
					if err != nil || !(d < prev) {
						return fmt.Errorf("κ = %g: Ω* − Ω_pole = %g does not shrink (before %g, %v)", k, d, prev, err)
					}
					prev = d
				}
				return nil
			})},
		{nb04, "pole", "Lower $\\kappa$ to 0.05, below $\\kappa_0 = 0.099$ (the read-out gives $\\kappa_0$): the peak collapses to $\\Omega = 0$ (low-pass)",
			map[string]float64{"kappa": 0.05}, all(has("κ₀ = 0.09902", "no target (low-pass)"), func(v lookView) error {
				if s := v.series("mag", "star"); len(s.X) != 0 {
					return fmt.Errorf("a target Ω* is still marked: %v", s.X)
				}
				return nil
			})},
	}
	return append(steps, playgroundSteps(nb03b)...)
}

// negativeBand checks notebook 03's pink band (Proposition 1) against the read-out.
func negativeBand(want bool) func(lookView) error {
	return func(v lookView) error {
		b := v.series("delay", "neg")
		if (len(b.X) > 0) != want || strings.Contains(v.readout, "TS delay negative on") != want {
			return fmt.Errorf("negative-delay band %v, want one: %v (%q)", b.X, want, v.readout)
		}
		return nil
	}
}

func lookForInitial(g *GridPanel) []int {
	at, _ := g.Set(nil)
	return at
}

// notebookMarkdown returns the Markdown cells of a notebook, joined by blank lines.
func notebookMarkdown(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "notebooks", name))
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			Type   string   `json:"cell_type"`
			Source []string `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var md []string
	for _, c := range nb.Cells {
		if c.Type == "markdown" {
			md = append(md, strings.Join(c.Source, ""))
		}
	}
	return strings.Join(md, "\n\n")
}

// fold folds whitespace runs into one space.
func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestWhatToLookFor(t *testing.T) {
	panels := lookForPanels(t)
	texts := map[string]string{}
	for _, s := range lookForSteps() {
		name := fmt.Sprintf("%s/%s/%v", strings.TrimSuffix(s.notebook, ".ipynb"), s.panel, s.set)
		t.Run(name, func(t *testing.T) {
			if _, ok := texts[s.notebook]; !ok {
				texts[s.notebook] = fold(notebookMarkdown(t, s.notebook))
			}
			if step := fold(s.step); !strings.Contains(texts[s.notebook], step) {
				t.Fatalf("%s does not say %q", s.notebook, step)
			}
			g := panels[s.panel]
			at, err := g.Set(s.set)
			if err != nil {
				t.Fatalf("not reachable: %v", err)
			}
			fr, err := g.Frame(at...)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.check(lookView{g, at, fr.Readout}); err != nil {
				t.Errorf("%q: %v", s.step, err)
			}
		})
	}
}

// Every notebook with a panel has a "What to look for" paragraph, and every sentence of it is covered by
// at least one step of the table.
func TestWhatToLookForCoversTheText(t *testing.T) {
	covered := map[string][]string{}
	for _, s := range lookForSteps() {
		covered[s.notebook] = append(covered[s.notebook], fold(s.step))
	}
	for nbName, steps := range covered {
		md := notebookMarkdown(t, nbName)
		i := strings.Index(md, "**What to look for.**")
		if i < 0 {
			t.Errorf("%s has no **What to look for.** paragraph", nbName)
			continue
		}
		para := md[i+len("**What to look for.**"):]
		if j := strings.Index(para, "\n\n"); j >= 0 {
			para = para[:j]
		}
		para = fold(para)
		for _, sentence := range lookForSentences(para) {
			if !slices.ContainsFunc(steps, func(s string) bool {
				return strings.Contains(s, sentence) || strings.Contains(sentence, s) || overlaps(sentence, s)
			}) {
				t.Errorf("%s: no step checks %q", nbName, sentence)
			}
		}
	}
}

// lookForSentences splits a paragraph into its sentences.
func lookForSentences(p string) []string {
	var out []string
	for _, s := range regexp.MustCompile(`\. `).Split(p, -1) {
		if s = strings.TrimSpace(strings.TrimSuffix(s, ".")); len(s) > 12 {
			out = append(out, s)
		}
	}
	return out
}

// overlaps reports whether the step's words share a run of at least 40 characters with the sentence.
func overlaps(sentence, step string) bool {
	const n = 40
	for i := 0; i+n <= len(sentence); i++ {
		if strings.Contains(step, sentence[i:i+n]) {
			return true
		}
	}
	return len(sentence) < n && strings.Contains(step, sentence)
}
