package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/fits-snn/fits/fits/theory"
)

// Learned group-delay shifts Δτ(ω) (the paper's Figure 2, right), in samples, from each neuron's learned
// β, λ (and f*) with the closed forms of fits/theory (theory.GroupDelay), of two systems: the TS module
// alone, G(z) of Eqs. 8–10 (theory.TS), and the closed-loop neuron H(z) of Algorithm 1, whose TS module
// sits inside the FS loop (theory.ClosedLoop). DelayVsIdentity measures the TS module against the
// identity and the closed loop against the FS module alone; DelayVsInit measures both against the same
// system with the TS module at its initialization. Unstable closed loops stay in the curves
// (LayerDelays.Unstable counts them). docs/analysis.md ("Group-delay shifts") gives the definitions and
// which one the paper's figure shows.

// DelayReference selects what Δτ is measured against (see above).
type DelayReference string

const (
	// DelayVsIdentity measures the TS module against the identity and the closed loop against the FS
	// module alone.
	DelayVsIdentity DelayReference = "identity"
	// DelayVsInit measures both against the same system with the TS module at its initialization.
	DelayVsInit DelayReference = "init"
)

// DelayOptions configure DelayShifts.
type DelayOptions struct {
	// Points is the number of frequencies of the grid (0 means 101), evenly spaced over [0, FMaxHz].
	Points int
	// FMaxHz is the grid's upper end in Hz; 0 means the Nyquist frequency 1/(2Δt) of each run.
	FMaxHz float64
	// Reference is DelayVsIdentity (the default when empty) or DelayVsInit.
	Reference DelayReference
}

// DelayCurves summarizes Δτ(ω) over a set of neurons at each frequency of the grid, in samples: the
// values at grid point p are Mean[p], Std[p], and the quantiles.
type DelayCurves struct {
	Mean   Floats `json:"mean"`
	Std    Floats `json:"std"`
	Q10    Floats `json:"q10"`
	Q25    Floats `json:"q25"`
	Median Floats `json:"median"`
	Q75    Floats `json:"q75"`
	Q90    Floats `json:"q90"`
	// SeedMean and SeedStd are the mean and standard deviation over seeds of each seed's layer-mean
	// curve (SeedStd is 0 for one seed).
	SeedMean Floats `json:"seed_mean"`
	SeedStd  Floats `json:"seed_std"`
}

// LayerDelays are the group-delay shifts of one layer, pooled over the seeds of a group.
type LayerDelays struct {
	Layer int    `json:"layer"`
	Name  string `json:"name"`
	// Neurons is the number of parameter sets pooled (over all seeds); Skipped those left out because
	// their response is undefined at some grid frequency (a zero of H on the unit circle).
	Neurons int `json:"neurons"`
	Skipped int `json:"skipped,omitempty"`
	// Unstable is the number of pooled neurons whose learned closed loop has a pole on or outside the
	// unit circle.
	Unstable int `json:"unstable"`
	// MsPerSample converts the curves' samples to milliseconds (Δt in ms).
	MsPerSample float64 `json:"ms_per_sample"`
	// TS and ClosedLoop are Δτ_TS(ω) and Δτ_CL(ω) in samples.
	TS         DelayCurves `json:"ts"`
	ClosedLoop DelayCurves `json:"closed_loop"`
}

// DelayGroup is the group-delay shifts of the runs of one group.
type DelayGroup struct {
	Key   GroupKey `json:"key"`
	Seeds []int64  `json:"seeds"`
	Dirs  []string `json:"dirs"`
	// FrequencyHz is the grid, in Hz; ω = 2πfΔt rad/sample.
	FrequencyHz Floats        `json:"frequency_hz"`
	Layers      []LayerDelays `json:"layers"`
}

// DelayReport is what DelayShifts returns.
type DelayReport struct {
	Reference DelayReference `json:"reference"`
	Groups    []DelayGroup   `json:"groups"`
}

