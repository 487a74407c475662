package analysis

import (
	"cmp"
	"fmt"
	"math"
)

// Learned target-frequency shifts (the paper's Figure 2, left: "target frequency shifts learned by the
// FS module across random seeds", Section 5.1).
//
// For parameter set i of a layer (a neuron; a channel of a convolutional layer), the shift is
//
//	Δf*_i = f*_learned,i − f*_init,i   (Hz),
//
// with f*_init the log-spaced initial value of neuron.Layer (InitialTargetsHz: the same list for every
// layer of a width and every seed) and f*_learned the trained value the graph uses (Layer.TargetHz). The
// log ratio log2(f*_learned/f*_init) (octaves) is reported beside it, since the initialization is
// log-spaced.

// ShiftOptions configure TargetShifts.
type ShiftOptions struct {
	// Bins is the number of histogram bins (0 means 30).
	Bins int
	// LoHz and HiHz bound the histograms of Δf* in Hz; when LoHz ≥ HiHz each layer's histogram spans
	// the range of its pooled values.
	LoHz, HiHz float64
}

// LayerShifts are one run's shifts in one layer, per parameter set.
type LayerShifts struct {
	Layer int    `json:"layer"`
	Name  string `json:"name"`
	// InitialHz, LearnedHz and DeltaHz are f*_init, f*_learned and Δf* in Hz; LogRatio is
	// log2(f*_learned/f*_init) (NaN where f*_learned is 0).
	InitialHz Floats `json:"initial_hz"`
	LearnedHz Floats `json:"learned_hz"`
	DeltaHz   Floats `json:"delta_hz"`
	LogRatio  Floats `json:"log2_ratio"`
	// Delta summarizes DeltaHz.
	Delta Summary `json:"delta"`
}

// RunShifts are one run's shifts, per layer.
type RunShifts struct {
	Dir    string        `json:"dir"`
	Seed   int64         `json:"seed"`
	Layers []LayerShifts `json:"layers"`
}

// LayerShiftSummary aggregates a layer's shifts over the seeds of a group.
type LayerShiftSummary struct {
	Layer int    `json:"layer"`
	Name  string `json:"name"`
	// Delta and LogRatio summarize Δf* (Hz) and log2(f*_learned/f*_init) pooled over all parameter sets
	// of all seeds; Histogram is the pooled histogram of Δf* in Hz.
	Delta     Summary    `json:"delta_hz"`
	LogRatio  Summary    `json:"log2_ratio"`
	Histogram *Histogram `json:"histogram_hz"`
	// SeedMean summarizes, over seeds, each seed's mean Δf* in Hz (its Mean ± Std is the across-seed
	// mean ± std of the layer's mean shift).
	SeedMean Summary `json:"seed_mean_delta_hz"`
}

// ShiftGroup is the shifts of the runs of one group (seeds of one configuration).
type ShiftGroup struct {
	Key    GroupKey            `json:"key"`
	Runs   []RunShifts         `json:"runs"`
	Layers []LayerShiftSummary `json:"layers"`
}

// ShiftReport is what TargetShifts returns.
type ShiftReport struct {
	Groups []ShiftGroup `json:"groups"`
}

