// Package train trains and evaluates the networks of fits/model on the datasets of package data, with the
// paper's recipe (Section 4, "Training details"): cross-entropy loss, Adam, a cosine-annealed learning rate
// over the whole run, batch size 128, 100 epochs, no weight decay, normalization or augmentation.
//
// A run is described by a Config, which is stored as GoMLX store hyperparameters (the house style of
// GoMLX's examples) and travels inside every checkpoint. TrainModel writes a checkpoint after every epoch
// into the run's directory (ml/model/checkpoint; resuming continues bit-for-bit where the last
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
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/internal/enum"
)

// Protocol is a model-selection protocol.
type Protocol string

const (
	// BestTest reports the best test accuracy over the epochs (the common SHD protocol).
	BestTest Protocol = "best-test"
	// ValSplit holds out ValFraction of the training set as validation (the released code's split,
	// data.OfficialValSplit: numpy's RandomState(0).permutation, the first max(1, int(0.2n)) indices) and
	// reports the test accuracy at the epoch of best validation accuracy (the paper's SHD* protocol).
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
const ValFraction = data.OfficialValFraction

// ValSplitSeed fixes the examples that ValSplit holds out, the same for every run and seed: the released
// code's valid_split_seed.
const ValSplitSeed = 0

// LegacyValSplitSeed fixed the stratified hold-out of this toolkit's first ValSplit (Config.ValSplit =
// "stratified").
const LegacyValSplitSeed = 20240

// Protocols lists the valid protocols.
func Protocols() []Protocol { return []Protocol{BestTest, ValSplit, OfficialVal, FinalEpoch} }

// ParseProtocol returns the protocol named s.
func ParseProtocol(s string) (Protocol, error) { return enum.Parse("protocol", s, Protocols()...) }

// Config describes one training run. Every field is declared once, here, by its struct tags: json is its key
// in result.json, param its hyperparameter key in a GoMLX store and so in every checkpoint (SetParams,
// ConfigFromContext: never rename one), flag the flag of `fits train` that sets it (alias an earlier name
// of that flag, kept working) and help the flag's help text. The field's Go type is the flag's (a float64
// or int64 flag is parsed with messages of its own) and the stored value's; a new field needs its line
// here and its use.
type Config struct {
	// Dataset is the registered dataset name (package data), e.g. "synthetic".
	Dataset string "json:\"dataset\" param:\"dataset\" flag:\"dataset\" help:\"dataset name (see `fits data list`; synthetic is embedded)\""
	// Small asks the dataset for its reduced version (tests and smoke runs).
	Small bool `json:"small,omitempty" param:"dataset_small" flag:"small" help:"use the dataset's reduced version (tests and smoke runs)"`
	// TrainLimit, when positive, keeps only the first TrainLimit training examples (before any
	// validation hold-out), and TestLimit the first TestLimit test examples: time-bounded runs on large
	// datasets, e.g. pixel-wise sMNIST on a CPU. Zero means all.
	TrainLimit int `json:"train_limit,omitempty" param:"dataset_train_limit" flag:"train-limit" help:"keep only the first N training examples (0: all), for time-bounded runs"`
	TestLimit  int `json:"test_limit,omitempty" param:"dataset_test_limit" flag:"test-limit" help:"keep only the first N test examples (0: all)"`
	// Model is the neuron kind of the hidden layers, a name of neuron.Kinds(): lif, adaptlif, fs-frozen,
	// fs, fsts, ... Code reads and sets it in the neuron package's type with Kind and WithNeuron; the
	// name is what checkpoints and result.json store (key "model").
	Model string `json:"model" param:"model" flag:"model" help:"neuron kind of the hidden layers: "`
	// M is the TS cascade order (neuron.Config.Order: fsts at least 1, 0 otherwise); Order and WithNeuron
	// read and set it (key "m").
	M int `json:"m" param:"m" flag:"m" help:"TS cascade order M (fsts: >= 1; other models: 0)"`
	// Width is the number of neurons of each hidden layer (the fully connected block for event data).
	Width int `json:"width" param:"width" flag:"width" help:"neurons per hidden layer"`
	// Epochs is the number of passes over the training set.
	Epochs int `json:"epochs" param:"epochs" flag:"epochs" help:"training epochs"`
	// Batch is the number of examples per step.
	Batch int `json:"batch" param:"batch_size" flag:"batch" help:"examples per step"`
	// LR is Adam's peak learning rate, annealed to 0 by a cosine over the run.
	LR float64 `json:"lr" param:"learning_rate" flag:"lr" help:"peak learning rate of Adam (cosine-annealed to 0)"`
	// Dropout is the probability of dropping a hidden neuron's spikes (masks as DropoutMode says).
	Dropout float64 `json:"dropout" param:"dropout" flag:"dropout" help:"dropout probability of hidden neurons"`
	// Seed fixes the initialization, the order of the examples and the dropout masks.
	Seed int64 `json:"seed" param:"seed" flag:"seed" help:"random seed (initialization, example order, dropout)"`
	// Protocol is the model-selection protocol.
	Protocol Protocol `json:"protocol" param:"protocol" flag:"protocol" help:"model selection: best-test, val-split, official-val, final-epoch"`
	// Readout is the classifier's readout (model.Readouts); "" means the dataset's default
	// (DefaultReadout: "sum", or "mean" for sMNIST, as the released code).
	Readout string `json:"readout,omitempty" param:"readout" flag:"readout" help:"classifier readout: sum (linear map of the spikes summed over time), mean, li-max, li-mean; empty: the dataset's default (sum; mean for sMNIST), as the released code"`
	// Executor is the engine that computes a training step's gradients and evaluates (package fits/step):
	// "" for step.Default (fused on CPU backends, loop on CUDA), "fused" (each hidden layer's
	// recurrence as one call of a host kernel with the hand-derived adjoint), "chunked" (the recurrence in
	// chunks of Chunk steps called from Go, with a backward pass that recomputes each chunk), "stepwise"
	// (chunks of one step), "scan" (chunked with the hand-derived adjoint), "loop" (each layer's recurrence
	// and its hand-derived adjoint as two XLA While loops, on the device) or "unrolled" (the whole step as
	// one graph with the time recurrence unrolled; the oracle of the tests, slow to compile on long
	// sequences). All give the same loss and updates up to float32 rounding, for every model, readout and
	// dropout. Result.Engine records the engine a run used.
	Executor string `json:"executor,omitempty" param:"executor" flag:"engine" alias:"executor" help:"training engine: empty for fused on CPU and loop on CUDA (step.Default); "`
	// Chunk is the chunked engine's number of time steps per call; 0 means step.DefaultChunk(T) (the
	// largest divisor of T that is at most 5). It must divide T.
	Chunk int `json:"chunk,omitempty" param:"chunk" flag:"chunk" help:"time steps per call of the chunked engine (0: the largest divisor of T that is at most 5)"`
	// TargetLRScale multiplies the learning rate of the target-frequency variable (Ω* in rad/s or ln f*:
	// neuron.VarOmegaStar, VarLogTargetHz and their DT forms) relative to LR; 0 or 1 means the paper's
	// single learning rate. Why one might scale it: docs/training.md, "The learning rate of f*".
	TargetLRScale float64 `json:"target_lr_scale,omitempty" param:"target_lr_scale" flag:"target-lr-scale" help:"multiplier of the learning rate of the target frequency Ω* (0 or 1: the paper's single learning rate)"`

	// The training semantics. The defaults are the released code's (the semantics that produced the
	// paper's tables); the other values are the paper's text or this toolkit's first forms. A checkpoint
	// or result written before these fields existed carries none of them and means Legacy's values.

	// TSMix is the λ-mix's nesting and the spike's comparison (neuron.TSMix): "official" (innermost first,
	// Ṽ > Vth) or "paper" (Eq. 10, Ṽ ≥ Vth).
	TSMix string `json:"ts_mix" param:"ts_mix" flag:"ts-mix" help:"nesting of the TS module's lambda-mix: official (the released code: innermost first, spike when V > Vth) or paper (Eq. 10 outermost first, V >= Vth); the same neuron for M <= 1"`
	// Surrogate is the spike's pseudo-derivative: "triangle" (α·max(0, 1 − α|Ṽ − Vth|) with α =
	// SurrogateAlpha, the released code's) or "bellec" (0.3·max(0, 1 − |Ṽ − Vth|), this toolkit's first).
	Surrogate      string  `json:"surrogate" param:"surrogate" flag:"surrogate" help:"surrogate gradient of the spike: triangle (alpha*max(0, 1 - alpha*|V - Vth|), the released code) or bellec (0.3*max(0, 1 - |V - Vth|), this toolkit's first form)"`
	SurrogateAlpha float64 `json:"surrogate_alpha" param:"surrogate_alpha" flag:"surrogate-alpha" help:"alpha of the triangle surrogate (peak alpha, half-width 1/alpha)"`
	// TargetCoordinate is the trainable coordinate of f*: "log-hz" (ln(f*/Hz)) or "omega" (Ω* in rad/s).
	TargetCoordinate string `json:"target_coordinate" param:"target_coordinate" flag:"target-coordinate" help:"trainable coordinate of the target frequency: log-hz (ln f*, the released code) or omega (Omega* in rad/s)"`
	// FInit spaces the initial f*: "log" or "linear".
	FInit string `json:"f_init" param:"f_init" flag:"f-init" help:"initial spacing of f* over its range: log or linear"`
	// FreqGuardSafety is the fraction of the Jury bound on κΔt² at which the optimizer projects f* after
	// every step (step.Optimizer.Guard); 0 turns the guard off.
	FreqGuardSafety float64 `json:"freq_guard_safety" param:"freq_guard_safety" flag:"freq-guard-safety" help:"after every optimizer step project f* below this fraction of the Jury stability bound on kappa*dt^2 (0 = off)"`
	// ForwardClip clamps f* in the forward pass at 0.99 of the Jury bound (this toolkit's first form).
	ForwardClip bool `json:"forward_clip,omitempty" param:"forward_clip" flag:"forward-clip" help:"clamp f* in the forward pass at 0.99 of the Jury bound (this toolkit's first form; the neuron past the cap then gets no gradient)"`
	// DropoutMode is "step" (a fresh mask per example, time step and neuron) or "shared" (one mask per
	// example and neuron for all time steps).
	DropoutMode string `json:"dropout_mode" param:"dropout_mode" flag:"dropout-mode" help:"dropout masks: step (a fresh mask per example, time step and neuron, the released code) or shared (one mask for all time steps)"`
	// LRSchedule steps the cosine annealing once per "epoch" (T_max = epochs, η_min = 0) or every "step".
	LRSchedule string `json:"lr_schedule" param:"lr_schedule" flag:"lr-schedule" help:"cosine annealing of the learning rate stepped once per epoch (T_max = epochs) or every step"`
	// AdamEpsilon is Adam's ε.
	AdamEpsilon float64 `json:"adam_epsilon" param:"adam_epsilon" flag:"adam-epsilon" help:"Adam's epsilon"`
	// BiasInit starts the dense biases "uniform" (U(±1/√fan_in), PyTorch's nn.Linear) or at "zero".
	BiasInit string `json:"bias_init" param:"bias_init" flag:"bias-init" help:"initial dense biases: uniform (U(+-1/sqrt(fan_in)), as PyTorch's nn.Linear) or zero"`
	// AdaptLIF is the adaptive-LIF baseline's coupling: "fixed" (η = γ = √κ_CT(0)) or "learnable" (η, γ
	// trainable from zero).
	AdaptLIF string `json:"adaptlif" param:"adaptlif" flag:"adaptlif" help:"adaptive-LIF baseline: fixed (eta = gamma = sqrt(kappa_CT(0)), the released code) or learnable (eta, gamma trainable from 0)"`
	// TauM, TauA and Dt override the neuron constants τm, τa and Δt (seconds; for sMNIST, pixel steps, as
	// the released recipe counts time) and FMinHz, FMaxHz the initial range of f* (Hz; cycles per step for
	// sMNIST); 0 keeps the dataset's (NeuronConfig: Appendix B's SHD/SSC or GSC constants, Δt the
	// dataset's time bin).
	TauM   float64 `json:"tau_m" param:"tau_m" flag:"tau-m" help:"membrane time constant tau_m in seconds (sMNIST: pixel steps); 0 keeps the dataset's (Appendix B)"`
	TauA   float64 `json:"tau_a" param:"tau_a" flag:"tau-a" help:"adaptation time constant tau_a, same unit; 0 keeps the dataset's"`
	Dt     float64 `json:"dt" param:"dt" flag:"dt" help:"neuron time step dt, same unit; 0 keeps the dataset's time bin"`
	FMinHz float64 `json:"f_min_hz" param:"f_min_hz" flag:"f-min" help:"lower end of the initial f* range in Hz (sMNIST: cycles per step); 0 keeps the dataset's"`
	FMaxHz float64 `json:"f_max_hz" param:"f_max_hz" flag:"f-max" help:"upper end of the initial f* range; 0 keeps the dataset's"`
	// InputCounts feeds spiking datasets (SHD, SSC, the espeak-ng digits) spike counts per bin instead of the
	// released code's binary bins; AudioFrontEnd names the audio datasets' front end ("" or "released": the
	// released code's librosa recipe; "logmel": this toolkit's first log-Mel features). See data.Options.
	InputCounts   bool   `json:"input_counts,omitempty" param:"input_counts" flag:"input-counts" help:"feed SHD/SSC/espeak-digits spike counts per bin instead of the released code's binary bins"`
	AudioFrontEnd string `json:"frontend,omitempty" param:"frontend" flag:"frontend" help:"audio front end of gsc and espeak-digits-mel: released (librosa's recipe, the default) or logmel (this toolkit's first features)"`
	// ValSplit is the val-split protocol's hold-out: "released" (the released SHD* split) or "stratified"
	// (this toolkit's first, stratified by class, seed LegacyValSplitSeed).
	ValSplit string `json:"val_split" param:"val_split" flag:"val-split" help:"hold-out of --protocol=val-split: released (the released code's SHD* split, numpy RandomState(0).permutation) or stratified (this toolkit's first, stratified by class)"`
}

// Values of the semantic fields of Config.
const (
	SurrogateTriangle = "triangle"
	SurrogateBellec   = "bellec"
	ScheduleEpoch     = "epoch"
	ScheduleStep      = "step"
	BiasUniform       = "uniform"
	BiasZero          = "zero"
	AdaptLIFFixed     = "fixed"
	AdaptLIFLearnable = "learnable"

	ValSplitReleased   = "released"
	ValSplitStratified = "stratified"
)

// WithReleasedSemantics returns c with the released code's training semantics (the defaults).
func (c Config) WithReleasedSemantics() Config {
	c.TSMix = string(neuron.TSMixOfficial)
	c.Surrogate, c.SurrogateAlpha = SurrogateTriangle, neuron.DefaultSurrogateAlpha
	c.TargetCoordinate, c.FInit = string(neuron.TargetLogHz), string(neuron.FInitLog)
	c.FreqGuardSafety, c.ForwardClip = neuron.DefaultFreqGuardSafety, false
	c.DropoutMode, c.LRSchedule = string(model.DropoutStep), ScheduleEpoch
	c.AdamEpsilon, c.BiasInit, c.AdaptLIF = step.DefaultAdamEpsilon, BiasUniform, AdaptLIFFixed
	c.ValSplit = ValSplitReleased
	c.InputCounts, c.AudioFrontEnd = false, ""
	return c
}

// DataOptions returns the options of data.Load for this run's inputs (dir is the dataset folder, "" for
// the default).
func (c Config) DataOptions(dir string) data.Options {
	return data.Options{Dir: dir, Small: c.Small, InputCounts: c.InputCounts, AudioFrontEnd: c.AudioFrontEnd}
}

// Legacy returns c with the semantics this toolkit trained with before it followed the released code:
// the paper's nesting and ≥ spikes, the 0.3 surrogate of width 1, Ω* with the forward clip and no guard,
// time-shared dropout, the mean readout (where c has none), the cosine stepped every step, Adam's
// ε = 1e-7, zero biases, the learnable adaptive LIF, the stratified validation split, spike counts and the
// log-Mel front end. Runs written before the semantic fields existed
// resume and evaluate with these.
func (c Config) Legacy() Config {
	c.TSMix = string(neuron.TSMixPaper)
	c.Surrogate, c.SurrogateAlpha = SurrogateBellec, 0
	c.TargetCoordinate, c.FInit = string(neuron.TargetOmega), string(neuron.FInitLog)
	c.FreqGuardSafety, c.ForwardClip = 0, true
	c.DropoutMode, c.LRSchedule = string(model.DropoutShared), ScheduleStep
	c.AdamEpsilon, c.BiasInit, c.AdaptLIF = 1e-7, BiasZero, AdaptLIFLearnable
	c.ValSplit = ValSplitStratified
	c.InputCounts, c.AudioFrontEnd = true, "logmel"
	if c.Readout == "" {
		c.Readout = string(model.ReadoutMean)
	}
	return c
}

// DefaultReadout returns the readout a dataset trains with when Config.Readout is empty: the mean over
// time for the sMNIST datasets (the released sMNIST recipe), the sum over time otherwise.
func DefaultReadout(dataset string) model.Readout {
	if strings.HasPrefix(dataset, "smnist") {
		return model.ReadoutMean
	}
	return model.ReadoutSum
}

// Resolved returns c with an empty Readout replaced by the dataset's default, as a run records it.
func (c Config) Resolved() Config {
	if c.Readout == "" {
		c.Readout = string(DefaultReadout(c.Dataset))
	}
	return c
}

// NeuronOptions sets the semantic options of c on a neuron configuration.
func (c Config) NeuronOptions(n neuron.Config) neuron.Config {
	n.TSMix = neuron.TSMix(c.TSMix)
	n.TargetCoordinate = neuron.TargetCoordinate(c.TargetCoordinate)
	n.FInit = neuron.FInit(c.FInit)
	n.ForwardClip = c.ForwardClip
	n.AdaptLIFLearnable = c.AdaptLIF == AdaptLIFLearnable
	if c.Surrogate == SurrogateBellec {
		n.Surrogate = neuron.BellecSurrogate
	} else if c.SurrogateAlpha > 0 {
		n.Surrogate = neuron.TriangleSurrogate(c.SurrogateAlpha)
	}
	return n
}

// validateSemantics reports the first invalid semantic field, naming the flag that sets it.
func (c Config) validateSemantics() error {
	oneOf := func(flag, v string, valid ...string) error {
		if _, err := enum.Parse("value", v, valid...); err != nil {
			return fmt.Errorf("--%s: %w", flag, err)
		}
		return nil
	}
	if err := cmp.Or(
		oneOf("ts-mix", c.TSMix, string(neuron.TSMixOfficial), string(neuron.TSMixPaper)),
		oneOf("surrogate", c.Surrogate, SurrogateTriangle, SurrogateBellec),
		oneOf("target-coordinate", c.TargetCoordinate, string(neuron.TargetLogHz), string(neuron.TargetOmega)),
		oneOf("f-init", c.FInit, string(neuron.FInitLog), string(neuron.FInitLinear)),
		oneOf("dropout-mode", c.DropoutMode, string(model.DropoutStep), string(model.DropoutShared)),
		oneOf("lr-schedule", c.LRSchedule, ScheduleEpoch, ScheduleStep),
		oneOf("bias-init", c.BiasInit, BiasUniform, BiasZero),
		oneOf("adaptlif", c.AdaptLIF, AdaptLIFFixed, AdaptLIFLearnable),
		oneOf("val-split", c.ValSplit, ValSplitReleased, ValSplitStratified),
	); err != nil {
		return err
	}
	switch {
	case c.Surrogate == SurrogateTriangle && !(c.SurrogateAlpha > 0 && c.SurrogateAlpha <= 100):
		return fmt.Errorf("--surrogate-alpha: must lie in (0, 100], got %g", c.SurrogateAlpha)
	case c.Surrogate == SurrogateTriangle && math.IsInf(1/c.SurrogateAlpha, 0):
		return fmt.Errorf("--surrogate-alpha: %g is too small: the triangle's half-width 1/alpha overflows", c.SurrogateAlpha)
	case !(c.FreqGuardSafety >= 0 && c.FreqGuardSafety <= 1):
		return fmt.Errorf("--freq-guard-safety: must lie in [0, 1] (0 = off), got %g", c.FreqGuardSafety)
	case !(c.AdamEpsilon > 0 && c.AdamEpsilon < 1):
		return fmt.Errorf("--adam-epsilon: must lie in (0, 1), got %g", c.AdamEpsilon)
	}
	for _, f := range []struct {
		flag string
		v    float64
	}{{"tau-m", c.TauM}, {"tau-a", c.TauA}, {"dt", c.Dt}, {"f-min", c.FMinHz}, {"f-max", c.FMaxHz}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("--%s: must be positive and finite (0 keeps the dataset's), got %g", f.flag, f.v)
		}
	}
	if c.AudioFrontEnd != "" && c.AudioFrontEnd != "released" && c.AudioFrontEnd != "logmel" {
		return fmt.Errorf("--frontend: unknown value %q (valid: released, logmel)", c.AudioFrontEnd)
	}
	if c.FMinHz > 0 && c.FMaxHz > 0 && c.FMinHz > c.FMaxHz {
		return fmt.Errorf("--f-min %g is above --f-max %g", c.FMinHz, c.FMaxHz)
	}
	return nil
}

