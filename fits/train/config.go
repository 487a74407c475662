// Package train trains and evaluates the networks of fits/model on the datasets of package data, with the
// paper's recipe (Section 4, "Training details"): cross-entropy loss, Adam, a cosine-annealed learning rate
// over the whole run, batch size 128, 100 epochs, no weight decay, normalization or augmentation.
//
// A run is described by a Config, which is stored as GoMLX context hyperparameters (the house style of
// GoMLX's examples) and travels inside every checkpoint. TrainModel writes a checkpoint after every epoch
// into the run's directory (pkg/ml/context/checkpoints; resuming continues bit-for-bit where the last
// checkpoint left off), reports progress through a callback (TerminalProgress draws a progress bar), and
// writes result.json with the per-epoch curves and the protocol's summary numbers. Evaluate reloads a
// checkpoint and measures it again.
//
// Model selection protocols (Section 4.1): best-test reports the best test accuracy over training;
// val-split holds out 20% of the training set (stratified, fixed seed) as validation and reports the test
// accuracy at the epoch of best validation accuracy; official-val does the same with the dataset's own
// validation split; final-epoch reports the test accuracy after the last epoch (DVS Gesture, Appendix
// C.4, Table A.10).
//
// Accuracies are fractions in [0, 1]. Firing rates are mean spikes per neuron per time bin (a fraction;
// divide by Δt for Hz).
package train

