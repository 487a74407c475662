// Package analysis reads back the runs that fits/train writes (a folder of per-epoch checkpoints and
// result.json) and extracts what a trained network has learned: the target frequencies f* of each
// hidden layer next to their log-spaced initial values, the TS coefficients β and λ, and the spike
// trains of the hidden layers on chosen examples of a dataset split.
//
// Units: frequencies in Hz, Δt in seconds. Spike trains are indexed [sample][time][neuron] and hold 0 or
// 1; input trains are indexed [sample][time][feature] and hold the dataset's values (spike counts for
// the synthetic task). Errors are returned; nothing here panics on bad input.
package analysis

import (
	"errors"
	"fmt"
	"os"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/train"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/ml/model"
)

// ErrNoCheckpoint is returned by Load for a folder that exists but holds no complete checkpoint.
var ErrNoCheckpoint = errors.New("no complete checkpoint")

// Options are where a run's data and computations come from.
type Options struct {
	// Dataset, when not nil, is used instead of loading the run's dataset by name (as train.Options).
	Dataset *data.Dataset
	// DataDir is where dataset readers look for files (data.Options.Dir).
	DataDir string
	// Backend runs the forward passes of Spikes (required for them); the caller chooses it.
	Backend compute.Backend
}

// Run is a trained (or partly trained) run read back from its folder.
type Run struct {
	// Dir is the run's folder.
	Dir string
	// Config is the run's configuration, as stored in the checkpoint's hyperparameters.
	Config train.Config
	// Epochs are the per-epoch measurements stored in the checkpoint, one per finished epoch.
	Epochs []train.Epoch
	// Result is the content of result.json, or nil when the run has not finished (no result.json yet).
	Result *train.Result
	// Context holds the hyperparameters and every variable of the latest complete checkpoint; the
	// network's variables are under the scope train.ModelScope.
	Context *model.Scope

	opts Options
	ds   *data.Dataset
}

// Load reads the run in dir: the latest complete checkpoint (configuration, training history and all
// variables) and result.json when present. It returns an error wrapping os.ErrNotExist when dir does not
// exist and one wrapping ErrNoCheckpoint when it holds no complete checkpoint. The dataset is loaded
// only when first needed (Run.Dataset).
func Load(dir string, opts Options) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("run %s is not a folder", dir)
	}
	if !train.HasCheckpoint(dir) {
		return nil, fmt.Errorf("run %s: %w", dir, ErrNoCheckpoint)
	}
	scope := model.NewStore().RootScope()
	if _, _, err := train.LoadCheckpointAll(scope, dir); err != nil { // the newest intact checkpoint
		return nil, err
	}
	cfg := train.ConfigFromContext(scope)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	history, err := train.HistoryFromContext(scope)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	r := &Run{Dir: dir, Config: cfg, Epochs: history, Context: scope, opts: opts}
	res, err := train.ReadResult(dir)
	switch {
	case err == nil:
		r.Result = res
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	return r, nil
}

// Dataset returns the run's dataset (Options.Dataset, or the configured dataset loaded by name with the
// run's Small and limit settings, as train.LoadDataset does), loading it on the first call.
func (r *Run) Dataset() (*data.Dataset, error) {
	if r.ds != nil {
		return r.ds, nil
	}
	ds, err := train.LoadDataset(r.Config, train.Options{Dataset: r.opts.Dataset, DataDir: r.opts.DataDir})
	if err != nil {
		return nil, err
	}
	r.ds = ds
	return ds, nil
}

// Split names a set of examples as the run's protocol defines it.
type Split string

const (
	// SplitTrain is the set the run trained on (under val-split: the training set less the held-out part).
	SplitTrain Split = "train"
	// SplitVal is the protocol's validation set (absent under best-test).
	SplitVal Split = "val"
	// SplitTest is the test set.
	SplitTest Split = "test"
)

// Set returns the examples of a split as the run's protocol defines them (train.ProtocolSplits).
func (r *Run) Set(split Split) (*data.Set, error) {
	ds, err := r.Dataset()
	if err != nil {
		return nil, err
	}
	tr, val, test, err := train.ProtocolSplits(r.Config, ds)
	if err != nil {
		return nil, err
	}
	s, ok := map[Split]*data.Set{SplitTrain: tr, SplitVal: val, SplitTest: test}[split]
	if !ok {
		return nil, fmt.Errorf("unknown split %q (valid: %s, %s, %s)", split, SplitTrain, SplitVal, SplitTest)
	}
	if s == nil {
		return nil, fmt.Errorf("protocol %s has no %s split", r.Config.Protocol, split)
	}
	return s, nil
}