// Executors lists the valid executor names ("" is valid too: step.Default of the backend).
func Executors() []string { return step.Names() }

// DefaultConfig returns the paper's recipe (100 epochs, batch 128) with the released code's training
// semantics (WithReleasedSemantics; the readout is the dataset's default) and the defaults of this toolkit
// for the embedded synthetic task: FS neurons, width 64, learning rate 5e-3, no dropout, seed 1,
// best-test.
func DefaultConfig() Config {
	return Config{
		Dataset:  "synthetic",
		Width:    64,
		Epochs:   100,
		Batch:    128,
		LR:       5e-3,
		Seed:     1,
		Protocol: BestTest,
	}.WithNeuron(neuron.FS, 0).WithReleasedSemantics()
}

// Validate reports the first invalid field. Errors for unknown names list the valid ones.
// Caps on the sizes a configuration may ask for (Validate): far above any run of the paper (width 512,
// batch 256, a few hundred epochs), low enough that absurd values fail at once instead of exhausting
// memory or running for ever. Memory itself is checked against the estimate of MemoryEstimate once the
// dataset is known (at most the machine's memory, RunMemoryLimit).
const (
	MaxWidth  = 1 << 16
	MaxBatch  = 1 << 16
	MaxEpochs = 1_000_000
	// MaxOrder caps the TS cascade order M (the paper's largest is 4; the graph's size grows with M).
	MaxOrder = 16
	// MaxExamples caps --train-limit and --test-limit.
	MaxExamples = 1 << 30
)

