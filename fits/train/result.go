package train

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/internal/filesafe"
)

// ResultFile is the name of the result file written into a run's directory.
const ResultFile = "result.json"

// Epoch holds the measurements of one epoch.
type Epoch struct {
	// Epoch is the 1-based epoch number.
	Epoch int `json:"epoch"`
	// Loss is the mean cross-entropy over the epoch's training examples (training mode, with dropout).
	Loss float64 `json:"loss"`
	// TrainAcc is the accuracy on the training examples during the epoch (training mode).
	TrainAcc float64 `json:"train_acc"`
	// ValAcc is the accuracy on the validation split after the epoch (nil under best-test).
	ValAcc *float64 `json:"val_acc"`
	// TestAcc is the accuracy on the test split after the epoch.
	TestAcc float64 `json:"test_acc"`
	// FiringRates are the mean spikes per neuron per time bin of each hidden layer over the epoch's
	// training examples.
	FiringRates []float64 `json:"firing_rates"`
	// EvalFiringRates are the same measured after the epoch, without dropout, on the selection split
	// (validation if the protocol has one, else test).
	EvalFiringRates []float64 `json:"eval_firing_rates"`
	// LR is the learning rate of the epoch's last step (its last applied one, when steps were skipped).
	LR float64 `json:"lr"`
	// Seconds is the wall time of the epoch (training and evaluation).
	Seconds float64 `json:"seconds"`
	// FreqProjected is the number of target-frequency entries the frequency guard projected onto its cap
	// during the epoch (summed over steps; the released code's freq_projected).
	FreqProjected int64 `json:"freq_projected"`
	// SkippedSteps are the 1-based steps of the epoch whose update was skipped because their gradients
	// were not finite (Options.SkipNonFiniteGradients); empty in a run that applied every update, as the
	// released code does.
	SkippedSteps []int `json:"skipped_steps,omitempty"`
}

// Result is the content of result.json.
type Result struct {
	Dataset        string `json:"dataset"`
	Model          string `json:"model"`
	M              int    `json:"m"`
	Width          int    `json:"width"`
	Seed           int64  `json:"seed"`
	ParameterCount int    `json:"parameter_count"`
	// BestValAcc is the best validation accuracy (nil under best-test).
	BestValAcc *float64 `json:"best_val_acc"`
	// TestAccAtBestVal is the test accuracy at the first epoch reaching BestValAcc (nil under best-test).
	TestAccAtBestVal *float64 `json:"test_acc_at_best_val"`
	// BestTestAcc is the best test accuracy over the epochs.
	BestTestAcc float64 `json:"best_test_acc"`
	// BestEpoch is the 1-based epoch the protocol selects: best validation accuracy, best test accuracy
	// under best-test (the first one on ties), the last epoch under final-epoch.
	BestEpoch int `json:"best_epoch"`
	// FinalTestAcc is the test accuracy after the last epoch.
	FinalTestAcc float64 `json:"final_test_acc"`
	// Epochs are the per-epoch curves.
	Epochs []Epoch `json:"epochs"`
	// FiringRates are the hidden layers' mean spikes per neuron per time bin of the selected checkpoint
	// (the epoch BestEpoch), without dropout, on the selection split (validation if the protocol has one,
	// else test): the rates the theoretical energy (Table 4) uses. FinalFiringRates are the same after the
	// last epoch.
	FiringRates      []float64 `json:"firing_rates"`
	FinalFiringRates []float64 `json:"final_firing_rates"`
	// WallSeconds is the total wall time of the run, summed over resumed segments.
	WallSeconds float64 `json:"wall_seconds"`
	// CompileSeconds is the time spent building and compiling the graphs in the last segment.
	CompileSeconds float64 `json:"compile_seconds"`
	// Backend is the GoMLX backend configuration the run used, e.g. "xla:cpu".
	Backend string `json:"backend"`
	// Engine is the training engine of the last segment (package fits/step), e.g. "fused": Config.Executor
	// resolved on the backend.
	Engine string `json:"engine,omitempty"`
	// Segments record who trained which epochs: the first start and every resume, each with its commit,
	// CPU model and wall time; Resumes is how many times the run was resumed (len(Segments) − 1). Commit
	// and CPUModel repeat the last segment's. All absent in results of binaries older than this record.
	Segments []Segment `json:"segments,omitempty"`
	Resumes  int       `json:"resumes"`
	Commit   string    `json:"commit,omitempty"`
	CPUModel string    `json:"cpu_model,omitempty"`
	// Protocol, Classes and Config complete the description of the run.
	Protocol Protocol `json:"protocol"`
	Classes  int      `json:"classes"`
	Config   Config   `json:"config"`
	// Imported, for a run that another program trained (fits import), says from what file; nil for a run
	// of this toolkit.
	Imported *Import `json:"imported,omitempty"`
	// Semantics repeats the run's training semantics (Config's fields of the same names) at the top level
	// of result.json, where scripts look for them.
	Semantics
}

// Semantics are the training-semantics settings of a run, under the keys result.json and the checkpoints
// use (see Config for their meaning).
type Semantics struct {
	TSMix            string  `json:"ts_mix"`
	SurrogateAlpha   float64 `json:"surrogate_alpha"`
	TargetCoordinate string  `json:"target_coordinate"`
	FInit            string  `json:"f_init"`
	FreqGuardSafety  float64 `json:"freq_guard_safety"`
	DropoutMode      string  `json:"dropout_mode"`
	Readout          string  `json:"readout"`
	LRSchedule       string  `json:"lr_schedule"`
}

