package fidelity

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/filesafe"
	"github.com/gomlx/compute"
)

// Folder is the folder under a runs root that holds the study: <root>/fidelity/<variant>/seed-<n>.
const Folder = "fidelity"

// MarkerFile is written into every run folder that TrainMissing creates, before training starts: the
// run's variant, seed and configuration. TrainMissing resumes only folders that carry it.
const MarkerFile = "fidelity-run.json"

// Run is one planned training run: a variant of the stand-in trained with one seed.
type Run struct {
	Variant string       `json:"variant"`
	Flags   string       `json:"flags"`
	Seed    int64        `json:"seed"`
	Dir     string       `json:"dir"`
	Config  train.Config `json:"config"`
}

// Finished reports whether the run's folder holds a result.json.
func (r Run) Finished() bool {
	_, err := os.Stat(filepath.Join(r.Dir, train.ResultFile))
	return err == nil
}

// RunDir returns the folder of a variant's run with a seed: root/fidelity/<variant>/seed-<seed>.
func RunDir(root, variant string, seed int64) string {
	return filepath.Join(root, Folder, variant, fmt.Sprintf("seed-%d", seed))
}

// Plan returns the study's runs under root: every variant of Variants() on the stand-in (StandIn) with
// every seed of Seeds, variant by variant.
func Plan(root string) ([]Run, error) { return PlanFor(root, StandIn, Variants(), Seeds) }

// PlanFor returns the runs of the variants on the configurations base returns for each seed (with the
// released semantics), under root, variant by variant.
func PlanFor(root string, base func(seed int64) (train.Config, error), variants []Variant, seeds []int64) ([]Run, error) {
	if len(variants) == 0 || len(seeds) == 0 {
		return nil, errors.New("fidelity: no variants or no seeds to plan")
	}
	var runs []Run
	for _, v := range variants {
		if v.Apply == nil {
			return nil, fmt.Errorf("fidelity: variant %q has no Apply", v.Name)
		}
		for _, s := range seeds {
			cfg, err := base(s)
			if err != nil {
				return nil, fmt.Errorf("fidelity: the configuration of seed %d: %w", s, err)
			}
			cfg = v.Apply(cfg).Resolved()
			cfg.Seed = s
			if err := cfg.Validate(); err != nil {
				return nil, fmt.Errorf("fidelity: variant %s, seed %d: %w", v.Name, s, err)
			}
			runs = append(runs, Run{Variant: v.Name, Flags: v.Flags, Seed: s, Dir: RunDir(root, v.Name, s), Config: cfg})
		}
	}
	return runs, nil
}

// Event is a progress report of TrainMissing.
type Event struct {
	// Index is the run's 1-based position in the plan, Total the plan's length.
	Index, Total int
	Run          Run
	// Skipped: the run had finished before; nothing was trained.
	Skipped bool
	// Train is a progress event of the run's training (nil when the event starts, skips or ends a run).
	Train *train.Progress
	// Result is set when the run has just finished training, Elapsed with its wall time in this call.
	Result  *train.Result
	Elapsed time.Duration
}

// TrainMissing trains every run of the plan that has no result.json, in order, with train.TrainModel on
// backend b (named backendName in the results, e.g. "xla:cpu"; "" for b.Name()), reporting to progress
// (nil: nothing). A finished run is skipped, after checking that its result was trained with the planned
// configuration (an error otherwise: delete its folder to train it again). A folder that exists without
// MarkerFile is never written to (an error), unless it is empty; a folder with the marker and a
// checkpoint but no result is resumed. Every run is tried; the errors are returned together.
func TrainMissing(plan []Run, b compute.Backend, backendName string, progress func(Event)) error {
	if b == nil {
		return errors.New("fidelity: no backend")
	}
	emit := func(e Event) {
		if progress != nil {
			progress(e)
		}
	}
	var errs []error
	for i, r := range plan {
		ev := Event{Index: i + 1, Total: len(plan), Run: r}
		if r.Finished() {
			res, err := train.ReadResult(r.Dir)
			if err == nil {
				err = sameConfig(res.Config, r.Config)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w (delete the folder to train it again)", r.Dir, err))
				continue
			}
			ev.Skipped = true
			emit(ev)
			continue
		}
		resume, err := claim(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		emit(ev)
		started := time.Now()
		res, err := train.TrainModel(r.Config, train.Options{Dir: r.Dir, Resume: resume, Backend: b, BackendName: backendName,
			Progress: func(p train.Progress) {
				e := ev
				e.Train = &p
				emit(e)
			}})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (seed %d): %w", r.Variant, r.Seed, err))
			continue
		}
		ev.Result, ev.Elapsed = res, time.Since(started)
		emit(ev)
	}
	return errors.Join(errs...)
}