// DelayShifts returns, for each group of FS+TS runs and each layer, the learned group-delay shifts of
// the TS module alone and of the closed-loop neuron on a frequency grid, summarized over the layer's
// neurons pooled over seeds (see above and docs/analysis.md for the definitions). Runs without a TS module
// are an error, as are runs of one group with different time bins.
func DelayShifts(runs []*Run, opts DelayOptions) (*DelayReport, error) {
	points := cmp.Or(opts.Points, 101)
	if points < 2 {
		return nil, fmt.Errorf("the frequency grid needs at least 2 points, got %d", opts.Points)
	}
	ref := cmp.Or(opts.Reference, DelayVsIdentity)
	if ref != DelayVsIdentity && ref != DelayVsInit {
		return nil, fmt.Errorf("unknown delay reference %q (valid: %s, %s)", ref, DelayVsIdentity, DelayVsInit)
	}
	if opts.FMaxHz < 0 || math.IsNaN(opts.FMaxHz) || math.IsInf(opts.FMaxHz, 0) {
		return nil, fmt.Errorf("grid upper frequency must be a finite positive number of Hz, got %g", opts.FMaxHz)
	}
	keys, by := groupRuns(runs)
	rep := &DelayReport{Reference: ref}
	for _, k := range keys {
		g := DelayGroup{Key: k}
		// perLayer[l][seed] holds [neuron][point] shifts for TS and the closed loop.
		type curves struct {
			ts, cl   [][]float64
			unstable []bool
		}
		var perLayer [][]curves
		var layerInfo []Layer
		dt := 0.0
		for _, r := range by[k] {
			layers, err := r.layersWith(hasTS, "TS module")
			if err != nil {
				return nil, err
			}
			if g.FrequencyHz == nil {
				dt = layers[0].Neuron.Dt
				fmax := cmp.Or(opts.FMaxHz, 1/(2*dt))
				if fmax > 1/(2*dt) {
					return nil, fmt.Errorf("grid upper frequency %g Hz is above the Nyquist frequency %g Hz", fmax, 1/(2*dt))
				}
				g.FrequencyHz = theory.LinSpace(0, fmax, points)
				perLayer = make([][]curves, len(layers))
				layerInfo = layers
			}
			if len(layers) != len(perLayer) {
				return nil, fmt.Errorf("run %s has %d layers, run %s of the same group %d", r.Dir, len(layers), g.Dirs[0], len(perLayer))
			}
			g.Seeds, g.Dirs = append(g.Seeds, r.Config.Seed), append(g.Dirs, r.Dir)
			for li, l := range layers {
				if l.Neuron.Dt != dt {
					return nil, fmt.Errorf("run %s: time bin %g s differs from %g s of its group", r.Dir, l.Neuron.Dt, dt)
				}
				var c curves
				for i := range l.Neurons {
					ts, cl, stable, err := neuronDelayShifts(l, i, g.FrequencyHz, ref)
					if err != nil {
						return nil, fmt.Errorf("run %s layer %s neuron %d: %w", r.Dir, l.Name, i, err)
					}
					c.ts, c.cl, c.unstable = append(c.ts, ts), append(c.cl, cl), append(c.unstable, !stable)
				}
				perLayer[li] = append(perLayer[li], c)
			}
		}
		for li, seeds := range perLayer {
			ld := LayerDelays{Layer: li, Name: layerInfo[li].Name, MsPerSample: 1000 * dt}
			var tsAll, clAll [][]float64
			var tsSeed, clSeed [][]float64 // [seed][point] layer means
			for _, c := range seeds {
				var tsKept, clKept [][]float64
				for i := range c.ts {
					if !finiteAll(c.ts[i]) || !finiteAll(c.cl[i]) {
						ld.Skipped++
						continue
					}
					tsKept, clKept = append(tsKept, c.ts[i]), append(clKept, c.cl[i])
					if c.unstable[i] {
						ld.Unstable++
					}
				}
				ld.Neurons += len(tsKept)
				tsAll, clAll = append(tsAll, tsKept...), append(clAll, clKept...)
				tsSeed, clSeed = append(tsSeed, columnMeans(tsKept, len(g.FrequencyHz))), append(clSeed, columnMeans(clKept, len(g.FrequencyHz)))
			}
			ld.TS = summarizeCurves(tsAll, tsSeed, len(g.FrequencyHz))
			ld.ClosedLoop = summarizeCurves(clAll, clSeed, len(g.FrequencyHz))
			g.Layers = append(g.Layers, ld)
		}
		rep.Groups = append(rep.Groups, g)
	}
	return rep, nil
}

// neuronDelayShifts returns Δτ_TS and Δτ_CL in samples of parameter set i of layer l at the
// frequencies fHz, and whether its learned closed loop is stable.
func neuronDelayShifts(l Layer, i int, fHz []float64, ref DelayReference) (ts, cl []float64, stable bool, err error) {
	fs, err := FSModule(l.Neuron, l.TargetHz[i])
	if err != nil {
		return nil, nil, false, err
	}
	learned := learnedTS(l, i)
	loop := theory.ClosedLoop{FS: fs, TS: learned}
	var tsRef theory.TS // identity: no stage
	if ref == DelayVsInit {
		tsRef = initialTS(l.Neuron, len(l.Beta))
	}
	loopRef := theory.ClosedLoop{FS: fs, TS: tsRef}
	c := l.Neuron.Constants()
	ts, cl = make([]float64, len(fHz)), make([]float64, len(fHz))
	for p, f := range fHz {
		w := c.RadPerSampleFromHz(f)
		ts[p] = learned.GroupDelay(w)
		if tsRef.M() > 0 {
			ts[p] -= tsRef.GroupDelay(w)
		}
		cl[p] = loop.GroupDelay(w) - loopRef.GroupDelay(w)
	}
	return ts, cl, loop.Stable(), nil
}

