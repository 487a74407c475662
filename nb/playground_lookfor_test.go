package nb

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
)

// playgroundSteps are the "What to look for" steps of notebook 03b's playground (see lookfor_test.go).
func playgroundSteps(nb string) []lookFor {
	firstSpikeAt := func(hz float64) func(lookView) error {
		return func(v lookView) error {
			got, err := v.number(`chirp at`)
			if err != nil {
				return err
			}
			if got != hz {
				return fmt.Errorf("first spike with the chirp at %g Hz, the text says %g", got, hz)
			}
			return nil
		}
	}
	// afterMark: the first spike comes at or after the dashed f* line, while the chirp is within 25 % of f*.
	afterMark := func(v lookView) error {
		sp, mark := v.series("spikes", "s"), v.series("spikes", "fcross")
		if len(sp.X) == 0 || len(mark.X) != 1 {
			return fmt.Errorf("spikes %v, f* mark %v", sp.X, mark.X)
		}
		if sp.X[0] < mark.X[0] || sp.X[0] > mark.X[0]+0.05 {
			return fmt.Errorf("first spike at %g s, the chirp passes f* at %g s", sp.X[0], mark.X[0])
		}
		return nil
	}
	spikes := func(v lookView) int { return len(v.series("spikes", "s").X) }
	// toneShare is |V̂(f)| of the voltage at the two tones' frequencies.
	toneShare := func(v lookView, f float64) float64 {
		y := v.series("voltage", "v").Y
		var s complex128
		for k, x := range y {
			s += complex(x, 0) * cmplx.Rect(1, -2*math.Pi*f*float64(k)*0.004)
		}
		return cmplx.Abs(s)
	}
	follows := func(tone, other float64) func(lookView) error {
		return func(v lookView) error {
			if a, b := toneShare(v, tone), toneShare(v, other); !(a > 2*b) {
				return fmt.Errorf("voltage at %g Hz: %.3g, at %g Hz: %.3g; it does not follow %g Hz", tone, a, other, b, tone)
			}
			return nil
		}
	}
	peak := func(hz, dB float64) func(lookView) error {
		return has(fmt.Sprintf("closed-loop |H| peaks at %.1f Hz, %+.1f dB re FS alone", hz, dB))
	}
	return []lookFor{
		{nb, "play", "The panel starts on the chirp with $a = 2$, $f^\\star = 10$ Hz and no TS: the neuron stays silent while the chirp is far from $f^\\star$ and fires when the chirp passes through $f^\\star$ (the read-out gives the chirp at 10.5 Hz at the first spike, just after the dashed line)",
			map[string]float64{"input": 0, "amp": 2, "fstar": 10, "m": 0}, all(firstSpikeAt(10.5), afterMark, func(v lookView) error {
				if !slices.Equal(v.at, lookForInitial(v.g)) {
					return fmt.Errorf("the initial position is not the text's")
				}
				return nil
			})},
		{nb, "play", "Move $f^\\star$ to 5 and 20 Hz and the spikes move in time with it (first spike at 5.7 and 20.1 Hz)",
			map[string]float64{"fstar": 5}, all(firstSpikeAt(5.7), afterMark)},
		{nb, "play", "Move $f^\\star$ to 5 and 20 Hz and the spikes move in time with it (first spike at 5.7 and 20.1 Hz)",
			map[string]float64{"fstar": 20}, all(firstSpikeAt(20.1), afterMark)},
		{nb, "play", "At $a = 1$ it stays just below threshold", map[string]float64{"amp": 1}, func(v lookView) error {
			top := slices.Max(v.series("voltage", "v").Y)
			if spikes(v) != 0 || top < 0.8 || top >= 1 {
				return fmt.Errorf("%d spikes, voltage up to %g", spikes(v), top)
			}
			return nil
		}},
		{nb, "play", "at $a = 4$ it also fires off-resonance (first spike at 5.4 Hz)", map[string]float64{"amp": 4}, firstSpikeAt(5.4)},
		{nb, "play", "With two tones, put $f^\\star$ on one of them (5 or 20 Hz against 6 and 25 Hz) and the voltage follows that tone",
			map[string]float64{"input": 1, "fstar": 5}, follows(6, 25)},
		{nb, "play", "With two tones, put $f^\\star$ on one of them (5 or 20 Hz against 6 and 25 Hz) and the voltage follows that tone",
			map[string]float64{"input": 1, "fstar": 20}, follows(25, 6)},
		{nb, "play", "With the SHD-like pattern, modulated at 8.9 Hz, the neuron fires most where its $f^\\star$ is near the modulation (6 spikes at 7 Hz, 5 at 5 and 10 Hz, one from 14 to 40 Hz)",
			map[string]float64{"input": 3}, all(has("modulated at 8.9 Hz"), func(v lookView) error {
				want := map[float64]int{5: 5, 7: 6, 10: 5, 14: 1, 20: 1, 28: 1, 40: 1}
				for f, n := range want {
					at, _ := v.g.Set(map[string]float64{"input": 3, "fstar": f})
					if got := len(mustSeries(v.g, "spikes", "s", at).X); got != n {
						return fmt.Errorf("f* = %g Hz: %d spikes, the text says %d", f, got, n)
					}
				}
				return nil
			})},
		{nb, "play", "White noise at $a = 2$ fires too", map[string]float64{"input": 2}, func(v lookView) error {
			if spikes(v) == 0 {
				return fmt.Errorf("no spike")
			}
			return nil
		}},
		{nb, "play", "with $M = 1$ and $\\lambda = 0.2 < 1/2$ the closed-loop peak moves and drops (to 8.2 Hz and −3.5 dB",
			map[string]float64{"m": 1, "lambda": 0.2}, peak(8.2, -3.5)},
		{nb, "play", "at $M = 2$ the two nestings give different neurons (peaks at 7.7 and 6.4 Hz)",
			map[string]float64{"m": 2, "lambda": 0.2, "nesting": 0}, peak(7.7, -4.4)},
		{nb, "play", "at $M = 2$ the two nestings give different neurons (peaks at 7.7 and 6.4 Hz)",
			map[string]float64{"m": 2, "lambda": 0.2, "nesting": 1}, all(peak(6.4, -7.4), func(v lookView) error {
				off, _ := v.g.Set(map[string]float64{"m": 2, "lambda": 0.2, "nesting": 0})
				if equalFloats(mustSeries(v.g, "voltage", "v", off).Y, v.series("voltage", "v").Y) {
					return fmt.Errorf("the two nestings give the same voltage")
				}
				return nil
			})},
		{nb, "play", "At $f^\\star = 80$ Hz, past the Jury limit, the read-out says UNSTABLE", map[string]float64{"fstar": 80}, has("UNSTABLE", "Jury limit (77.2 Hz")},
		// Every input fires at the default amplitude (the panel's own claim in the introduction).
		{nb, "play", "every input stays just below the threshold at $a = 1$ and fires at $a = 2$", nil, func(v lookView) error {
			for in := range PlaygroundInputs {
				for _, a := range []float64{1, 2} {
					at, _ := v.g.Set(map[string]float64{"input": float64(in), "amp": a})
					n := len(mustSeries(v.g, "spikes", "s", at).X)
					if (a == 1) != (n == 0) {
						return fmt.Errorf("%s at a = %g: %d spikes", PlaygroundInputs[in], a, n)
					}
				}
			}
			return nil
		}},
	}
}

func mustSeries(g *GridPanel, plot, name string, at []int) PanelData {
	d, err := g.Series(plot, name, at...)
	if err != nil {
		panic(err)
	}
	return d
}
