package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/filesafe"
	"github.com/fits-snn/fits/internal/jsonraw"
)

// IndexFile is the name of the results index in a sweep's root folder.
const IndexFile = "sweep.json"

// Index is the content of ROOT/sweep.json: one record per run of the grid.
type Index struct {
	// Root is the sweep's folder (absolute) when the index was written; the paths of the records are
	// relative to it.
	Root string `json:"root"`
	// Mode is the experiments' schedule.
	Mode experiment.Mode `json:"mode"`
	// TrainArgs are the extra flags of `fits train` given to every run.
	TrainArgs []string `json:"train_args,omitempty"`
	// Updated is when the index was written.
	Updated time.Time `json:"updated"`
	// Counts is the number of runs per status.
	Counts map[Status]int `json:"counts"`
	// Runs are the grid's runs in order.
	Runs []Record `json:"runs"`
}

// Record is one run in the index.
type Record struct {
	Experiment string `json:"experiment"`
	Seed       int64  `json:"seed"`
	Status     Status `json:"status"`
	// Accuracy is the test accuracy (a fraction) that the run's protocol reports (see Accuracy); null
	// until the run has finished.
	Accuracy *float64 `json:"accuracy"`
	// BestEpoch is the epoch the protocol selects (1-based; 0 until finished).
	BestEpoch int `json:"best_epoch"`
	// EpochsDone and Epochs are the finished and planned epochs, from result.json or the run's log (0
	// when unknown).
	EpochsDone int `json:"epochs_done"`
	Epochs     int `json:"epochs"`
	// WallSeconds is the run's training wall time in seconds, summed over its segments (finished runs).
	WallSeconds float64 `json:"wall_seconds"`
	// Dir, Result and Log are the run's directory, result.json and log, relative to the root.
	Dir    string `json:"dir"`
	Result string `json:"result"`
	Log    string `json:"log"`
	// Skipped is true when the run had finished before this sweep started.
	Skipped bool `json:"skipped,omitempty"`
	// Error says why a failed run failed.
	Error string `json:"error,omitempty"`
}

// newRecord returns the record of r in state st.
func newRecord(root string, r Run, st State) Record {
	rel := func(p string) string {
		if q, err := filepath.Rel(root, p); err == nil {
			return filepath.ToSlash(q)
		}
		return p
	}
	rec := Record{Experiment: r.Experiment, Seed: r.Seed, Dir: rel(r.Dir),
		Result: rel(filepath.Join(r.Dir, train.ResultFile)), Log: rel(filepath.Join(r.Dir, LogFile))}
	rec.set(r, st)
	return rec
}

// set updates the record to state st, reading the run's result or log for the numbers.
func (rec *Record) set(r Run, st State) {
	rec.Status, rec.Error = st.Status, ""
	if st.Err != nil {
		rec.Error = st.Err.Error()
	}
	rec.Accuracy, rec.BestEpoch, rec.WallSeconds = nil, 0, 0
	if res := st.Result; res != nil {
		if a, ok := Accuracy(res); ok {
			rec.Accuracy = &a
		}
		rec.BestEpoch, rec.WallSeconds = res.BestEpoch, res.WallSeconds
		rec.EpochsDone, rec.Epochs = len(res.Epochs), res.Config.Epochs
		return
	}
	if done, total, ok := LogEpochs(r.Dir); ok {
		rec.EpochsDone, rec.Epochs = done, total
	}
}

// newIndex returns the index of g with the given records.
func newIndex(g *Grid, recs []Record) *Index {
	idx := &Index{Root: g.Root, Mode: g.Mode, TrainArgs: g.TrainArgs, Updated: time.Now().UTC(),
		Counts: map[Status]int{}, Runs: recs}
	for _, r := range recs {
		idx.Counts[r.Status]++
	}
	return idx
}

// Write writes the index to ROOT/sweep.json atomically. A root or run folder whose name is not UTF-8
// keeps its exact bytes in the member beside it (package jsonraw: "root_base64", "dir_base64", ...).
func (idx *Index) Write() error {
	b, err := jsonraw.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	return filesafe.WriteFile(filepath.Join(idx.Root, IndexFile), append(b, '\n'))
}

// ReadIndex reads ROOT/sweep.json.
func ReadIndex(root string) (*Index, error) {
	b, err := os.ReadFile(filepath.Join(root, IndexFile))
	if err != nil {
		return nil, err
	}
	var idx Index
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, IndexFile), err)
	}
	return &idx, nil
}

// ErrOtherMode is returned when a root's index records a sweep in another mode: the run directories of
// both modes would be the same, so each mode needs its own root.
var ErrOtherMode = errors.New("the folder holds a sweep in another mode")

// checkMode returns ErrOtherMode when g.Root's index records a mode other than g.Mode.
func checkMode(g *Grid) error {
	idx, err := ReadIndex(g.Root)
	if err != nil {
		return nil // no index yet, or one this sweep rewrites
	}
	if idx.Mode != "" && idx.Mode != g.Mode {
		return fmt.Errorf("%w: %s holds %s-mode runs, not %s (use another folder)", ErrOtherMode, g.Root, idx.Mode, g.Mode)
	}
	return nil
}

// Failed returns the number of failed runs.
func (idx *Index) Failed() int { return idx.Counts[Failed] }
