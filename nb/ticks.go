package nb

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// Tick marks of the static figures. Every log axis is labelled at every decade it spans (and at 2 and 5
// when it spans less than two), every axis in dB at every 10 dB (0 dB included), every other linear axis
// at 1-2-5 steps with five to sixteen labels, 0 included when in range. figureTicks applies them to the axes
// that use gonum/plot's default tickers; an axis with its own ticks (plot.ConstantTicks) keeps them.

// decadeTicks labels every decade in [min, max] (and 2·10ᵏ, 5·10ᵏ over less than two decades), with
// unlabelled minor ticks at 2..9·10ᵏ.
type decadeTicks struct{}

// Ticks implements plot.Ticker.
func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	dense := math.Log10(hi/lo) < 2
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1.0; m <= 9; m++ {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (dense && (m == 2 || m == 5)) {
				t.Label = tickText(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// stepTicks labels every multiple of Step in [min, max], with an unlabelled minor tick halfway.
type stepTicks struct{ Step float64 }

// Ticks implements plot.Ticker.
func (s stepTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(s.Step > 0) || !(hi > lo) {
		return nil
	}
	var ts []plot.Tick
	half := s.Step / 2
	// v is k·half for a whole k, not a running sum: a sum that passes 0 leaves a remainder like 1e-17.
	for k := math.Ceil(lo / half); k*half <= hi+half*1e-9; k++ {
		r := roundSig(k*half, 10) + 0 // +0 turns −0 into 0
		t := plot.Tick{Value: r}
		if math.Abs(math.Remainder(r, s.Step)) < s.Step*1e-6 {
			t.Label = tickText(r)
		}
		ts = append(ts, t)
	}
	return ts
}

// niceStep is the smallest 1-2-5 step at least (hi − lo)/n: with n = 8, five to sixteen labels on [lo, hi].
func niceStep(lo, hi, n float64) float64 {
	raw := (hi - lo) / n
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// tickText writes a tick value without exponent noise: 0.001, 100000, 1e+06 → "10⁶".
func tickText(v float64) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e6 || a < 1e-3 {
		e := math.Floor(math.Log10(a))
		if m := v / math.Pow(10, e); math.Abs(m-math.Round(m)) < 1e-9 {
			s := "10" + superscript(int(e))
			if math.Round(m) != 1 {
				s = strconv.FormatFloat(math.Round(m), 'f', -1, 64) + "·" + s
			}
			return s
		}
	}
	return strconv.FormatFloat(roundSig(v, 6), 'f', -1, 64)
}

var superscripts = strings.NewReplacer("-", "⁻", "0", "⁰", "1", "¹", "2", "²", "3", "³", "4", "⁴", "5", "⁵", "6", "⁶", "7", "⁷", "8", "⁸", "9", "⁹")

func superscript(n int) string { return superscripts.Replace(strconv.Itoa(n)) }

// isDBAxis reports whether an axis is in decibels (its label says "dB").
func isDBAxis(a plot.Axis) bool { return strings.Contains(a.Label.Text, "dB") }

// figureTicks gives the axes of p that use gonum/plot's default tickers the figures' tick marks (see
// the top of this file).
func figureTicks(p *plot.Plot) {
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		switch a.Tick.Marker.(type) {
		case plot.DefaultTicks, plot.LogTicks, nil:
		default:
			continue // the figure chose its ticks
		}
		if _, log := a.Scale.(plot.LogScale); log {
			a.Tick.Marker = decadeTicks{}
			continue
		}
		if isDBAxis(*a) && a.Max-a.Min >= 20 {
			a.Tick.Marker = stepTicks{Step: 10}
			continue
		}
		a.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick { return stepTicks{Step: niceStep(lo, hi, 8)}.Ticks(lo, hi) })
	}
}
