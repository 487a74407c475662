package train

import (
	"fmt"

	"github.com/fits-snn/fits/data"
	"github.com/gomlx/gomlx/pkg/ml/context"
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
	return nil
}

// resumedConfig returns the configuration saved in ctx (loaded from a checkpoint); with
// opts.ExtendEpochs above its Epochs, the run is extended to that many epochs. ctx's hyperparameters are
// written again, so that the next checkpoint records the new total and every semantic setting explicitly
// (also those a checkpoint from before the settings existed implies).
func resumedConfig(ctx *context.Context, opts Options) (Config, error) {
	cfg, err := configOf(ctx)
	if err != nil {
		return cfg, err
	}
	if opts.ExtendEpochs > cfg.Epochs {
		cfg.Epochs = opts.ExtendEpochs
	}
	cfg.SetParams(ctx)
	return cfg, nil
}
