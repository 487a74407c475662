package analysis

import (
	"cmp"
	"fmt"
)

// Learned distributions of the TS coefficients (the paper's Figure A.2, Appendix C: β ∈ (−1, 1) of the
// all-pass stages and λ ∈ (0, 1) of the mixing, per hidden layer). The paper shows one representative
// checkpoint; TSParams gives each run's values and histograms and the same pooled over the seeds of a
// group. Histograms have fixed ranges, (−1, 1) for β and (0, 1) for λ, so runs can be compared bin by
// bin.

// TSParamOptions configure TSParams.
type TSParamOptions struct {
	// Bins is the number of histogram bins over (−1, 1) for β and (0, 1) for λ (0 means 20).
	Bins int
}

// StageParams are the values of one TS stage m (1-based) of one layer: β_m and λ_m per parameter set,
// their summaries and histograms.
type StageParams struct {
	Stage         int        `json:"stage"`
	Beta          Floats     `json:"beta,omitempty"`
	Lambda        Floats     `json:"lambda,omitempty"`
	BetaSummary   Summary    `json:"beta_summary"`
	LambdaSummary Summary    `json:"lambda_summary"`
	BetaHist      *Histogram `json:"beta_histogram"`
	LambdaHist    *Histogram `json:"lambda_histogram"`
}

// LayerTSParams are a layer's TS coefficients, per stage.
type LayerTSParams struct {
	Layer  int           `json:"layer"`
	Name   string        `json:"name"`
	Stages []StageParams `json:"stages"`
}

// RunTSParams are one run's TS coefficients, per layer.
type RunTSParams struct {
	Dir    string          `json:"dir"`
	Seed   int64           `json:"seed"`
	Layers []LayerTSParams `json:"layers"`
}

// TSParamGroup is the TS coefficients of the runs of one group: per run, and pooled over its seeds
// (Pooled holds no values, only summaries and histograms).
type TSParamGroup struct {
	Key    GroupKey        `json:"key"`
	Runs   []RunTSParams   `json:"runs"`
	Pooled []LayerTSParams `json:"pooled"`
}

// TSParamReport is what TSParams returns.
type TSParamReport struct {
	Groups []TSParamGroup `json:"groups"`
}

// TSParams returns the learned β and λ of every FS+TS run per layer and stage, with summaries and
// histograms, and the same pooled over the seeds of each group. Runs without a TS module are an error.
func TSParams(runs []*Run, opts TSParamOptions) (*TSParamReport, error) {
	bins := cmp.Or(opts.Bins, 20)
	if bins < 1 {
		return nil, fmt.Errorf("histogram bins must be positive, got %d", opts.Bins)
	}
	stage := func(m int, beta, lambda []float64, keep bool) (StageParams, error) {
		s := StageParams{Stage: m, BetaSummary: Summarize(beta), LambdaSummary: Summarize(lambda)}
		if keep {
			s.Beta, s.Lambda = beta, lambda
		}
		var err error
		if s.BetaHist, err = histogramOf(beta, -1, 1, bins); err != nil {
			return s, err
		}
		s.LambdaHist, err = histogramOf(lambda, 0, 1, bins)
		return s, err
	}
	keys, by := groupRuns(runs)
	rep := &TSParamReport{}
	for _, k := range keys {
		g := TSParamGroup{Key: k}
		for _, r := range by[k] {
			layers, err := r.layersWith(hasTS, "TS module")
			if err != nil {
				return nil, err
			}
			rt := RunTSParams{Dir: r.Dir, Seed: r.Config.Seed}
			for _, l := range layers {
				lt := LayerTSParams{Layer: l.Index, Name: l.Name}
				for m := range l.Beta {
					s, err := stage(m+1, l.Beta[m], l.Lambda[m], true)
					if err != nil {
						return nil, err
					}
					lt.Stages = append(lt.Stages, s)
				}
				rt.Layers = append(rt.Layers, lt)
			}
			g.Runs = append(g.Runs, rt)
		}
		for li, l0 := range g.Runs[0].Layers {
			lt := LayerTSParams{Layer: l0.Layer, Name: l0.Name}
			for si := range l0.Stages {
				var beta, lambda []float64
				for _, rt := range g.Runs {
					if li >= len(rt.Layers) || si >= len(rt.Layers[li].Stages) {
						return nil, fmt.Errorf("run %s: layers or stages differ from run %s of the same group", rt.Dir, g.Runs[0].Dir)
					}
					beta = append(beta, rt.Layers[li].Stages[si].Beta...)
					lambda = append(lambda, rt.Layers[li].Stages[si].Lambda...)
				}
				s, err := stage(si+1, beta, lambda, false)
				if err != nil {
					return nil, err
				}
				lt.Stages = append(lt.Stages, s)
			}
			g.Pooled = append(g.Pooled, lt)
		}
		rep.Groups = append(rep.Groups, g)
	}
	return rep, nil
}

// Summary returns one row per group, layer and stage: the pooled summaries of β and λ.
func (r *TSParamReport) Summary() Table {
	t := Table{Header: []string{"group", "layer", "stage", "seeds", "n", "beta_mean", "beta_std", "beta_q10", "beta_median", "beta_q90",
		"lambda_mean", "lambda_std", "lambda_q10", "lambda_median", "lambda_q90"}}
	for _, g := range r.Groups {
		for _, l := range g.Pooled {
			for _, s := range l.Stages {
				b, la := s.BetaSummary, s.LambdaSummary
				t.Rows = append(t.Rows, []string{g.Key.String(), l.Name, itoa(s.Stage), itoa(len(g.Runs)), itoa(b.N),
					num(b.Mean, 4), num(b.Std, 4), num(b.Q10, 4), num(b.Median, 4), num(b.Q90, 4),
					num(la.Mean, 4), num(la.Std, 4), num(la.Q10, 4), num(la.Median, 4), num(la.Q90, 4)})
			}
		}
	}
	return t
}

// Long returns one row per run, layer, stage and parameter set: β and λ.
func (r *TSParamReport) Long() Table {
	t := Table{Header: []string{"dataset", "model", "m", "width", "seed", "dir", "layer", "stage", "neuron", "beta", "lambda"}}
	for _, g := range r.Groups {
		for _, rt := range g.Runs {
			for _, l := range rt.Layers {
				for _, s := range l.Stages {
					for i := range s.Beta {
						t.Rows = append(t.Rows, []string{g.Key.Dataset, g.Key.Model, itoa(g.Key.M), itoa(g.Key.Width),
							fmt.Sprint(rt.Seed), rt.Dir, l.Name, itoa(s.Stage), itoa(i), num(s.Beta[i], 10), num(s.Lambda[i], 10)})
					}
				}
			}
		}
	}
	return t
}
