package analysis

import (
	"cmp"
	"fmt"
	"math/rand/v2"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Inference-time target-frequency perturbation (the paper's Table A.8, Appendix C "Target Frequency
// Perturbation"): a trained checkpoint is evaluated as it is (full), with every layer's target
// frequencies reset to their initial log-spaced values (reset: all other parameters kept), and with
// the target frequencies permuted within each layer (shuffle: the layer's distribution kept, the
// assignment to neurons broken). The paired differences reset − full and shuffle − full of the test
// accuracy are taken per checkpoint, then averaged over the checkpoints of a group (mean ± std, as the
// paper's "paired change from the corresponding unperturbed checkpoint").
//
// The perturbations act on the trained variable itself (neuron.VarOmegaStar, or neuron.VarOmegaStarDT
// of a DT-exact layer), before the graph's clamp: reset writes exactly the values neuron.Layer
// initializes it with, shuffle permutes its values. Parameters of convolutional layers are per channel,
// so there the channels' targets are permuted.

// targetVariable returns the variable holding layer l's trained target, in scope (a run's root
// store, the network's variables under train.ModelScope).
func targetVariable(scope *model.Scope, l Layer) (*model.Variable, error) {
	if !l.Neuron.Kind.HasTargetFrequency() {
		return nil, fmt.Errorf("layer %s: kind %s has no target frequency", l.Name, l.Neuron.Kind)
	}
	name := neuron.TargetVariable(l.Neuron)
	v := scope.Store().GetVariable(model.JoinPath(l.Scope, name))
	if v == nil {
		return nil, fmt.Errorf("layer %s: no variable %s in scope %s", l.Name, name, l.Scope)
	}
	return v, nil
}

// InitialTargetValues returns the values with which neuron.Layer initializes the target variable of n
// parameter sets of configuration cfg, in the variable's coordinate (ln(f/Hz), or Ω* = 2πf in rad/s):
// f_i spaced over [cfg.FMinHz, cfg.FMaxHz] as cfg.FInit says (neuron.InitialTargetsHz), before any clamp.
func InitialTargetValues(cfg neuron.Config, n int) ([]float64, error) {
	if !cfg.Kind.HasTargetFrequency() {
		return nil, fmt.Errorf("kind %s has no target frequency", cfg.Kind)
	}
	f, err := neuron.InitialTargetsHz(cfg, n)
	if err != nil {
		return nil, err
	}
	for i := range f {
		f[i] = neuron.TargetValue(cfg, f[i])
	}
	return f, nil
}

// ResetTargets sets the target variable of every layer (in scope, a run's root scope such as the one
// train.EvaluateWith passes) to the values neuron.Layer initializes it with (InitialTargetValues,
// converted to the variable's dtype as neuron.Layer converts them), keeping its shape. Layers without a
// target frequency are an error.
func ResetTargets(scope *model.Scope, layers []Layer) error {
	return setTargets(scope, layers, func(l Layer, old []float64) ([]float64, error) {
		return InitialTargetValues(l.Neuron, len(old))
	})
}

// ShufflePermutation returns the permutation that ShuffleTargets applies to layer index of n parameter
// sets: drawn from a PCG generator seeded with (seed, index), so every layer gets its own and a run's
// shuffle is reproducible.
func ShufflePermutation(seed uint64, index, n int) []int {
	return rand.New(rand.NewPCG(seed, uint64(index))).Perm(n)
}

// ShuffleTargets permutes the values of every layer's target variable (in scope, as ResetTargets) within
// the layer: afterwards value i is the former value perm[i], perm = ShufflePermutation(seed, layer
// index, size). It returns the permutations, one per layer. Layers without a target frequency are an
// error.
func ShuffleTargets(scope *model.Scope, layers []Layer, seed uint64) ([][]int, error) {
	var perms [][]int
	err := setTargets(scope, layers, func(l Layer, old []float64) ([]float64, error) {
		perm := ShufflePermutation(seed, l.Index, len(old))
		shuffled := make([]float64, len(old))
		for i, j := range perm {
			shuffled[i] = old[j]
		}
		perms = append(perms, perm)
		return shuffled, nil
	})
	if err != nil {
		return nil, err
	}
	return perms, nil
}

// setTargets sets the target variable of every layer (in scope) to what values returns for the layer and
// the variable's current values, in the variable's dtype and shape.
func setTargets(scope *model.Scope, layers []Layer, values func(l Layer, old []float64) ([]float64, error)) error {
	for _, l := range layers {
		v, err := targetVariable(scope, l)
		if err != nil {
			return err
		}
		err = func() error {
			t, err := v.Value()
			if err != nil {
				return err
			}
			old, err := tensorFloat64(t)
			if err != nil {
				return err
			}
			nv, err := values(l, old)
			if err != nil {
				return err
			}
			nt, err := tensorLike(t, nv)
			if err != nil {
				return err
			}
			return v.SetValue(nt)
		}()
		if err != nil {
			return fmt.Errorf("layer %s: %w", l.Name, err)
		}
	}
	return nil
}

// tensorFloat64 returns the values of a float32 or float64 tensor as float64.
func tensorFloat64(t *tensors.Tensor) ([]float64, error) {
	switch t.DType() {
	case dtypes.Float32:
		v, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out, nil
	case dtypes.Float64:
		return tensors.CopyFlatData[float64](t)
	}
	return nil, fmt.Errorf("unsupported dtype %s", t.DType())
}

// tensorLike returns a tensor with t's dtype and shape holding values (converted as neuron.Layer
// converts its initial values: float64 → float32 by rounding).
func tensorLike(t *tensors.Tensor, values []float64) (*tensors.Tensor, error) {
	dims := t.Shape().Dimensions
	if len(values) != t.Shape().Size() {
		return nil, fmt.Errorf("%d values for a tensor of shape %s", len(values), t.Shape())
	}
	switch t.DType() {
	case dtypes.Float32:
		f := make([]float32, len(values))
		for i, v := range values {
			f[i] = float32(v)
		}
		return tensors.FromFlatDataAndDimensions(f, dims...), nil
	case dtypes.Float64:
		return tensors.FromFlatDataAndDimensions(append([]float64(nil), values...), dims...), nil
	}
	return nil, fmt.Errorf("unsupported dtype %s", t.DType())
}

// Perturbations of PerturbResult, in evaluation order.
const (
	PerturbFull    = "full"
	PerturbReset   = "reset"
	PerturbShuffle = "shuffle"
)

// PerturbOptions configure Perturb.
type PerturbOptions struct {
	// Seed seeds the shuffle's permutations (ShufflePermutation); 0 means 1.
	Seed uint64
	// Progress, when not nil, is called before each evaluation with the number of evaluations done,
	// their total and what comes next.
	Progress func(done, total int, what string)
}

// PerturbEval is one evaluation of a checkpoint: test accuracy, and validation accuracy where the
// protocol has a validation split.
type PerturbEval struct {
	TestAcc float64  `json:"test_acc"`
	ValAcc  *float64 `json:"val_acc"`
}

// PerturbResult is the perturbation of one checkpoint.
type PerturbResult struct {
	Dir  string `json:"dir"`
	Seed int64  `json:"seed"`
	// Epoch is the number of epochs trained when the evaluated checkpoint (the run's latest) was saved.
	Epoch   int         `json:"epoch"`
	Full    PerturbEval `json:"full"`
	Reset   PerturbEval `json:"reset"`
	Shuffle PerturbEval `json:"shuffle"`
	// DeltaReset and DeltaShuffle are the paired changes of the test accuracy, perturbed − full.
	DeltaReset   float64 `json:"delta_reset"`
	DeltaShuffle float64 `json:"delta_shuffle"`
	// Permutations are the shuffle's permutations, one per layer (see ShuffleTargets).
	Permutations [][]int `json:"permutations"`
}

// MeanStdValue is a mean ± sample standard deviation over checkpoint.
type MeanStdValue struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

func meanStdOf(v []float64) MeanStdValue {
	m, s := MeanStd(v)
	return MeanStdValue{Mean: m, Std: s}
}

// PerturbGroup aggregates the checkpoints of one group: test accuracies and paired changes, mean ± std
// over checkpoints (the cells of Table A.8).
type PerturbGroup struct {
	Key          GroupKey        `json:"key"`
	Runs         []PerturbResult `json:"runs"`
	Full         MeanStdValue    `json:"full"`
	Reset        MeanStdValue    `json:"reset"`
	Shuffle      MeanStdValue    `json:"shuffle"`
	DeltaReset   MeanStdValue    `json:"delta_reset"`
	DeltaShuffle MeanStdValue    `json:"delta_shuffle"`
}

// PerturbReport is what Perturb returns.
type PerturbReport struct {
	ShuffleSeed uint64         `json:"shuffle_seed"`
	Groups      []PerturbGroup `json:"groups"`
}

// Perturb evaluates every run's latest checkpoint unperturbed, with its target frequencies reset and
// with them shuffled (three evaluations per run through train.EvaluateWith, with the run's dataset and
// backend), and aggregates the paired changes over the runs of each group. Runs without a target
// frequency are an error.
func Perturb(runs []*Run, opts PerturbOptions) (*PerturbReport, error) {
	seed := cmp.Or(opts.Seed, 1)
	keys, by := groupRuns(runs)
	rep := &PerturbReport{ShuffleSeed: seed}
	total, done := 3*len(runs), 0
	for _, k := range keys {
		g := PerturbGroup{Key: k}
		var full, reset, shuffle, dReset, dShuffle []float64
		for _, r := range by[k] {
			layers, err := r.layersWith(hasTarget, "target frequency")
			if err != nil {
				return nil, err
			}
			res := PerturbResult{Dir: r.Dir, Seed: r.Config.Seed}
			topts := train.Options{Backend: r.opts.Backend, Dataset: r.opts.Dataset, DataDir: r.opts.DataDir}
			for _, p := range []struct {
				name   string
				out    *PerturbEval
				modify func(*model.Scope) error
			}{
				{PerturbFull, &res.Full, nil},
				{PerturbReset, &res.Reset, func(scope *model.Scope) error { return ResetTargets(scope, layers) }},
				{PerturbShuffle, &res.Shuffle, func(scope *model.Scope) error {
					var err error
					res.Permutations, err = ShuffleTargets(scope, layers, seed)
					return err
				}},
			} {
				if opts.Progress != nil {
					opts.Progress(done, total, fmt.Sprintf("%s: %s", r.Dir, p.name))
				}
				ev, err := train.EvaluateWith(r.Dir, topts, p.modify)
				if err != nil {
					return nil, fmt.Errorf("run %s, %s: %w", r.Dir, p.name, err)
				}
				*p.out = PerturbEval{TestAcc: ev.TestAcc, ValAcc: ev.ValAcc}
				res.Epoch = ev.Epoch
				done++
			}
			res.DeltaReset = res.Reset.TestAcc - res.Full.TestAcc
			res.DeltaShuffle = res.Shuffle.TestAcc - res.Full.TestAcc
			g.Runs = append(g.Runs, res)
			full, reset, shuffle = append(full, res.Full.TestAcc), append(reset, res.Reset.TestAcc), append(shuffle, res.Shuffle.TestAcc)
			dReset, dShuffle = append(dReset, res.DeltaReset), append(dShuffle, res.DeltaShuffle)
		}
		g.Full, g.Reset, g.Shuffle = meanStdOf(full), meanStdOf(reset), meanStdOf(shuffle)
		g.DeltaReset, g.DeltaShuffle = meanStdOf(dReset), meanStdOf(dShuffle)
		rep.Groups = append(rep.Groups, g)
	}
	if opts.Progress != nil {
		opts.Progress(done, total, "done")
	}
	return rep, nil
}

// Summary returns Table A.8: one row per group, the test accuracies (%) of the full, reset and shuffled
// checkpoints and the paired changes (percentage points), mean ± std over checkpoint.
func (r *PerturbReport) Summary() Table {
	t := Table{Header: []string{"group", "checkpoints", "full_mean_pct", "full_std_pct", "reset_mean_pct", "reset_std_pct",
		"delta_reset_mean_pct", "delta_reset_std_pct", "shuffle_mean_pct", "shuffle_std_pct", "delta_shuffle_mean_pct", "delta_shuffle_std_pct"}}
	pct := func(v MeanStdValue) []string { return []string{num(100*v.Mean, 4), num(100*v.Std, 4)} }
	for _, g := range r.Groups {
		row := []string{g.Key.String(), itoa(len(g.Runs))}
		for _, v := range []MeanStdValue{g.Full, g.Reset, g.DeltaReset, g.Shuffle, g.DeltaShuffle} {
			row = append(row, pct(v)...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// Long returns one row per checkpoint: test accuracies (fractions) and paired changes.
func (r *PerturbReport) Long() Table {
	t := Table{Header: []string{"dataset", "model", "m", "width", "seed", "dir", "epoch", "full_test_acc", "reset_test_acc",
		"shuffle_test_acc", "delta_reset", "delta_shuffle"}}
	for _, g := range r.Groups {
		for _, p := range g.Runs {
			t.Rows = append(t.Rows, []string{g.Key.Dataset, g.Key.Model, itoa(g.Key.M), itoa(g.Key.Width), fmt.Sprint(p.Seed),
				p.Dir, itoa(p.Epoch), num(p.Full.TestAcc, 6), num(p.Reset.TestAcc, 6), num(p.Shuffle.TestAcc, 6),
				num(p.DeltaReset, 6), num(p.DeltaShuffle, 6)})
		}
	}
	return t
}