// TargetShifts returns the learned target-frequency shifts of every run, per layer, and their
// aggregates over the seeds of each group (see GroupKey). Runs whose neurons have no target frequency
// (LIF, adaptive LIF) are an error.
func TargetShifts(runs []*Run, opts ShiftOptions) (*ShiftReport, error) {
	bins := cmp.Or(opts.Bins, 30)
	if bins < 1 {
		return nil, fmt.Errorf("histogram bins must be positive, got %d", opts.Bins)
	}
	keys, by := groupRuns(runs)
	rep := &ShiftReport{}
	for _, k := range keys {
		g := ShiftGroup{Key: k}
		for _, r := range by[k] {
			layers, err := r.layersWith(hasTarget, "target frequency")
			if err != nil {
				return nil, err
			}
			rs := RunShifts{Dir: r.Dir, Seed: r.Config.Seed}
			for _, l := range layers {
				ls := LayerShifts{Layer: l.Index, Name: l.Name, InitialHz: l.InitialHz, LearnedHz: l.TargetHz}
				for i, f := range l.TargetHz {
					ls.DeltaHz = append(ls.DeltaHz, f-l.InitialHz[i])
					ls.LogRatio = append(ls.LogRatio, logRatio(f, l.InitialHz[i]))
				}
				ls.Delta = Summarize(ls.DeltaHz)
				rs.Layers = append(rs.Layers, ls)
			}
			if len(g.Runs) > 0 && len(rs.Layers) != len(g.Runs[0].Layers) {
				return nil, fmt.Errorf("run %s has %d layers, run %s of the same group %d", r.Dir, len(rs.Layers), g.Runs[0].Dir, len(g.Runs[0].Layers))
			}
			g.Runs = append(g.Runs, rs)
		}
		for li, l0 := range g.Runs[0].Layers {
			var delta, ratio, seedMeans []float64
			for _, rs := range g.Runs {
				delta = append(delta, rs.Layers[li].DeltaHz...)
				ratio = append(ratio, rs.Layers[li].LogRatio...)
				seedMeans = append(seedMeans, rs.Layers[li].Delta.Mean)
			}
			h, err := histogramOf(delta, opts.LoHz, opts.HiHz, bins)
			if err != nil {
				return nil, err
			}
			g.Layers = append(g.Layers, LayerShiftSummary{Layer: l0.Layer, Name: l0.Name, Delta: Summarize(delta),
				LogRatio: Summarize(ratio), Histogram: h, SeedMean: Summarize(seedMeans)})
		}
		rep.Groups = append(rep.Groups, g)
	}
	return rep, nil
}

// logRatio returns log2(f/f0), NaN unless both are positive.
func logRatio(f, f0 float64) float64 {
	if !(f > 0 && f0 > 0) {
		return math.NaN()
	}
	return math.Log2(f / f0)
}

// Summary returns one row per group and layer: the pooled Δf* summary in Hz, the mean log ratio and the
// across-seed mean ± std of the layer's mean shift.
func (r *ShiftReport) Summary() Table {
	t := Table{Header: []string{"group", "layer", "seeds", "n", "mean_hz", "std_hz", "q10_hz", "median_hz", "q90_hz",
		"mean_log2_ratio", "seed_mean_hz", "seed_std_hz"}}
	for _, g := range r.Groups {
		for _, l := range g.Layers {
			t.Rows = append(t.Rows, []string{g.Key.String(), l.Name, itoa(len(g.Runs)), itoa(l.Delta.N),
				num(l.Delta.Mean, 4), num(l.Delta.Std, 4), num(l.Delta.Q10, 4), num(l.Delta.Median, 4), num(l.Delta.Q90, 4),
				num(l.LogRatio.Mean, 4), num(l.SeedMean.Mean, 4), num(l.SeedMean.Std, 4)})
		}
	}
	return t
}

// Long returns one row per run, layer and parameter set: f*_init, f*_learned, Δf* (Hz) and the log ratio.
func (r *ShiftReport) Long() Table {
	t := Table{Header: []string{"dataset", "model", "m", "width", "seed", "dir", "layer", "neuron", "f_init_hz", "f_learned_hz", "delta_hz", "log2_ratio"}}
	for _, g := range r.Groups {
		for _, rs := range g.Runs {
			for _, l := range rs.Layers {
				for i := range l.DeltaHz {
					t.Rows = append(t.Rows, []string{g.Key.Dataset, g.Key.Model, itoa(g.Key.M), itoa(g.Key.Width),
						fmt.Sprint(rs.Seed), rs.Dir, l.Name, itoa(i), num(l.InitialHz[i], 10), num(l.LearnedHz[i], 10),
						num(l.DeltaHz[i], 10), num(l.LogRatio[i], 10)})
				}
			}
		}
	}
	return t
}