// Semantics returns the semantics settings of c (Readout as resolved for the dataset).
func (c Config) Semantics() Semantics {
	c = c.Resolved()
	return Semantics{TSMix: c.TSMix, SurrogateAlpha: c.SurrogateAlpha, TargetCoordinate: c.TargetCoordinate,
		FInit: c.FInit, FreqGuardSafety: c.FreqGuardSafety, DropoutMode: c.DropoutMode, Readout: c.Readout,
		LRSchedule: c.LRSchedule}
}

// summarize fills the protocol's summary numbers from the epochs.
func (r *Result) summarize() {
	r.BestTestAcc = math.Inf(-1)
	bestVal := math.Inf(-1)
	r.BestValAcc, r.TestAccAtBestVal = nil, nil
	for _, e := range r.Epochs {
		if e.TestAcc > r.BestTestAcc {
			r.BestTestAcc = e.TestAcc
			if r.Protocol == BestTest {
				r.BestEpoch = e.Epoch
			}
		}
		if e.ValAcc != nil && *e.ValAcc > bestVal {
			bestVal = *e.ValAcc
			v, t := *e.ValAcc, e.TestAcc
			r.BestValAcc, r.TestAccAtBestVal = &v, &t
			r.BestEpoch = e.Epoch
		}
	}
	if len(r.Epochs) > 0 {
		last := r.Epochs[len(r.Epochs)-1]
		r.FinalTestAcc = last.TestAcc
		if r.Protocol == FinalEpoch {
			r.BestEpoch = last.Epoch
		}
		r.FinalFiringRates = last.EvalFiringRates
		r.FiringRates = last.EvalFiringRates
		for _, e := range r.Epochs {
			if e.Epoch == r.BestEpoch {
				r.FiringRates = e.EvalFiringRates
			}
		}
	} else {
		r.BestTestAcc = 0
	}
}

// WriteResult writes r as indented JSON to dir/result.json, atomically (write then rename); temporary
// results that a killed process left in dir are removed first (filesafe.RemoveStale).
func WriteResult(dir string, r *Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return filesafe.WriteFile(filepath.Join(dir, ResultFile), append(b, '\n'))
}

// ReadResult reads dir/result.json. A result written before the training-semantics fields existed (its
// config has no ts_mix) gets the Legacy semantics it was trained with, in Config and at the top level. A
// file that is not a regular file of at most 64 MiB holding a result, or whose values are not those of
// a result (Result.check: no epochs, an accuracy outside [0, 1], a negative time), is an *InputError.
func ReadResult(dir string) (*Result, error) {
	b, err := filesafe.ReadRegular(filepath.Join(dir, ResultFile), maxResultFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, &InputError{Err: err} // it names the file
	}
	var r Result
	if err = json.Unmarshal(b, &r); err == nil {
		err = r.check()
	}
	if err != nil {
		return nil, inputErrorf("%s: not a result of fits train: %w", filepath.Join(dir, ResultFile), err)
	}
	if r.Config.TSMix == "" {
		r.Config = r.Config.Legacy()
		r.Semantics = r.Config.Semantics()
	}
	return &r, nil
}

// check validates the values of a result read from a file: it has epochs,
// accuracies lie in [0, 1], times are finite and not negative, and the epochs are numbered 1, 2, ...
func (r *Result) check() error {
	if len(r.Epochs) == 0 {
		return errors.New("no epochs")
	}
	acc := func(key string, v *float64) error { // nil: an optional accuracy not given
		if v != nil && !(*v >= 0 && *v <= 1) {
			return fmt.Errorf("%s %g is outside [0, 1]", key, *v)
		}
		return nil
	}
	secs := func(key string, v float64) error {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s %g is not a finite number of seconds >= 0", key, v)
		}
		return nil
	}
	errs := []error{acc("best_test_acc", &r.BestTestAcc), acc("final_test_acc", &r.FinalTestAcc),
		secs("wall_seconds", r.WallSeconds), secs("compile_seconds", r.CompileSeconds),
		acc("best_val_acc", r.BestValAcc), acc("test_acc_at_best_val", r.TestAccAtBestVal)}
	for i, e := range r.Epochs {
		if e.Epoch != i+1 {
			errs = append(errs, fmt.Errorf("epoch entry %d is numbered %d", i+1, e.Epoch))
		}
		errs = append(errs, acc(fmt.Sprintf("epoch %d test_acc", e.Epoch), &e.TestAcc),
			acc(fmt.Sprintf("epoch %d train_acc", e.Epoch), &e.TrainAcc), secs(fmt.Sprintf("epoch %d seconds", e.Epoch), e.Seconds),
			acc(fmt.Sprintf("epoch %d val_acc", e.Epoch), e.ValAcc))
	}
	return cmp.Or(errs...)
}

// maxResultFile caps the size of a result.json that is read (64 MiB).
const maxResultFile = 64 << 20

// setSegments records the run's segments and the last one's commit and CPU.
func (r *Result) setSegments(segs []Segment) {
	r.Segments, r.Resumes, r.Commit, r.CPUModel = segs, 0, "", ""
	if n := len(segs); n > 0 {
		r.Resumes, r.Commit, r.CPUModel = n-1, segs[n-1].Commit, segs[n-1].CPU
	}
}