func finiteAll(v []float64) bool {
	return !slices.ContainsFunc(v, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) })
}

// columnMeans returns the mean over rows of each column of rows [row][column] (NaN when there is no row).
func columnMeans(rows [][]float64, cols int) []float64 {
	out := make([]float64, cols)
	for p := range out {
		col := make([]float64, len(rows))
		for i, r := range rows {
			col[i] = r[p]
		}
		out[p], _ = MeanStd(col)
	}
	return out
}

// summarizeCurves summarizes the pooled curves all [neuron][point] and the per-seed mean curves
// seeds [seed][point] at each point.
func summarizeCurves(all, seeds [][]float64, points int) DelayCurves {
	var c DelayCurves
	for p := range points {
		col := make([]float64, len(all))
		for i, r := range all {
			col[i] = r[p]
		}
		s := Summarize(col)
		if s.N == 0 {
			nan := math.NaN()
			s = Summary{Mean: nan, Std: nan, Q10: nan, Q25: nan, Median: nan, Q75: nan, Q90: nan}
		}
		c.Mean, c.Std = append(c.Mean, s.Mean), append(c.Std, s.Std)
		c.Q10, c.Q25, c.Median = append(c.Q10, s.Q10), append(c.Q25, s.Q25), append(c.Median, s.Median)
		c.Q75, c.Q90 = append(c.Q75, s.Q75), append(c.Q90, s.Q90)
		sc := make([]float64, 0, len(seeds))
		for _, r := range seeds {
			if !math.IsNaN(r[p]) {
				sc = append(sc, r[p])
			}
		}
		m, sd := MeanStd(sc)
		c.SeedMean, c.SeedStd = append(c.SeedMean, m), append(c.SeedStd, sd)
	}
	return c
}

// Summary returns one row per group and layer: the frequency of the largest mean |Δτ| and its value,
// for the TS module alone and the closed loop, in samples and milliseconds.
func (r *DelayReport) Summary() Table {
	t := Table{Header: []string{"group", "layer", "seeds", "neurons", "unstable", "ts_peak_hz", "ts_peak_mean_samples", "ts_peak_mean_ms",
		"cl_peak_hz", "cl_peak_mean_samples", "cl_peak_mean_ms"}}
	for _, g := range r.Groups {
		for _, l := range g.Layers {
			pt, pc := argMaxAbs(l.TS.Mean), argMaxAbs(l.ClosedLoop.Mean)
			row := []string{g.Key.String(), l.Name, itoa(len(g.Seeds)), itoa(l.Neurons), itoa(l.Unstable)}
			for _, x := range []struct {
				p int
				c DelayCurves
			}{{pt, l.TS}, {pc, l.ClosedLoop}} {
				if x.p < 0 {
					row = append(row, "", "", "")
					continue
				}
				row = append(row, num(g.FrequencyHz[x.p], 4), num(x.c.Mean[x.p], 4), num(x.c.Mean[x.p]*l.MsPerSample, 4))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// argMaxAbs returns the index of the largest |v| (−1 when every value is NaN).
func argMaxAbs(v []float64) int {
	best := -1
	for i, x := range v {
		if !math.IsNaN(x) && (best < 0 || math.Abs(x) > math.Abs(v[best])) {
			best = i
		}
	}
	return best
}

// Long returns one row per group, layer, system (ts or closed_loop) and grid frequency: the pooled
// summary of Δτ in samples, its mean in milliseconds and the across-seed mean ± std of the layer mean.
func (r *DelayReport) Long() Table {
	t := Table{Header: []string{"dataset", "model", "m", "width", "reference", "layer", "system", "frequency_hz",
		"mean_samples", "std_samples", "q10_samples", "q25_samples", "median_samples", "q75_samples", "q90_samples",
		"mean_ms", "seed_mean_samples", "seed_std_samples"}}
	for _, g := range r.Groups {
		for _, l := range g.Layers {
			for _, s := range []struct {
				name string
				c    DelayCurves
			}{{"ts", l.TS}, {"closed_loop", l.ClosedLoop}} {
				for p, f := range g.FrequencyHz {
					c := s.c
					t.Rows = append(t.Rows, []string{g.Key.Dataset, g.Key.Model, itoa(g.Key.M), itoa(g.Key.Width), string(r.Reference),
						l.Name, s.name, num(f, 8), num(c.Mean[p], 8), num(c.Std[p], 8), num(c.Q10[p], 8), num(c.Q25[p], 8),
						num(c.Median[p], 8), num(c.Q75[p], 8), num(c.Q90[p], 8), num(c.Mean[p]*l.MsPerSample, 8),
						num(c.SeedMean[p], 8), num(c.SeedStd[p], 8)})
				}
			}
		}
	}
	return t
}