func (c Config) Validate() error {
	if !slices.Contains(data.Names(), c.Dataset) {
		return &data.UnknownError{Name: c.Dataset, Valid: data.Names()}
	}
	kind, err := enum.ParseFold("model", c.Model, neuron.Kinds()...)
	if err != nil {
		return err
	}
	if _, err := ParseProtocol(string(c.Protocol)); err != nil {
		return err
	}
	if c.Readout != "" {
		if _, err := model.ParseReadout(c.Readout); err != nil {
			return err
		}
	}
	if err := kind.CheckOrder(c.Order()); err != nil {
		return fmt.Errorf("--m: %w", err)
	}
	switch {
	case c.Order() > MaxOrder:
		return fmt.Errorf("TS order m=%d is too large (at most %d)", c.Order(), MaxOrder)
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
	case c.Width > MaxWidth:
		return fmt.Errorf("width %d is above the cap of %d neurons per layer", c.Width, MaxWidth)
	case c.Batch > MaxBatch:
		return fmt.Errorf("batch %d is above the cap of %d examples per step", c.Batch, MaxBatch)
	case c.Epochs > MaxEpochs:
		return fmt.Errorf("epochs %d is above the cap of %d", c.Epochs, MaxEpochs)
	case c.TrainLimit > MaxExamples || c.TestLimit > MaxExamples:
		return fmt.Errorf("train and test limits must be at most %d, got %d and %d", MaxExamples, c.TrainLimit, c.TestLimit)
	}
	if err := c.validateSemantics(); err != nil {
		return err
	}
	if _, err := enum.Parse("engine", c.Executor, Executors()...); c.Executor != "" && err != nil {
		return fmt.Errorf("--engine: %w", err)
	}
	if c.Chunk < 0 {
		return fmt.Errorf("chunk must be >= 0 (0 means the default), got %d", c.Chunk)
	}
	return nil
}

