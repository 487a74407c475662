package main

import (
	"io"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/sweep"
	"github.com/fits-snn/fits/fits/train"
)

// trainFlagScope says to which datasets or neuron kinds flags of `fits train` apply; a flag given on
// the command line where it does not apply would do nothing, and is refused by name.
type trainFlagScope struct {
	flags []string
	// datasets lists the datasets the flag applies to (nil: every one).
	datasets []string
	// kind reports whether the flag applies to a neuron kind (nil: every one); kinds describes them.
	kind  func(neuron.Kind) bool
	kinds string
}

// trainFlagScopes are the flags of `fits train` that apply only to some datasets or neuron kinds.
var trainFlagScopes = []trainFlagScope{
	{flags: []string{"input-counts"}, datasets: []string{"shd", "shd-val", "ssc", "espeak-digits"}},
	{flags: []string{"frontend"}, datasets: []string{"gsc", "espeak-digits-mel"}},
	{flags: []string{"ts-mix"}, kind: neuron.Kind.HasTS, kinds: "kinds with a TS cascade (fsts)"},
	{flags: []string{"target-coordinate", "f-init", "f-min", "f-max", "freq-guard-safety", "forward-clip", "target-lr-scale"},
		kind: neuron.Kind.HasTargetFrequency, kinds: "kinds with a target frequency"},
	{flags: []string{"tau-a"}, kind: neuron.Kind.HasAdaptation, kinds: "kinds with an adaptation current"},
	{flags: []string{"adaptlif"}, kind: func(k neuron.Kind) bool { return k == neuron.AdaptLIF }, kinds: "adaptlif"},
}

// checkApplicable refuses a flag given on the command line (set) that does not apply to cfg's dataset or
// neuron kind.
func checkApplicable(cfg train.Config, set map[string]bool) error {
	for _, s := range trainFlagScopes {
		i := slices.IndexFunc(s.flags, func(f string) bool { return set[f] })
		switch {
		case i < 0:
		case s.datasets != nil && !slices.Contains(s.datasets, cfg.Dataset):
			return badInput("--%s applies to %s, not --dataset=%s", s.flags[i], strings.Join(s.datasets, ", "), cfg.Dataset)
		case s.kind != nil && !s.kind(cfg.Kind()):
			return badInput("--%s applies to %s, not --model=%s", s.flags[i], s.kinds, cfg.Model)
		}
	}
	return nil
}

// experimentCellFlags are the fields that name a cell of the paper's tables: a run resumed with
// --experiment must be of that cell.
var experimentCellFlags = []string{"dataset", "model", "m", "width", "protocol"}

// checkResumeExperiment refuses `--resume --experiment=ID` when the run saved in out is of another cell
// than ID's recipe (asked: the configuration the flags and the recipe give) in a field no flag set.
func (f *trainFlags) checkResumeExperiment(out string, asked, saved train.Config) error {
	if f.experiment == "" {
		return nil
	}
	if diffs := configDiffs(asked, saved, func(name string) bool {
		return !f.set[name] && slices.Contains(experimentCellFlags, name)
	}, "%s %s (saved: %s)"); len(diffs) > 0 {
		return badInput("--resume: --experiment=%s names another cell than the run saved in %s: %s", f.experiment, out,
			strings.Join(diffs, ", "))
	}
	return nil
}

// checkSweepRuns parses the training command of every run of g as `fits train` will, so that a bad or
// inapplicable extra training flag is refused before anything is emitted, skipped or trained; and refuses
// a finished run of g whose configuration differs from what the extra flags ask (the sweep would
// otherwise count it as finished and train nothing).
func checkSweepRuns(g *sweep.Grid) error {
	for _, r := range g.Runs {
		f, _, err := parseTrainFlags(g.Command(r, false)[1:], io.Discard)
		if err != nil {
			return badInput("extra training flags of %s: %v", r.Name(), err)
		}
		cfg, err := f.config()
		if err == nil {
			err = checkApplicable(cfg, f.set)
		}
		if err != nil {
			return badInput("extra training flags of %s: %v", r.Name(), err)
		}
		st := sweep.Inspect(r)
		if st.Status != sweep.Finished {
			continue
		}
		if diffs := configDiffs(cfg, st.Result.Config, func(name string) bool { return f.set[name] }, "--%s=%s (saved: %s)"); len(diffs) > 0 {
			return badInput("%s finished with another configuration than the extra training flags ask: %s (give another --out to train runs of the new configuration)",
				r.Dir, strings.Join(diffs, ", "))
		}
	}
	return nil
}
