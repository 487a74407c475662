package train

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/internal/hostinfo"
	"github.com/gomlx/gomlx/ml/model"
)

// InputError reports a run that cannot go ahead as asked: a protocol the dataset does not support, a split
// without examples. The caller has to change what it asks for (the CLI exits with status 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// checkRun rejects, before anything is compiled, a run with cfg on ds whose splits sp include one without
// examples (every mean over it would be NaN).
func checkRun(cfg Config, ds *data.Dataset, sp splits) error {
	for _, s := range []struct {
		name string
		set  *data.Set
	}{{"training", sp.train}, {"validation", sp.val}, {"test", sp.test}} {
		if s.set == nil || s.set.N > 0 {
			continue
		}
		if s.name == "validation" && cfg.Protocol == ValSplit {
			return inputErrorf("protocol %s: the %d training examples of dataset %s leave no validation examples (use more examples or --protocol=best-test)",
				cfg.Protocol, sp.train.N, ds.Name)
		}
		return inputErrorf("the %s split of dataset %s holds no examples", s.name, ds.Name)
	}
	if cfg.Chunk > 0 && (cfg.Executor == "chunked" || cfg.Executor == "scan") && sp.train.T%cfg.Chunk != 0 {
		return inputErrorf("--chunk=%d does not divide the T = %d time steps of dataset %s (use a divisor of %d, or 0 for the default)",
			cfg.Chunk, sp.train.T, ds.Name, sp.train.T)
	}
	limit, what := RunMemoryLimit()
	if est := MemoryEstimate(cfg, sp.train.T, sp.train.F, effectiveBatch(cfg, sp)); est > limit {
		return inputErrorf("--batch=%d x --width=%d x T=%d steps need about %.1f GiB, more than the %.1f GiB %s: use a smaller batch or width",
			cfg.Batch, cfg.Width, sp.train.T, float64(est)/(1<<30), float64(limit)/(1<<30), what)
	}
	return nil
}

// RunMemoryLimit is the memory a run may ask for (MemoryEstimate): the machine's memory (MemTotal of
// /proc/meminfo), or MaxRunMemory where that is unknown; what names which, for messages.
func RunMemoryLimit() (limit int64, what string) {
	if mem, ok := hostinfo.MemTotalBytes(); ok {
		return mem, "of this machine's memory"
	}
	return MaxRunMemory, "cap (MaxRunMemory; this machine's memory is unknown)"
}

// CheckConstants rejects, before the dataset is read, a configuration whose neuron constants (τm, τa, Δt,
// the f* range, the surrogate, the frequency guard) cannot run on cfg's dataset: it builds the hidden
// layers' neuron as NewNetwork does, from the dataset's time bin as data.TimeBin knows it before loading.
// Datasets whose time bin is not known before loading (and the event-frame networks of DVS Gesture) are
// checked by NewNetwork once loaded.
func CheckConstants(cfg Config) error {
	cfg = cfg.Resolved()
	dt, ok := data.TimeBin(cfg.Dataset, cfg.DataOptions(""))
	if !ok {
		return nil
	}
	n, err := NeuronConfigFor(cfg, &data.Dataset{Name: cfg.Dataset, Dt: dt})
	if err != nil {
		return &InputError{Err: err}
	}
	if cfg.FreqGuardSafety != 0 && n.Kind.HasTargetFrequency() {
		if _, _, err := n.GuardCap(cfg.FreqGuardSafety); err != nil {
			return &InputError{Err: err}
		}
	}
	return nil
}

// MaxRunMemory caps MemoryEstimate where the machine's memory is unknown (64 GiB).
const MaxRunMemory = 64 << 30

// MemoryEstimate is a rough upper estimate of the bytes a run of cfg holds for a batch of batch
// examples of T steps and F features: the inputs, the states kept for the backward pass (a few float32
// values per neuron, time step and example) and the parameters with their optimizer state.
func MemoryEstimate(cfg Config, T, F, batch int) int64 {
	const statesPerNeuron = 8
	per := float64(F) + float64(2*statesPerNeuron)*float64(cfg.Width)*float64(cfg.M+1)
	est := 4 * float64(batch) * float64(T) * per
	// The parameters with their gradients and Adam's two moments: at least the input and one recurrent
	// matrix.
	est += 4 * 4 * (float64(F)*float64(cfg.Width) + float64(cfg.Width)*float64(cfg.Width))
	if est > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(est)
}

// effectiveBatch is the batch of the runner's buffers: cfg.Batch, at most the largest split (a batch
// larger than every split would only hold padding).
func effectiveBatch(cfg Config, sp splits) int {
	n := 1
	for _, s := range []*data.Set{sp.train, sp.val, sp.test} {
		if s != nil {
			n = max(n, s.N)
		}
	}
	return min(cfg.Batch, n)
}

// resumedConfig returns the configuration saved in scope (loaded from a checkpoint); with
// opts.ExtendEpochs above its Epochs, the run is extended to that many epochs. scope's hyperparameters are
// written again, so that the next checkpoint records the new total and every semantic setting explicitly
// (also those a checkpoint from before the settings existed implies).
func resumedConfig(scope *model.Scope, opts Options) (Config, error) {
	cfg, err := configOf(scope)
	if err != nil {
		return cfg, err
	}
	if opts.ExtendEpochs > cfg.Epochs {
		cfg.Epochs = opts.ExtendEpochs
	}
	cfg.SetParams(scope)
	return cfg, nil
}
