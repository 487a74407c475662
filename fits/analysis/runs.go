package analysis

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/train"
)

// FindRuns returns the run folders at or below root, sorted: every folder that holds a complete
// checkpoint or a result.json (see train.HasCheckpoint and train.ResultFile). Folders below a run folder
// are not searched. It is an error when root does not exist or holds no run.
func FindRuns(root string) ([]string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", root)
	}
	var dirs []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || !isRunDir(path) {
			return err
		}
		dirs = append(dirs, path)
		return filepath.SkipDir
	})
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no run folder (checkpoint or %s) at or below %s", train.ResultFile, root)
	}
	slices.Sort(dirs)
	return dirs, nil
}

func isRunDir(dir string) bool {
	if train.HasCheckpoint(dir) {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, train.ResultFile))
	return err == nil
}

// LoadRuns loads the runs in dirs (see Load), in order. Runs of the same dataset share one copy of it:
// opts.Dataset when set, else the dataset loaded once per name and Small setting (each run still keeps
// its own TrainLimit and TestLimit).
func LoadRuns(dirs []string, opts Options) ([]*Run, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no run folder given")
	}
	type key struct {
		name          string
		small, counts bool
		frontEnd      string
	}
	shared := map[key]*data.Dataset{}
	var runs []*Run
	for _, dir := range dirs {
		r, err := Load(dir, opts)
		if err != nil {
			return nil, err
		}
		if opts.Dataset == nil {
			k := key{r.Config.Dataset, r.Config.Small, r.Config.InputCounts, r.Config.AudioFrontEnd}
			ds, ok := shared[k]
			if !ok {
				if ds, err = data.Load(k.name, r.Config.DataOptions(opts.DataDir)); err != nil {
					return nil, fmt.Errorf("run %s: %w", dir, err)
				}
				shared[k] = ds
			}
			r.opts.Dataset = ds
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// GroupKey identifies the runs that differ only in their seed (and executor): the cells of the paper's
// tables, whose numbers are aggregated over seeds. Runs that differ in another setting (epochs, learning
// rate, dropout, protocol, readout, dataset size) fall into different groups even where the fields shown
// are equal.
type GroupKey struct {
	Dataset string `json:"dataset"`
	Model   string `json:"model"`
	M       int    `json:"m"`
	Width   int    `json:"width"`
	rest    string
}

// String returns e.g. "ssc fsts M=2 W=512".
func (k GroupKey) String() string {
	return fmt.Sprintf("%s %s M=%d W=%d", k.Dataset, k.Model, k.M, k.Width)
}

// KeyOf returns the group of a configuration.
func KeyOf(c train.Config) GroupKey {
	return GroupKey{Dataset: c.Dataset, Model: c.Model, M: c.M, Width: c.Width,
		rest: fmt.Sprintf("%t/%d/%d/%d/%d/%g/%g/%s/%s", c.Small, c.TrainLimit, c.TestLimit, c.Epochs, c.Batch, c.LR,
			c.Dropout, c.Protocol, c.Readout)}
}

// groupRuns splits runs into groups of equal GroupKey, in the order of their first run.
func groupRuns(runs []*Run) ([]GroupKey, map[GroupKey][]*Run) {
	var keys []GroupKey
	by := map[GroupKey][]*Run{}
	for _, r := range runs {
		k := KeyOf(r.Config)
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	return keys, by
}
