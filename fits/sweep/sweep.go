// Package sweep runs grids of training runs: experiments of fits/experiment (the paper's table cells) ×
// seeds, in one mode, under one root folder where every run has its own directory
// (experiment.RunDir: ROOT/ID/seed-S) holding its checkpoints, result.json and log.txt.
//
// Every run is the same command whoever executes it: `fits train --experiment=ID --mode=M --seed=S
// --out=RUNDIR [extra flags] [--resume]`, with --resume when the directory already holds a checkpoint.
// Execute runs a grid on local worker processes; EmitSlurm writes a Slurm array job with one task per run
// instead; Collect rebuilds the results index from the run directories and aggregates the tables with
// experiment.Aggregate. A run's state is read from its files alone (Inspect), so a sweep is resumable
// whoever was interrupted: finished runs are skipped, interrupted ones continue from their last
// checkpoint (losing at most the epoch in flight), and the others start.
//
// The results index is ROOT/sweep.json (Index), rewritten atomically whenever a run changes state.
package sweep

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

// Run is one training run of a grid: an experiment trained with one seed.
type Run struct {
	// Experiment is the experiment's ID (experiment.Lookup).
	Experiment string
	// Seed is the training seed.
	Seed int64
	// Dir is the run's directory, experiment.RunDir(Grid.Root, Experiment, Seed) (absolute).
	Dir string
	// Recipe is the configuration the run trains with (the mode's recipe with the seed); nil when the
	// grid's extra flags change it, which only `fits train` resolves (`fits sweep` checks finished runs
	// against them).
	Recipe *train.Config `json:",omitempty"`
}

// Grid is the list of runs of a sweep, all in one mode under one root folder.
type Grid struct {
	// Root is the sweep's folder (absolute).
	Root string
	// Mode is the experiments' schedule.
	Mode experiment.Mode
	// Runs are in the order of the experiments, then of the seeds.
	Runs []Run
	// TrainArgs are extra flags of `fits train` appended to every run's command, after the experiment's
	// own; they override its configuration (e.g. --epochs=1 for a smoke test). Aggregate counts only runs
	// that keep the recipe in all but its schedule (experiment.Departures).
	TrainArgs []string
	// Omitted are the experiments of the table left out because the mode has no recipe for them (quick
	// mode covers a few widths only).
	Omitted []string
}

// Spec describes a grid: either a table of the paper or a list of experiments, with their seeds.
type Spec struct {
	// Table is a table or figure label (experiment.Tables; loosely written labels such as "3" or "A.7" are
	// accepted, see experiment.ParseLabel); exclusive with Experiments.
	Table string
	// Experiments are experiment IDs; exclusive with Table.
	Experiments []string
	// Seeds, when not empty, replace each experiment's own seeds for the mode (Experiment.SeedsFor).
	Seeds []int64
	// Mode is the schedule of every run.
	Mode experiment.Mode
	// Root is the sweep's folder; a relative path is made absolute.
	Root string
	// TrainArgs are extra flags of `fits train` (see Grid.TrainArgs).
	TrainArgs []string
}

// reservedTrainFlags are set by the sweep for each run and cannot be passed as extra flags.
var reservedTrainFlags = []string{"experiment", "mode", "seed", "out", "resume"}

