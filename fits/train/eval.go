package train

import (
	"fmt"
	"time"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/internal/enum"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// EvalResult is what Evaluate measures on a checkpoint.
type EvalResult struct {
	Dataset        string `json:"dataset"`
	Model          string `json:"model"`
	M              int    `json:"m"`
	Width          int    `json:"width"`
	Seed           int64  `json:"seed"`
	ParameterCount int    `json:"parameter_count"`
	// Checkpoint is the directory evaluated, CheckpointName the checkpoint in it that was loaded (the
	// newest intact one) and Epoch the number of epochs trained when it was saved.
	Checkpoint     string `json:"checkpoint"`
	CheckpointName string `json:"checkpoint_name"`
	Epoch          int    `json:"epoch"`
	// Skipped are the newer checkpoints that were not intact, newest first (empty when the newest was).
	Skipped []SkippedCheckpoint `json:"skipped_checkpoints"`
	// ValAcc and ValLoss are measured on the protocol's validation split (nil under best-test).
	ValAcc  *float64 `json:"val_acc"`
	ValLoss *float64 `json:"val_loss"`
	// TestAcc and TestLoss are measured on the test split (mean cross-entropy).
	TestAcc  float64 `json:"test_acc"`
	TestLoss float64 `json:"test_loss"`
	// FiringRates are the hidden layers' mean spikes per neuron per time bin on the test split.
	FiringRates []float64 `json:"firing_rates"`
	Protocol    Protocol  `json:"protocol"`
	Backend     string    `json:"backend"`
	// Engine is the engine of package fits/step that evaluated (Options.Engine, or the checkpoint's
	// Config.Executor, or step.Default of the backend), e.g. "fused".
	Engine      string  `json:"engine"`
	WallSeconds float64 `json:"wall_seconds"`

	// ValFiringRates are FiringRates measured on the validation split (nil under best-test).
	ValFiringRates []float64 `json:"val_firing_rates,omitempty"`
}

// Evaluate loads the latest checkpoint in dir (written by TrainModel) and measures the network on the
// protocol's validation split and on the test split, without dropout. The configuration comes from the
// checkpoint, the engine from opts.Engine when it is set; opts.Dir and opts.Resume are ignored. The checkpoint is the newest intact one of dir (see
// LoadCheckpoint): newer ones that are corrupt are skipped and listed in the result, and a directory
// without any usable checkpoint is a *CheckpointError.
func Evaluate(dir string, opts Options) (*EvalResult, error) { return EvaluateWith(dir, opts, nil) }

// EvaluateWith is Evaluate of a modified network: it loads the latest checkpoint in dir, calls modify on
// the loaded store (the root scope; the network's variables are under ModelScope) before the
// network is built, and measures the modified network as Evaluate does. The checkpoint on disk is not
// changed. Variables are loaded lazily: modify reaches one with scope.Store().GetVariable(model.JoinPath(scope,
// name)), which reads it from the checkpoint, and replaces its value with Variable.SetValue; the network
// then runs with that value. A nil modify makes EvaluateWith equal to Evaluate.
//
// It serves inference-time perturbations of trained parameters, e.g. the target-frequency reset and
// shuffle of the paper's Table A.8 (package fits/analysis).
func EvaluateWith(dir string, opts Options, modify func(scope *mlmodel.Scope) error) (*EvalResult, error) {
	started := time.Now()
	scope, err := loadContext(DefaultConfig().Seed) // the checkpoint brings the configuration
	if err != nil {
		return nil, err
	}
	cfg, ck, skipped, err := loadConfig(scope, dir)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("checkpoint %s in %s: %w", ck.Name, dir, err)
	}
	if opts.Engine != "" {
		if _, err := enum.Parse("engine", opts.Engine, Executors()...); err != nil {
			return nil, &InputError{Err: fmt.Errorf("--engine: %w", err)}
		}
		cfg.Executor = opts.Engine
	}
	if modify != nil {
		if err := modify(scope); err != nil {
			return nil, fmt.Errorf("modifying checkpoint %s: %w", dir, err)
		}
	}
	ds, sp, err := loadRunData(cfg, opts)
	if err != nil {
		return nil, err
	}
	net, err := NewNetwork(cfg, ds)
	if err != nil {
		return nil, &InputError{Err: fmt.Errorf("checkpoint %s in %s: %w", ck.Name, dir, err)}
	}
	b, backendName, err := backendOf(opts)
	if err != nil {
		return nil, err
	}
	r, err := newRunner(cfg, sp, net, scope, b)
	if err != nil {
		if bad := diagnoseModelVariables(b, net, ck.Name, ck.layout); bad != nil {
			return nil, bad
		}
		return nil, err
	}
	defer r.close()
	if err := checkModelNames(scope.Store(), ck.Name, ck.layout); err != nil {
		return nil, err
	}
	res := &EvalResult{
		Dataset: cfg.Dataset, Model: cfg.Model, M: cfg.M, Width: cfg.Width, Seed: cfg.Seed,
		Checkpoint: dir, CheckpointName: ck.Name, Epoch: ck.Epoch, Skipped: skipped,
		Protocol: cfg.Protocol, Backend: backendName, Engine: r.engine.Name(),
	}
	if sp.val != nil {
		loss, acc, rates, err := r.evaluate(sp.val)
		if err != nil {
			return nil, err
		}
		res.ValAcc, res.ValLoss, res.ValFiringRates = &acc, &loss, rates
	}
	if res.TestLoss, res.TestAcc, res.FiringRates, err = r.evaluate(sp.test); err != nil {
		return nil, err
	}
	res.ParameterCount = model.CountParams(scope.At("%s", modelScope))
	res.WallSeconds = time.Since(started).Seconds()
	return res, nil
}
