package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/train"
)

// RunState is what a run folder holds against the run it should hold: the one check of "finished, and
// with this configuration" that sweeps, notebooks and tables share.
type RunState struct {
	// Result is the folder's result.json; nil when there is none or it cannot be read (Err).
	Result *train.Result
	Err    error
	// Finished: Result records every epoch its configuration asks for (fits/train writes result.json only
	// after the last epoch).
	Finished bool
	// Stale says how Result departs from the run it should be (Departures; another seed first); "" when it
	// does not.
	Stale string
}

// Current reports whether the folder holds a finished run of the seed and recipe it was read against.
func (s RunState) Current() bool { return s.Finished && s.Stale == "" }

// ReadRun reads the run folder dir against a seed and a recipe (nil when only the seed is known, as for a
// sweep whose extra training flags change the recipe). A folder without result.json has the zero state.
func ReadRun(dir string, seed int64, recipe *train.Config) RunState {
	res, err := train.ReadResult(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return RunState{}
	}
	if err != nil {
		return RunState{Err: err}
	}
	s := RunState{Result: res, Finished: res.Config.Epochs > 0 && len(res.Epochs) >= res.Config.Epochs}
	switch {
	case res.Seed != seed:
		s.Stale = fmt.Sprintf("seed %d, not %d", res.Seed, seed)
	case recipe != nil:
		s.Stale = Departures(res.Config, *recipe)
	}
	return s
}

// schedule are the keys of train.Config that a run may change and stay a run of its cell: the seed (checked
// on its own), the schedule, the data limits and the engine, which the extra flags of a smoke test set
// (`fits sweep -- --epochs=1`).
var schedule = []string{"seed", "epochs", "batch", "lr", "dropout", "small", "train_limit", "test_limit",
	"executor", "chunk", "target_lr_scale"}

// Departures says how a run's configuration got departs from the recipe want in what makes it a run of
// the recipe's cell: the dataset, the neuron model, M, the width, the protocol, the readout (resolved for
// the dataset), the neuron constants and every training-semantics setting, as "key got, the recipe's is
// want" joined by "; " in key order; "" when none does. The keys of schedule are not compared.
func Departures(got, want train.Config) string {
	g, err := cellKeys(got)
	w, err2 := cellKeys(want)
	if err = errors.Join(err, err2); err != nil {
		return "not comparable: " + err.Error()
	}
	var diffs []string
	for k := range g {
		if _, ok := w[k]; !ok {
			w[k] = nil
		}
	}
	for k, v := range w {
		if !reflect.DeepEqual(g[k], v) {
			diffs = append(diffs, fmt.Sprintf("%s %v, the recipe's is %v", k, orNone(g[k]), orNone(v)))
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "; ")
}

// cellKeys returns c (resolved) as a JSON object without the keys of schedule.
func cellKeys(c train.Config) (map[string]any, error) {
	b, err := json.Marshal(c.Resolved())
	m := map[string]any{}
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	for _, k := range schedule {
		delete(m, k)
	}
	return m, err
}

// orNone writes a key that an omitempty field left out as "none".
func orNone(v any) any {
	if v == nil {
		return "none"
	}
	return v
}
