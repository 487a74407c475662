// Package experiment: a temporary stand-in with only the API that fits/sweep and `fits sweep` use, until
// the real catalogue of the paper's experiments replaces this file. It holds one table of two tiny
// experiments on the embedded synthetic task.
package experiment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fits-snn/fits/fits/train"
)

// Mode chooses an experiment's schedule: Full is the paper's, Quick a short one that runs here.
type Mode string

const (
	Quick Mode = "quick"
	Full  Mode = "full"
)

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Quick, Full:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown mode %q (valid: quick, full)", s)
}

// Experiment is one table cell.
type Experiment struct {
	ID                 string
	Tables             []string
	Title, Row, Column string
	Full, Quick        train.Config
	QuickNote          string
	Seeds              []int64
}

func stubConfig(model string, width int) train.Config {
	c := train.DefaultConfig()
	c.Small, c.Model, c.Width, c.Batch, c.Epochs, c.LR = true, model, width, 32, 2, 0.01
	return c
}

var stubs = []Experiment{
	{ID: "stub/lif-w4", Tables: []string{"stub"}, Title: "stand-in", Row: "LIF", Column: "4",
		Full: stubConfig("lif", 4), Quick: stubConfig("lif", 4), Seeds: []int64{1, 2}},
	{ID: "stub/fs-w4", Tables: []string{"stub"}, Title: "stand-in", Row: "FS", Column: "4",
		Full: stubConfig("fs", 4), Quick: stubConfig("fs", 4), Seeds: []int64{1, 2}},
}

// All returns every experiment.
func All() []Experiment { return append([]Experiment(nil), stubs...) }

// Lookup returns the experiment with the given ID.
func Lookup(id string) (Experiment, error) {
	for _, e := range stubs {
		if e.ID == id {
			return e, nil
		}
	}
	return Experiment{}, fmt.Errorf("unknown experiment %q", id)
}

// ForTable returns the experiments of a table.
func ForTable(label string) ([]Experiment, error) {
	var out []Experiment
	for _, e := range stubs {
		for _, t := range e.Tables {
			if t == label {
				out = append(out, e)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("unknown table %q (valid: %s)", label, strings.Join(Tables(), ", "))
	}
	return out, nil
}

// Tables lists the table labels.
func Tables() []string { return []string{"stub"} }

// Config returns the training configuration of the experiment for a mode and seed.
func (e Experiment) Config(mode Mode, seed int64) (train.Config, error) {
	var c train.Config
	switch mode {
	case Quick:
		c = e.Quick
	case Full:
		c = e.Full
	default:
		return c, fmt.Errorf("unknown mode %q", mode)
	}
	c.Seed = seed
	return c, c.Validate()
}

// RunDir is the run directory of an experiment's seed under root.
func RunDir(root, id string, seed int64) string {
	return filepath.Join(root, filepath.FromSlash(id), fmt.Sprintf("seed-%d", seed))
}

// TableResult is an aggregated table.
type TableResult struct {
	Label string
	Rows  []row
}

type row struct {
	ID         string
	N          int
	Mean, Std  float64
	Accuracies []float64
}

// Aggregate reads the finished runs of a table under root.
func Aggregate(root string, label string, mode Mode) (*TableResult, error) {
	exps, err := ForTable(label)
	if err != nil {
		return nil, err
	}
	t := &TableResult{Label: label}
	for _, e := range exps {
		r := row{ID: e.ID}
		for _, s := range e.Seeds {
			res, err := train.ReadResult(RunDir(root, e.ID, s))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			r.Accuracies = append(r.Accuracies, res.BestTestAcc)
		}
		sort.Float64s(r.Accuracies)
		r.N = len(r.Accuracies)
		for _, a := range r.Accuracies {
			r.Mean += a / float64(r.N)
		}
		for _, a := range r.Accuracies {
			r.Std += (a - r.Mean) * (a - r.Mean) / float64(max(r.N-1, 1))
		}
		r.Std = math.Sqrt(r.Std)
		t.Rows = append(t.Rows, r)
	}
	return t, nil
}

// Markdown renders the table.
func (t *TableResult) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| experiment | n | accuracy |\n| --- | --- | --- |\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %s | %d | %.4f ± %.4f |\n", r.ID, r.N, r.Mean, r.Std)
	}
	return b.String()
}

// CSV renders the table.
func (t *TableResult) CSV() string {
	var b strings.Builder
	b.WriteString("experiment,n,mean,std\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "%s,%d,%g,%g\n", r.ID, r.N, r.Mean, r.Std)
	}
	return b.String()
}