import (
	"fmt"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Protocol is a model-selection protocol.
type Protocol string

const (
	// BestTest reports the best test accuracy over the epochs (the common SHD protocol).
	BestTest Protocol = "best-test"
	// ValSplit holds out ValFraction of the training set as validation and reports the test accuracy at the
	// epoch of best validation accuracy (the paper's SHD* protocol).
	ValSplit Protocol = "val-split"
	// OfficialVal uses the dataset's validation split and reports the test accuracy at the epoch of best
	// validation accuracy (SSC, GSC).
	OfficialVal Protocol = "official-val"
	// FinalEpoch reports the test accuracy after the last epoch, with no model selection (the paper's DVS
	// Gesture protocol, Table A.10: official train/test split, fixed schedule). It trains and tests on the
	// same splits as BestTest.
	FinalEpoch Protocol = "final-epoch"
)

// ValFraction is the fraction of the training set that ValSplit holds out.
const ValFraction = 0.2

// ValSplitSeed fixes the examples that ValSplit holds out, the same for every run and seed.
const ValSplitSeed = 20240

// Protocols lists the valid protocols.
func Protocols() []Protocol { return []Protocol{BestTest, ValSplit, OfficialVal, FinalEpoch} }

// ParseProtocol returns the protocol named s.
func ParseProtocol(s string) (Protocol, error) {
	for _, p := range Protocols() {
		if s == string(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown protocol %q (valid: %s)", s, strings.Join(protocolNames(), ", "))
}

func protocolNames() []string {
	var out []string
	for _, p := range Protocols() {
		out = append(out, string(p))
	}
	return out
}

// Config describes one training run.
type Config struct {
	// Dataset is the registered dataset name (package data), e.g. "synthetic".
	Dataset string `json:"dataset"`
	// Small asks the dataset for its reduced version (tests and smoke runs).
	Small bool `json:"small,omitempty"`
	// TrainLimit, when positive, keeps only the first TrainLimit training examples (before any
	// validation hold-out), and TestLimit the first TestLimit test examples: time-bounded runs on large
	// datasets, e.g. pixel-wise sMNIST on a CPU. Zero means all.
	TrainLimit int `json:"train_limit,omitempty"`
	TestLimit  int `json:"test_limit,omitempty"`
	// Model is the neuron kind of the hidden layers, a name of neuron.Kinds(): lif, adaptlif, fs-frozen,
	// fs, fsts, ...
	Model string `json:"model"`
	// M is the TS cascade order (fsts only; 0 otherwise).
	M int `json:"m"`
	// Width is the number of neurons of each hidden layer (the fully connected block for event data).
	Width int `json:"width"`
	// Epochs is the number of passes over the training set.
	Epochs int `json:"epochs"`
	// Batch is the number of examples per step.
	Batch int `json:"batch"`
	// LR is Adam's peak learning rate, annealed to 0 by a cosine over the run.
	LR float64 `json:"lr"`
	// Dropout is the probability of dropping a hidden neuron (time-shared mask, see model.TimeSharedDropout).
	Dropout float64 `json:"dropout"`
	// Seed fixes the initialization, the order of the examples and the dropout masks.
	Seed int64 `json:"seed"`
	// Protocol is the model-selection protocol.
	Protocol Protocol `json:"protocol"`
	// Readout is the classifier's readout (model.Readouts); "" means the model's default.
	Readout string `json:"readout,omitempty"`
	// Executor is the engine that computes a training step's gradients and evaluates (package fits/step):
	// "" for step.Default (fused on CPU backends, chunked elsewhere), "fused" (each hidden layer's
	// recurrence as one call of a host kernel with the hand-derived adjoint), "chunked" (the recurrence in
	// chunks of Chunk steps called from Go, with a backward pass that recomputes each chunk), "stepwise"
	// (chunks of one step), "scan" (chunked with the hand-derived adjoint) or "unrolled" (the whole step as
	// one graph with the time recurrence unrolled; the oracle of the tests, slow to compile on long
	// sequences). All give the same loss and updates up to float32 rounding, for every model, readout and
	// dropout. Result.Engine records the engine a run used.
	Executor string `json:"executor,omitempty"`
	// Chunk is the chunked engine's number of time steps per call; 0 means step.DefaultChunk(T) (the
	// largest divisor of T that is at most 5). It must divide T.
	Chunk int `json:"chunk,omitempty"`
	// TargetLRScale multiplies the learning rate of the target-frequency variable Ω* (rad/s;
	// neuron.VarOmegaStar or VarOmegaStarDT) relative to LR; 0 or 1 means the paper's single learning
	// rate. Adam moves a variable by about the learning rate per step whatever its gradient's size, so
	// over a schedule of S steps Ω* can travel at most about S·LR rad/s: 35 rad/s (5.6 Hz) in the paper's
	// SSC recipe, under 1 rad/s in a 160-step quick run. The quick stand-ins scale it so that Ω* can travel
	// as far as in the paper's schedule (experiment package).
	TargetLRScale float64 `json:"target_lr_scale,omitempty"`
}

// Executor names (Config.Executor): the engines of package fits/step.
const (
	ExecutorChunked  = step.Chunked
	ExecutorStepwise = step.Stepwise
	ExecutorUnrolled = step.Unrolled
	ExecutorFused    = step.Fused
)

// Executors lists the valid executor names ("" is valid too: step.Default of the backend).
func Executors() []string { return step.Names() }

// DefaultConfig returns the paper's recipe (100 epochs, batch 128) with the defaults of this toolkit for
// the embedded synthetic task: FS neurons, width 64, learning rate 5e-3, no dropout, seed 1, best-test.
func DefaultConfig() Config {
	return Config{
		Dataset:  "synthetic",
		Model:    neuron.FS.String(),
		Width:    64,
		Epochs:   100,
		Batch:    128,
		LR:       5e-3,
		Dropout:  0,
		Seed:     1,
		Protocol: BestTest,
		Readout:  string(model.ReadoutMean),
	}
}

// Validate reports the first invalid field. Errors for unknown names list the valid ones.
func (c Config) Validate() error {
	if !contains(data.Names(), c.Dataset) {
		return &data.UnknownError{Name: c.Dataset, Valid: data.Names()}
	}
	kind, err := neuron.ParseKind(c.Model)
	if err != nil {
		return fmt.Errorf("unknown model %q (valid: %s)", c.Model, strings.Join(neuron.KindNames(), ", "))
	}
	if _, err := ParseProtocol(string(c.Protocol)); err != nil {
		return err
	}
	if c.Readout != "" {
		if _, err := model.ParseReadout(c.Readout); err != nil {
			return err
		}
	}
	if err := kind.CheckOrder(c.M); err != nil {
		return fmt.Errorf("--m: %w", err)
	}
	switch {
	case c.M > 16:
		return fmt.Errorf("TS order m=%d is too large (at most 16)", c.M)
	case c.Width < 1:
		return fmt.Errorf("width must be at least 1, got %d", c.Width)
	case c.Epochs < 1:
		return fmt.Errorf("epochs must be at least 1, got %d", c.Epochs)
	case c.Batch < 1:
		return fmt.Errorf("batch must be at least 1, got %d", c.Batch)
	case !(c.LR > 0) || c.LR > 10:
		return fmt.Errorf("learning rate must be in (0, 10], got %g", c.LR)
	case !(c.TargetLRScale >= 0) || c.TargetLRScale > 1e6:
		return fmt.Errorf("target learning-rate scale must be in [0, 1e6] (0 means 1), got %g", c.TargetLRScale)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return fmt.Errorf("dropout must be in [0, 1), got %g", c.Dropout)
	case c.TrainLimit < 0 || c.TestLimit < 0:
		return fmt.Errorf("train and test limits must be >= 0 (0 means all), got %d and %d", c.TrainLimit, c.TestLimit)
	}
	if c.Executor != "" && !contains(Executors(), c.Executor) {
		return fmt.Errorf("unknown executor %q (valid: %s)", c.Executor, strings.Join(Executors(), ", "))
	}
	if c.Chunk < 0 {
		return fmt.Errorf("chunk must be >= 0 (0 means the default), got %d", c.Chunk)
	}
	return nil
}

// TargetScales returns the per-variable learning-rate multipliers of the optimizer (step.Optimizer.Scales):
// TargetLRScale for both target-frequency variables, nil when it is 0 or 1.
func (c Config) TargetScales() map[string]float64 {
	if c.TargetLRScale == 0 || c.TargetLRScale == 1 {
		return nil
	}
	return map[string]float64{neuron.VarOmegaStar: c.TargetLRScale, neuron.VarOmegaStarDT: c.TargetLRScale}
}

// Kind returns the neuron kind of Model (the empty, unregistered kind if the name is invalid; call
// Validate first).
func (c Config) Kind() neuron.Kind {
	k, _ := neuron.ParseKind(c.Model)
	return k
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Hyperparameter keys under which a Config is stored in a GoMLX context (and so in every checkpoint).
const (
	ParamDataset  = "dataset"
	ParamSmall    = "dataset_small"
	ParamTrainLim = "dataset_train_limit"
	ParamTestLim  = "dataset_test_limit"
	ParamModel    = "model"
	ParamM        = "m"
	ParamWidth    = "width"
	ParamEpochs   = "epochs"
	ParamBatch    = "batch_size"
	ParamLR       = "learning_rate"
	ParamDropout  = "dropout"
	ParamSeed     = "seed"
	ParamProtocol = "protocol"
	ParamReadout  = "readout"
	ParamExecutor = "executor"
	ParamChunk    = "chunk"
	ParamTargetLR = "target_lr_scale"
)

// SetParams stores the configuration as hyperparameters of ctx.
func (c Config) SetParams(ctx *context.Context) {
	ctx.SetParams(map[string]any{
		ParamDataset:  c.Dataset,
		ParamSmall:    c.Small,
		ParamTrainLim: c.TrainLimit,
		ParamTestLim:  c.TestLimit,
		ParamModel:    c.Model,
		ParamM:        c.M,
		ParamWidth:    c.Width,
		ParamEpochs:   c.Epochs,
		ParamBatch:    c.Batch,
		ParamLR:       c.LR,
		ParamDropout:  c.Dropout,
		ParamSeed:     c.Seed,
		ParamProtocol: string(c.Protocol),
		ParamReadout:  c.Readout,
		ParamExecutor: c.Executor,
		ParamChunk:    c.Chunk,
		ParamTargetLR: c.TargetLRScale,
	})
}

// ConfigFromContext reads a configuration stored by SetParams (missing keys take DefaultConfig's values).
func ConfigFromContext(ctx *context.Context) Config {
	d := DefaultConfig()
	return Config{
		Dataset:    context.GetParamOr(ctx, ParamDataset, d.Dataset),
		Small:      context.GetParamOr(ctx, ParamSmall, d.Small),
		TrainLimit: context.GetParamOr(ctx, ParamTrainLim, d.TrainLimit),
		TestLimit:  context.GetParamOr(ctx, ParamTestLim, d.TestLimit),
		Model:      context.GetParamOr(ctx, ParamModel, d.Model),
		M:          context.GetParamOr(ctx, ParamM, d.M),
		Width:      context.GetParamOr(ctx, ParamWidth, d.Width),
		Epochs:     context.GetParamOr(ctx, ParamEpochs, d.Epochs),
		Batch:      context.GetParamOr(ctx, ParamBatch, d.Batch),
		LR:         context.GetParamOr(ctx, ParamLR, d.LR),
		Dropout:    context.GetParamOr(ctx, ParamDropout, d.Dropout),
		Seed:       context.GetParamOr(ctx, ParamSeed, d.Seed),
		Protocol:   Protocol(context.GetParamOr(ctx, ParamProtocol, string(d.Protocol))),
		Readout:    context.GetParamOr(ctx, ParamReadout, d.Readout),
		Executor:   context.GetParamOr(ctx, ParamExecutor, d.Executor),
		Chunk:      context.GetParamOr(ctx, ParamChunk, d.Chunk),
		// Checkpoints written before the field existed trained with the single learning rate.
		TargetLRScale: context.GetParamOr(ctx, ParamTargetLR, d.TargetLRScale),
	}
}

// NeuronConfig returns the neuron constants for a dataset (Appendix B, table of neuron constants): GSC's
// (τm = 0.1 s, τa = 0.5 s, f* in [1, 30] Hz) for "gsc" and the other log-Mel datasets
// ("espeak-digits-mel"), the SHD/SSC ones (τm = 0.04 s, τa = 0.2 s, f* in
// [1, 50] Hz) otherwise, always with the dataset's time bin as Δt. The target range is capped at the
// stable limit of the semi-implicit update for that Δt (for every kind: kinds that do not use the range
// ignore it).
func NeuronConfig(kind neuron.Kind, order int, ds *data.Dataset) (neuron.Config, error) {
	n := neuron.DefaultConfig(kind, order)
	if strings.EqualFold(ds.Name, "gsc") || strings.EqualFold(ds.Name, "espeak-digits-mel") {
		n.TauM, n.TauA = theory.GSC.TauM, theory.GSC.TauA
		n.FMaxHz = 30
	}
	n.Dt = ds.Dt
	if n.Dt >= n.TauM/2 {
		// Coarse bins (event cameras): keep μΔt at most 1/2.
		n.TauM, n.TauA = 5*n.Dt, 25*n.Dt
	}
	fmax, err := n.MaxTargetHz()
	if err != nil {
		return n, err
	}
	if n.FMaxHz > fmax {
		n.FMaxHz = fmax
	}
	if n.FMinHz > n.FMaxHz {
		n.FMinHz = n.FMaxHz / 10
	}
	return n, n.Validate()
}