// TargetScales returns the per-variable learning-rate multipliers of the optimizer (step.Optimizer.Scales):
// TargetLRScale for every target-frequency variable, nil when it is 0 or 1.
func (c Config) TargetScales() map[string]float64 {
	if c.TargetLRScale == 0 || c.TargetLRScale == 1 {
		return nil
	}
	return map[string]float64{neuron.VarOmegaStar: c.TargetLRScale, neuron.VarOmegaStarDT: c.TargetLRScale,
		neuron.VarLogTargetHz: c.TargetLRScale, neuron.VarLogTargetHzDT: c.TargetLRScale}
}

// Kind returns the neuron kind of Model (the empty, unregistered kind if the name is invalid; call
// Validate first).
func (c Config) Kind() neuron.Kind {
	k, _ := neuron.ParseKind(c.Model)
	return k
}

// Order returns the TS cascade order M of the hidden layers (neuron.Config.Order), the field M.
func (c Config) Order() int { return c.M }

// WithNeuron returns c with the hidden layers' neuron kind and TS cascade order set (Model = kind's name,
// M = order); Validate checks that the kind accepts the order (neuron.Kind.CheckOrder).
func (c Config) WithNeuron(kind neuron.Kind, order int) Config {
	c.Model, c.M = kind.String(), order
	return c
}