// claim prepares the folder of an unfinished run: it creates it with MarkerFile, or checks that an
// existing one is this study's run of the same configuration. It reports whether the folder holds a
// checkpoint to resume.
func claim(r Run) (resume bool, err error) {
	marker := filepath.Join(r.Dir, MarkerFile)
	b, err := os.ReadFile(marker)
	switch {
	case err == nil:
		var saved Run
		if err := json.Unmarshal(b, &saved); err != nil {
			return false, fmt.Errorf("%s: %w", marker, err)
		}
		if err := sameConfig(saved.Config, r.Config); err != nil {
			return false, fmt.Errorf("%s: an unfinished run of another configuration: %w (delete the folder to train it again)", r.Dir, err)
		}
		return train.HasCheckpoint(r.Dir), nil
	case !errors.Is(err, os.ErrNotExist):
		return false, err
	}
	entries, err := os.ReadDir(r.Dir)
	switch {
	case err == nil && len(entries) > 0:
		return false, fmt.Errorf("%s exists and was not made by this study (no %s): not touched", r.Dir, MarkerFile)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return false, err
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return false, err
	}
	b, err = json.MarshalIndent(r, "", "  ")
	if err != nil {
		return false, err
	}
	return false, filesafe.WriteFile(marker, append(b, '\n'))
}

// sameConfig reports how got differs from want (both resolved), naming the JSON keys that differ; nil
// when they agree.
func sameConfig(got, want train.Config) error {
	g, err := configMap(got.Resolved())
	if err != nil {
		return err
	}
	w, err := configMap(want.Resolved())
	if err != nil {
		return err
	}
	var diff []string
	for k := range union(g, w) {
		if !reflect.DeepEqual(g[k], w[k]) {
			diff = append(diff, fmt.Sprintf("%s %v, want %v", k, g[k], w[k]))
		}
	}
	if len(diff) == 0 {
		return nil
	}
	sort.Strings(diff)
	return fmt.Errorf("configuration differs: %s", strings.Join(diff, "; "))
}

func configMap(c train.Config) (map[string]any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

func union(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// LogProgress returns a progress function for TrainMissing that writes one line to w when a run starts,
// is skipped or finishes (nothing per step or epoch).
func LogProgress(w io.Writer) func(Event) {
	return func(e Event) {
		head := fmt.Sprintf("[%*d/%d] %s, seed %d", len(strconv.Itoa(e.Total)), e.Index, e.Total, e.Run.Variant, e.Run.Seed)
		switch {
		case e.Skipped:
			fmt.Fprintf(w, "%s: finished before, skipped\n", head)
		case e.Result != nil:
			acc, err := e.Result.SelectedTestAcc()
			if err != nil {
				fmt.Fprintf(w, "%s: done in %.1f s (%v)\n", head, e.Elapsed.Seconds(), err)
				return
			}
			fmt.Fprintf(w, "%s: done in %.1f s, %d epochs, selected test accuracy %.2f %% (epoch %d)\n",
				head, e.Elapsed.Seconds(), len(e.Result.Epochs), 100*acc, e.Result.BestEpoch)
		case e.Train == nil:
			flags := e.Run.Flags
			if flags == "" {
				flags = "released defaults"
			}
			fmt.Fprintf(w, "%s: training (%s) ...\n", head, flags)
		}
	}
}