// NewGrid expands a Spec into its runs. Experiments of a table that have no recipe in the mode are left
// out (Grid.Omitted); a table left with none, unknown tables, experiments or modes, a listed experiment
// without a recipe in the mode, duplicate experiments and extra flags that the sweep sets itself are
// errors.
func NewGrid(s Spec) (*Grid, error) {
	if (s.Table == "") == (len(s.Experiments) == 0) {
		return nil, errors.New("give either a table or a list of experiments")
	}
	if s.Root == "" {
		return nil, errors.New("no root folder")
	}
	if _, err := experiment.ParseMode(string(s.Mode)); err != nil {
		return nil, err
	}
	if err := checkTrainArgs(s.TrainArgs); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(s.Root)
	if err != nil {
		return nil, err
	}
	var exps []experiment.Experiment
	if s.Table != "" {
		if exps, err = experiment.ForTable(s.Table); err != nil {
			return nil, err
		}
	} else {
		seen := map[string]bool{}
		for _, id := range s.Experiments {
			if seen[id] {
				return nil, fmt.Errorf("experiment %q is listed twice", id)
			}
			seen[id] = true
			e, err := experiment.Lookup(id)
			if err != nil {
				return nil, err
			}
			exps = append(exps, e)
		}
	}
	g := &Grid{Root: root, Mode: s.Mode, TrainArgs: append([]string(nil), s.TrainArgs...)}
	for _, e := range exps {
		if _, err := e.Recipe(s.Mode); err != nil {
			if s.Table != "" {
				g.Omitted = append(g.Omitted, e.ID)
				continue
			}
			return nil, err
		}
		seeds := s.Seeds
		if len(seeds) == 0 {
			seeds = e.SeedsFor(s.Mode)
		}
		if len(seeds) == 0 {
			return nil, fmt.Errorf("experiment %s has no seeds of its own in %s mode: give them", e.ID, s.Mode)
		}
		for _, seed := range seeds {
			r := Run{Experiment: e.ID, Seed: seed, Dir: experiment.RunDir(root, e.ID, seed)}
			if len(s.TrainArgs) == 0 {
				cfg, _ := e.Config(s.Mode, seed) // the mode's recipe exists: checked above
				r.Recipe = &cfg
			}
			g.Runs = append(g.Runs, r)
		}
	}
	if len(g.Runs) == 0 {
		return nil, fmt.Errorf("%s has no experiment with a %s-mode recipe", s.Table, s.Mode)
	}
	return g, nil
}

// checkTrainArgs accepts only flags (--name or --name=value) that the sweep does not set itself.
func checkTrainArgs(args []string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name == "" {
			return fmt.Errorf("extra training argument %q is not a flag (--name=value)", a)
		}
		if slices.Contains(reservedTrainFlags, name) {
			return fmt.Errorf("extra training flag --%s is set by the sweep for each run", name)
		}
	}
	return nil
}

// Command returns the arguments of the `fits` command that trains r (without the program name):
// train --experiment=ID --mode=M --seed=S --out=DIR, the grid's extra flags, then --resume if resume.
func (g *Grid) Command(r Run, resume bool) []string {
	args := []string{"train", "--experiment=" + r.Experiment, "--mode=" + string(g.Mode),
		"--seed=" + strconv.FormatInt(r.Seed, 10), "--out=" + r.Dir}
	args = append(args, g.TrainArgs...)
	if resume {
		args = append(args, "--resume")
	}
	return args
}

// Name is a short label of the run for displays: "ID seed S".
func (r Run) Name() string { return fmt.Sprintf("%s seed %d", r.Experiment, r.Seed) }

// Tables returns the table labels the grid's experiments belong to, in first-seen order.
func (g *Grid) Tables() ([]string, error) {
	var out []string
	for _, r := range g.Runs {
		e, err := experiment.Lookup(r.Experiment)
		if err != nil {
			return nil, err
		}
		for _, t := range e.Tables {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// ParseSeeds parses a seed list: comma-separated seeds and inclusive ranges, e.g. "1-5" or "1,3,7-9".
// Seeds are non-negative; a seed listed twice is an error.
func ParseSeeds(s string) ([]int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty seed list")
	}
	var out []int64
	seen := map[int64]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not a seed or a range of seeds (e.g. 1-5)", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range of seeds (e.g. 1-5)", part)
			}
			if b-a >= 10000 {
				return nil, fmt.Errorf("range %q has more than 10000 seeds", part)
			}
		}
		for v := a; v <= b; v++ {
			if seen[v] {
				return nil, fmt.Errorf("seed %d is listed twice", v)
			}
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}
