package experiment

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// Experiment is one trained configuration of the paper, with every table and figure it feeds.
type Experiment struct {
	// ID is stable and path-safe, with '/' separators, e.g. "ssc/fsts-m2/w512" (see the package doc).
	ID string `json:"id"`
	// Tables are the paper labels this cell feeds, in paper order (paper.Labels), e.g. "Table 3",
	// "Table A.7", "Figure 2"; or Fidelity, for the cells of that study.
	Tables []string `json:"tables"`
	// Title describes the cell in words, e.g. "FS + TS (M = 2), W = 512, SSC".
	Title string `json:"title"`
	// Home is the table or figure whose layout Group, Row and Column refer to.
	Home string `json:"home"`
	// Group is the dataset block of Home in the tables that have blocks (Table 1: "SHD", "SHD*", "SSC"),
	// "" otherwise.
	Group string `json:"group,omitempty"`
	// Row is the row label (the model) in Home, as the paper prints it.
	Row string `json:"row"`
	// Column is the column label in Home: the width ("512") in the ablation tables, "" in tables with one
	// result column.
	Column string `json:"column"`
	// Full is the paper's recipe, with seed 0 (the sweep sets the seed).
	Full train.Config `json:"full"`
	// FullNote states what the paper leaves open in this recipe and what was chosen ("" when nothing).
	FullNote string `json:"full_note,omitempty"`
	// Quick is the quick-mode stand-in trainable on this machine, with seed 0; Quick.Dataset is "" when
	// this cell has none (quick mode covers a few widths only, see quick.go).
	Quick train.Config `json:"quick"`
	// QuickNote says what the quick stand-in is, honestly (the data are not the paper's).
	QuickNote string `json:"quick_note,omitempty"`
	// QuickFixture, when set, is the `fits data synth --format=` value whose files the quick dataset is
	// read from: run it into a folder and train with --data-dir pointing there.
	QuickFixture string `json:"quick_fixture,omitempty"`
	// Seeds are the paper's seeds: 1..5, or 1..20 for the learned-organisation runs of Figure 2.
	Seeds []int64 `json:"seeds"`
	// QuickSeeds are the seeds of the quick reproduction (nil when there is no quick stand-in).
	QuickSeeds []int64 `json:"quick_seeds,omitempty"`
}

// HasQuick reports whether the experiment has a quick stand-in.
func (e Experiment) HasQuick() bool { return e.Quick.Dataset != "" }

// Recipe returns the recipe of a mode with seed 0.
func (e Experiment) Recipe(mode Mode) (train.Config, error) {
	switch mode {
	case Full:
		return e.Full, nil
	case Quick:
		if !e.HasQuick() {
			return train.Config{}, fmt.Errorf("experiment %s has no quick stand-in (quick mode covers %s)", e.ID, quickCoverage(e.ID))
		}
		return e.Quick, nil
	}
	_, err := ParseMode(string(mode))
	return train.Config{}, err
}

// Config returns the recipe of a mode (Full or Quick) with the seed set.
func (e Experiment) Config(mode Mode, seed int64) (train.Config, error) {
	cfg, err := e.Recipe(mode)
	if err != nil {
		return cfg, err
	}
	cfg.Seed = seed
	return cfg, nil
}

// SeedsFor returns the seeds a mode runs: Seeds in full mode, QuickSeeds in quick mode.
func (e Experiment) SeedsFor(mode Mode) []int64 {
	if mode == Quick {
		return slices.Clone(e.QuickSeeds)
	}
	return slices.Clone(e.Seeds)
}

// Feeds reports whether the experiment feeds the table or figure label (as paper.Labels spells it).
func (e Experiment) Feeds(label string) bool { return slices.Contains(e.Tables, label) }

// clone returns a copy sharing no slice with e.
func (e Experiment) clone() Experiment {
	e.Tables = slices.Clone(e.Tables)
	e.Seeds = slices.Clone(e.Seeds)
	e.QuickSeeds = slices.Clone(e.QuickSeeds)
	return e
}

// All returns every experiment, grouped by home table in paper order, then by row and width as the paper
// lays them out. The slice and its experiments are copies: callers may modify them.
func All() []Experiment {
	cat := catalog()
	out := make([]Experiment, len(cat.list))
	for i, e := range cat.list {
		out[i] = e.clone()
	}
	return out
}

// Lookup returns the experiment with the given ID.
func Lookup(id string) (Experiment, error) {
	cat := catalog()
	if i, ok := cat.byID[id]; ok {
		return cat.list[i].clone(), nil
	}
	return Experiment{}, fmt.Errorf("unknown experiment %q (%s)", id, suggest(id))
}

// suggest names valid IDs for an unknown one: those of the same grid when its first part names one,
// else one example per grid, and how to list all.
func suggest(id string) string {
	cat := catalog()
	prefix, _, _ := strings.Cut(id, "/")
	var same []string
	for _, e := range cat.list {
		if p, _, _ := strings.Cut(e.ID, "/"); p == prefix {
			same = append(same, e.ID)
		}
	}
	if len(same) > 0 && len(same) <= 40 {
		return "valid in " + prefix + ": " + strings.Join(same, ", ")
	}
	var examples []string
	seen := map[string]bool{}
	for _, e := range cat.list {
		p, _, _ := strings.Cut(e.ID, "/")
		if !seen[p] {
			seen[p] = true
			examples = append(examples, e.ID)
		}
	}
	return fmt.Sprintf("valid ids look like %s; `fits experiments` lists all %d", strings.Join(examples, ", "), len(cat.list))
}

// Tables returns the labels that experiments feed, in paper order: tables (Table 1 … Table A.10), then
// figures (Figure 2, Figure 3, Figure A.2), then the study Fidelity. Tables A.1–A.3 and Figures 1 and A.1
// have no training runs (recipes, the kernel benchmark and closed forms).
func Tables() []string {
	cat := catalog()
	return slices.DeleteFunc(labels(), func(l string) bool { return len(cat.byTable[l]) == 0 })
}

// ForTable returns the experiments that feed a table or figure, in All's order. The label is parsed by
// ParseLabel, so "Table 3", "table3", "3", "A.7", "tableA7" and "fig2" are all accepted. Labels of the
// paper that no training run feeds, and unknown labels, are errors naming the valid labels.
func ForTable(label string) ([]Experiment, error) {
	l, err := ParseLabel(label)
	if err != nil {
		return nil, fmt.Errorf("%w; tables with experiments: %s", err, strings.Join(Tables(), ", "))
	}
	cat := catalog()
	idx := cat.byTable[l]
	if len(idx) == 0 {
		return nil, fmt.Errorf("%s has no training experiments (%s); tables with experiments: %s", l, noRuns[l], strings.Join(Tables(), ", "))
	}
	out := make([]Experiment, len(idx))
	for i, j := range idx {
		out[i] = cat.list[j].clone()
	}
	return out, nil
}

// noRuns says where the paper's labels without training runs come from.
var noRuns = map[string]string{
	paper.TableA1:  "it lists the neuron constants, see fits/paper.NeuronConstantsTable",
	paper.TableA2:  "it lists the learning rates and dropouts every experiment's Full recipe uses",
	paper.TableA3:  "it times the kernel: `fits bench`",
	paper.Figure1:  "it is a diagram of the TS module",
	paper.FigureA1: "closed forms: `fits figures`, notebook 02",
}

// RunDir returns the folder of one run: root/<id>/seed-<seed>, with id's '/' turned into the system's
// separator.
func RunDir(root, id string, seed int64) string {
	return filepath.Join(root, filepath.FromSlash(id), fmt.Sprintf("seed-%d", seed))
}