// SetParams stores the configuration as hyperparameters of scope: every field under its param tag, with
// its Go value (a Protocol as a string).
func (c Config) SetParams(scope *mlmodel.Scope) {
	for f, v := range reflect.ValueOf(c).Fields() {
		value := v.Interface()
		if v.Kind() == reflect.String {
			value = v.String()
		}
		scope.SetParam(f.Tag.Get("param"), value)
	}
}

// ConfigFromContext reads a configuration stored by SetParams (missing keys take DefaultConfig's values).
// A store without the semantic keys (a checkpoint written before they existed: no ts_mix) gets the Legacy
// semantics it was trained with.
func ConfigFromContext(scope *mlmodel.Scope) Config {
	c := DefaultConfig()
	if _, found := scope.GetParam("ts_mix"); !found {
		c = c.Legacy()
	}
	for f, v := range reflect.ValueOf(&c).Elem().Fields() {
		switch key := f.Tag.Get("param"); v.Kind() {
		case reflect.String:
			v.SetString(mlmodel.GetParamOr(scope, key, v.String()))
		case reflect.Int:
			v.SetInt(int64(mlmodel.GetParamOr(scope, key, int(v.Int()))))
		case reflect.Int64:
			v.SetInt(mlmodel.GetParamOr(scope, key, v.Int()))
		case reflect.Float64:
			v.SetFloat(mlmodel.GetParamOr(scope, key, v.Float()))
		case reflect.Bool:
			v.SetBool(mlmodel.GetParamOr(scope, key, v.Bool()))
		}
	}
	return c
}

// NeuronConfigFor returns NeuronConfig for cfg's model on ds with cfg's overrides of the constants
// (TauM, TauA, Dt, FMinHz, FMaxHz where nonzero) and its semantic options (NeuronOptions).
func NeuronConfigFor(cfg Config, ds *data.Dataset) (neuron.Config, error) {
	n, err := NeuronConfig(cfg.Kind(), cfg.Order(), ds)
	if err != nil && cfg.TauM == 0 && cfg.Dt == 0 {
		return n, err
	}
	n = cfg.NeuronOptions(cfg.withConstants(n))
	return n, n.Validate()
}

// withConstants returns n with cfg's nonzero overrides of τm, τa, Δt and the f* range.
func (c Config) withConstants(n neuron.Config) neuron.Config {
	for _, o := range []struct {
		v   float64
		dst *float64
	}{{c.TauM, &n.TauM}, {c.TauA, &n.TauA}, {c.Dt, &n.Dt}, {c.FMinHz, &n.FMinHz}, {c.FMaxHz, &n.FMaxHz}} {
		if o.v > 0 {
			*o.dst = o.v
		}
	}
	return n
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
