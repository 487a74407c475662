package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/events"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
	"github.com/gomlx/gomlx/ml/train/optimizer"
)

// Options are the parts of a run that are not hyperparameters.
type Options struct {
	// Dir is the run's directory: checkpoints and result.json. Empty means nothing is written (no
	// checkpoints, no resume).
	Dir string
	// Resume continues from the latest checkpoint in Dir, with the configuration stored in it (the
	// Config passed to TrainModel is then ignored). Without a checkpoint, training starts afresh.
	// Without Resume, a Dir that already holds a checkpoint is an error (ErrRunExists).
	Resume bool
	// Backend computes the graphs (required); the caller chooses it (package xla does for the CLI and the
	// notebooks). BackendName names it in result files (e.g. "xla:cpu"); empty means Backend.Name().
	Backend     compute.Backend
	BackendName string
	// Dataset, when not nil, is used instead of loading Config.Dataset by name.
	Dataset *data.Dataset
	// DataDir is where dataset readers look for files (data.Options.Dir).
	DataDir string
	// Progress receives progress events; nil means none.
	Progress ProgressFunc
	// Warn receives one line for each corrupt checkpoint that a resume skips (see LoadCheckpoint); nil
	// means none.
	Warn func(line string)
	// ExtendEpochs, with Resume, trains a run on to this many epochs when the saved configuration has
	// fewer: the cosine learning-rate schedule then spans the new total from the next step on, so the
	// result differs from a run started with that many epochs. Zero or fewer: the saved number.
	ExtendEpochs int
	// SkipNonFiniteGradients, when true, skips the update of a training step whose gradients hold a NaN
	// or an infinity while its loss is finite (the backward pass overflowed), records the step in its
	// epoch's SkippedSteps, reports it through Warn, and trains on; when false (the default) such a step
	// stops the run with a *NaNError. The released code applies every update, so a run that skips a step
	// departs from it from that step on (Adam's step counter does not advance on a skipped step). A loss
	// that is not finite stops the run either way.
	SkipNonFiniteGradients bool
	// Engine, when not empty, is the engine of package fits/step (a name of Executors) with which
	// Evaluate and EvaluateWith measure a checkpoint instead of the one its configuration names
	// (Config.Executor); every engine gives the same numbers up to float32 rounding. Training ignores it:
	// a run's engine is Config.Executor.
	Engine string
}

// ErrRunExists is returned when Options.Dir already holds a run and Options.Resume is false.
var ErrRunExists = errors.New("run directory already holds a checkpoint")

// NaNError is returned when the training loss becomes NaN or infinite. The checkpoint of the last finished
// epoch (if any) is left intact; nothing of the failed epoch is saved.
type NaNError struct {
	Epoch, Step int    // 1-based epoch and step where the loss or a gradient was not finite
	Dir         string // run directory ("" if none)
	LastGood    int    // number of the last epoch saved in Dir (0: none)
	// Gradients are the variables whose gradients held a NaN or an infinity while the loss was finite (the
	// backward pass overflowed); the step's update was not applied. Nil when the loss itself was not finite.
	Gradients []string
}

func (e *NaNError) Error() string {
	msg := fmt.Sprintf("training loss is NaN or infinite at epoch %d, step %d (try a lower learning rate)",
		e.Epoch, e.Step)
	if len(e.Gradients) > 0 {
		msg = fmt.Sprintf("the gradients of %s are NaN or infinite at epoch %d, step %d, with a finite loss: the backward pass overflowed (not applied; --skip-nonfinite-gradients skips such steps)",
			namesList(e.Gradients), e.Epoch, e.Step)
	}
	if e.Dir != "" {
		if e.LastGood > 0 {
			msg += fmt.Sprintf("; the checkpoint of epoch %d in %s is intact", e.LastGood, e.Dir)
		} else {
			msg += "; no epoch had finished, so no checkpoint was saved"
		}
	}
	return msg
}

// namesList joins variable names with commas, the first four and then how many more.
func namesList(names []string) string {
	if len(names) > 4 {
		names = append(slices.Clone(names[:4]), fmt.Sprintf("%d more", len(names)-4))
	}
	return strings.Join(names, ", ")
}

// splits are the sets a protocol trains, selects and tests on.
type splits struct {
	train, val, test *data.Set
}

func protocolSplits(cfg Config, ds *data.Dataset) (splits, error) {
	switch p := cfg.Protocol; p {
	case BestTest, FinalEpoch:
		return splits{train: ds.Train, test: ds.Test}, nil
	case ValSplit:
		sp := splits{test: ds.Test}
		var err error
		if cfg.ValSplit == ValSplitStratified {
			sp.train, sp.val = ds.Train.SplitOff(ValFraction, LegacyValSplitSeed)
		} else {
			sp.train, sp.val, err = ds.Train.OfficialSplitOff(ValSplitSeed)
		}
		return sp, err
	case OfficialVal:
		if ds.Val == nil || ds.Val.N == 0 {
			return splits{}, fmt.Errorf("dataset %q has no official validation split (use --protocol=val-split)", ds.Name)
		}
		return splits{train: ds.Train, val: ds.Val, test: ds.Test}, nil
	}
	return splits{}, fmt.Errorf("unknown protocol %q", cfg.Protocol)
}

// Network is the model of a run: the network as data (model.Net, which every engine of package fits/step
// builds its graphs from) and the number of classes.
type Network struct {
	Net     model.Net
	Classes int
}

// Build builds the network on x [batch, time, features...] in inference mode (no dropout) and returns the
// logits and the hidden spikes.
func (n Network) Build(scope *mlmodel.Scope, x *Node) model.Output {
	return n.Net.Forward(scope, x, nil)
}

// NewNetwork returns the network a configuration describes for a dataset: the feedforward network for
// inputs with flat features, the convolutional one for event frames [polarity, height, width].
func NewNetwork(cfg Config, ds *data.Dataset) (Network, error) {
	n, err := NeuronConfigFor(cfg, ds)
	if err != nil {
		return Network{}, err
	}
	readout := DefaultReadout(cfg.Dataset)
	if cfg.Readout != "" {
		if readout, err = model.ParseReadout(cfg.Readout); err != nil {
			return Network{}, err
		}
	}
	dropoutMode, err := model.ParseDropoutMode(cfg.DropoutMode)
	if err != nil {
		return Network{}, err
	}
	uniformBias := cfg.BiasInit == BiasUniform
	if fs := ds.Train.FeatureShape; len(fs) == 3 {
		// Event frames: the DVS Gesture constants of model.DefaultConvConfig (f* in [0.5, 5] Hz) with the
		// dataset's time bin.
		c := model.DefaultConvConfig(cfg.Kind(), cfg.Order())
		c.Neuron.Dt = ds.Dt
		c.Neuron = cfg.NeuronOptions(cfg.withConstants(c.Neuron))
		c.Hidden, c.Dropout, c.Classes, c.Readout = cfg.Width, cfg.Dropout, ds.Classes, readout
		net, err := c.Net(fs)
		if err != nil {
			return Network{}, err
		}
		net.DropoutMode, net.UniformBias = dropoutMode, uniformBias
		return Network{Net: net, Classes: ds.Classes}, nil
	}
	c := model.DefaultConfig(cfg.Kind(), cfg.Order(), cfg.Width, ds.Classes)
	c.Neuron, c.Dropout, c.Readout = n, cfg.Dropout, readout
	c.DropoutMode, c.UniformBias = dropoutMode, uniformBias
	if err := c.Validate(); err != nil {
		return Network{}, err
	}
	return Network{Net: c.Net(ds.Train.F), Classes: ds.Classes}, nil
}

// modelScope is the scope of the network's variables.
const modelScope = "model"

// runner holds what a run needs between steps: the step engine that computes gradients and evaluates, the
// optimizer that applies them (created at the first training step) and the dropout mask sampler.
type runner struct {
	// badGradients are the variables whose gradients the last trainStep found not finite (nonFinite).
	badGradients []string
	// skipNonFinite and warn are Options.SkipNonFiniteGradients and Options.Warn.
	skipNonFinite bool
	warn          func(line string)
	cfg           Config
	sp            splits
	net           Network
	scope         *mlmodel.Scope
	backend       compute.Backend
	engine        step.Engine
	opt           *step.Optimizer
	masks         *step.Masks
	steps         int // training steps per epoch
	// The batch: tensors allocated once and written in place by fill ([batch, time, features], [batch],
	// [batch]), so that a step allocates no batch-sized garbage. With events (an engine that takes the
	// input as events, on spikes, counts or pixels) x is nil: no dense input is ever made.
	x, labels, mask *tensors.Tensor
	events          *step.InputEvents
}

// newEngine builds the runner's engine: step.New (a variable so that a test can wrap the engine).
var newEngine = step.New

// newRunner creates (or, after loading a checkpoint, reads) the network's variables and the engine.
func newRunner(cfg Config, sp splits, net Network, scope *mlmodel.Scope, b compute.Backend) (*runner, error) {
	r := &runner{cfg: cfg, sp: sp, net: net, scope: scope, backend: b}
	r.cfg.Batch = effectiveBatch(cfg, sp) // never a buffer larger than every split
	r.steps = (sp.train.N + cfg.Batch - 1) / cfg.Batch
	r.labels = tensors.FromShape(shapes.Make(dtypes.Int32, cfg.Batch))
	r.mask = tensors.FromShape(shapes.Make(dtypes.Float32, cfg.Batch))
	mctx := scope.At("%s", modelScope)
	if err := step.InitVariables(b, mctx, net.Net); err != nil {
		return nil, err
	}
	var err error
	if r.engine, err = newEngine(cfg.Executor, b, mctx, net.Net, step.Options{Chunk: cfg.Chunk}); err != nil {
		if unsupported := (*step.UnsupportedError)(nil); errors.As(err, &unsupported) {
			return nil, &InputError{Err: err}
		}
		return nil, err
	}
	if r.masks, err = step.NewMasks(b, scope, net.Net, cfg.Seed); err != nil {
		r.close()
		return nil, err
	}
	dims := append([]int{cfg.Batch}, sp.train.Shape()...) // the batch buffers hold cfg.Batch rows, as labels and mask
	if step.AcceptsInputEvents(r.engine) && sp.train.Encoding() != data.Float32 {
		r.events = &step.InputEvents{Dims: dims}
	} else {
		r.x = tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
	}
	return r, nil
}

// close frees the compiled graphs and the batch tensors.
func (r *runner) close() {
	for _, t := range []*tensors.Tensor{r.x, r.labels, r.mask} {
		if t != nil {
			t.MustFinalizeAll()
		}
	}
	if r.engine != nil {
		r.engine.Close()
	}
	if r.opt != nil {
		r.opt.Close()
	}
	if r.masks != nil {
		r.masks.Close()
	}
}

// batch returns the batch: the runner's buffers, which fill writes.
func (r *runner) batch() step.Batch {
	return step.Batch{X: r.x, Events: r.events, Labels: r.labels, Mask: r.mask}
}

// freeBatch frees what a step added to the runner's batch (the dropout masks); the batch tensors stay.
func freeBatch(b step.Batch) {
	for _, t := range b.Dropout {
		t.MustFinalizeAll()
	}
}

// trainStep runs one training step on the batch buffers: dropout masks, the engine's gradients, and the
// optimizer's update. It returns the step's metrics and the learning rate used.
func (r *runner) trainStep() (step.Metrics, float64, error) {
	if r.opt == nil {
		var err error
		if r.opt, err = step.NewOptimizer(r.backend, r.scope, r.cfg.LR, r.steps*r.cfg.Epochs); err != nil {
			return step.Metrics{}, 0, err
		}
		r.opt.Scales = r.cfg.TargetScales()
		r.opt.Epsilon = r.cfg.AdamEpsilon
		if r.cfg.LRSchedule == ScheduleEpoch {
			r.opt.EpochSteps = r.steps
		}
		if r.opt.Guard, err = guardCaps(r.cfg, r.net); err != nil {
			return step.Metrics{}, 0, err
		}
	}
	b := r.batch()
	defer func() { freeBatch(b) }() // with the masks Draw adds
	var err error
	// The masks of the optimizer's next step: Adam's global step counts the updates of the whole run and is
	// saved with the checkpoints, so a resumed run draws the masks an uninterrupted one would.
	if err = r.masks.Draw(&b, optimizer.GetGlobalStep(r.scope)); err != nil {
		return step.Metrics{}, 0, err
	}
	m, grads, err := r.engine.Gradients(b)
	if err != nil {
		return m, 0, err
	}
	defer func() {
		for _, g := range grads {
			g.MustFinalizeAll()
		}
	}()
	if r.badGradients = nonFinite(grads); len(r.badGradients) > 0 {
		return m, 0, nil // the update would write them into the variables
	}
	lr, err := r.opt.Apply(grads)
	return m, lr, err
}

// nonFinite returns the paths, sorted, of the gradients that hold a NaN or an infinity.
func nonFinite(grads map[string]*tensors.Tensor) []string {
	var bad []string
	for path, g := range grads {
		if g.DType() == dtypes.Float32 {
			_ = tensors.ConstFlatData(g, func(flat []float32) {
				if slices.ContainsFunc(flat, func(v float32) bool { return math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) }) {
					bad = append(bad, path)
				}
			})
		}
	}
	slices.Sort(bad)
	return bad
}

// guardCaps returns the frequency guard's caps of cfg's run on net by target-variable name
// (step.Optimizer.Guard), nil when the run has no guard or no layer with a trainable target frequency; a
// safety fraction that leaves no target frequency is an error.
func guardCaps(cfg Config, net Network) (map[string]float64, error) {
	if cfg.FreqGuardSafety == 0 {
		return nil, nil
	}
	caps := map[string]float64{}
	for _, b := range net.Net.Blocks {
		n := b.Neuron
		if !n.Kind.HasTargetFrequency() {
			continue
		}
		_, c, err := n.GuardCap(cfg.FreqGuardSafety)
		if err != nil {
			return nil, err
		}
		name := neuron.TargetVariable(n)
		if old, ok := caps[name]; ok && old != c {
			return nil, fmt.Errorf("frequency guard: layers with different caps (%g, %g) share the variable name %s", old, c, name)
		}
		caps[name] = c
	}
	return caps, nil
}

// fill copies the examples idx of set into the batch buffers; the rest of the batch repeats the first
// example with mask 0. It returns the number of valid examples.
func (r *runner) fill(set *data.Set, idx []int) int {
	src := func(j int) int { // the example in row j of the batch
		if j < len(idx) {
			return idx[j]
		}
		return idx[0]
	}
	batch := r.labels.Shape().Size()
	tensors.MustMutableFlatData(r.labels, func(labels []int32) {
		tensors.MustMutableFlatData(r.mask, func(mask []float32) {
			for j := range batch {
				labels[j], mask[j] = set.Labels[src(j)], 0
				if j < len(idx) {
					mask[j] = 1
				}
			}
		})
	})
	if r.events != nil {
		s := events.Shape{Rows: batch * set.T, In: set.F, Out: r.net.Net.Blocks[0].OutDims[0]}
		if err := events.Record(s, &r.events.Rec, func(row int, ix []int32, vals []float32) ([]int32, []float32) {
			return set.AppendEvents(src(row/set.T), row%set.T, ix, vals)
		}); err != nil {
			panic(err) // data.Set.AppendEvents writes increasing positions in [0, F)
		}
		return len(idx)
	}
	n := set.T * set.F
	tensors.MustMutableFlatData(r.x, func(x []float32) {
		for j := range batch {
			set.ExampleInto(src(j), x[j*n:(j+1)*n])
		}
	})
	return len(idx)
}

// compileSeconds estimates the time spent building and compiling graphs (engine and optimizer).
func (r *runner) compileSeconds() float64 {
	s := r.engine.CompileSeconds()
	if r.opt != nil {
		s += r.opt.CompileSeconds()
	}
	return s
}

// epochOrder returns the order of the training examples in an epoch: a permutation drawn from the run's
// seed and the epoch number only, so a resumed run visits the examples in the same order.
func epochOrder(n int, seed int64, epoch int) []int {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xe90c<<32|uint64(epoch)))
	return rng.Perm(n)
}

// trainEpoch runs the training steps of one epoch (0-based epoch).
func (r *runner) trainEpoch(epoch int, started time.Time, progress ProgressFunc) (Epoch, *NaNError, error) {
	order := epochOrder(r.sp.train.N, r.cfg.Seed, epoch)
	var sumLoss, sumCorrect float64
	sumRates := make([]float64, 0)
	seen := 0
	lr := 0.0
	var skipped []int
	for step := range r.steps {
		lo := step * r.cfg.Batch
		hi := min(lo+r.cfg.Batch, len(order))
		n := r.fill(r.sp.train, order[lo:hi])
		m, stepLR, err := r.trainStep()
		if err != nil {
			return Epoch{}, nil, err
		}
		if math.IsNaN(m.LossSum) || math.IsInf(m.LossSum, 0) {
			return Epoch{}, &NaNError{Epoch: epoch + 1, Step: step + 1}, nil
		}
		if len(r.badGradients) > 0 {
			if !r.skipNonFinite {
				return Epoch{}, &NaNError{Epoch: epoch + 1, Step: step + 1, Gradients: r.badGradients}, nil
			}
			skipped = append(skipped, step+1)
			r.warn(fmt.Sprintf("epoch %d, step %d: the gradients of %s are NaN or infinite with a finite loss: update skipped",
				epoch+1, step+1, namesList(r.badGradients)))
		} else {
			lr = stepLR // a skipped step applied no learning rate (trainStep returns 0)
		}
		sumLoss += m.LossSum
		sumCorrect += m.Correct
		if len(sumRates) == 0 {
			sumRates = make([]float64, len(m.Rates))
		}
		for i := range sumRates {
			sumRates[i] += m.Rates[i]
		}
		seen += n
		progress(Progress{Phase: PhaseStep, Epoch: epoch + 1, Epochs: r.cfg.Epochs, Step: step + 1,
			Steps: r.steps, Loss: sumLoss / float64(seen), Acc: sumCorrect / float64(seen),
			FiringRates: scale(sumRates, 1/float64(seen)), Elapsed: time.Since(started)})
	}
	return Epoch{
		Epoch:         epoch + 1,
		Loss:          sumLoss / float64(seen),
		TrainAcc:      sumCorrect / float64(seen),
		FiringRates:   scale(sumRates, 1/float64(seen)),
		LR:            lr,
		FreqProjected: r.opt.Projections(),
		SkippedSteps:  skipped,
	}, nil, nil
}

// evaluate returns the mean loss, the accuracy and the mean firing rates of the network on set.
func (r *runner) evaluate(set *data.Set) (loss, acc float64, rates []float64, err error) {
	var sumLoss, sumCorrect float64
	var sumRates []float64
	idx := make([]int, 0, r.cfg.Batch)
	for lo := 0; lo < set.N; lo += r.cfg.Batch {
		idx = idx[:0]
		for i := lo; i < min(lo+r.cfg.Batch, set.N); i++ {
			idx = append(idx, i)
		}
		r.fill(set, idx)
		b := r.batch()
		m, err := r.engine.Evaluate(b)
		freeBatch(b)
		if err != nil {
			return 0, 0, nil, err
		}
		sumLoss += m.LossSum
		sumCorrect += m.Correct
		if sumRates == nil {
			sumRates = make([]float64, len(m.Rates))
		}
		for i := range sumRates {
			sumRates[i] += m.Rates[i]
		}
	}
	n := float64(set.N)
	return sumLoss / n, sumCorrect / n, scale(sumRates, 1/n), nil
}

func scale(v []float64, s float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * s
	}
	return out
}

// loadRunData loads the dataset of a run (LoadDataset), splits it by the run's protocol and checks
// that the run fits it (checkRun); a protocol the dataset cannot serve is an InputError.
func loadRunData(cfg Config, opts Options) (*data.Dataset, splits, error) {
	ds, err := LoadDataset(cfg, opts)
	if err != nil {
		return nil, splits{}, err
	}
	sp, err := protocolSplits(cfg, ds)
	if err != nil {
		return nil, splits{}, &InputError{Err: err}
	}
	if err := checkRun(cfg, ds, sp); err != nil {
		return nil, splits{}, err
	}
	return ds, sp, nil
}

// backendOf returns the backend of opts and its name for result files (Options.BackendName, else the
// backend's own name). Libraries do not choose a backend: the caller (the CLI, a notebook) does.
func backendOf(opts Options) (compute.Backend, string, error) {
	if opts.Backend == nil {
		return nil, "", errors.New("train: no backend given (Options.Backend)")
	}
	name := opts.BackendName
	if name == "" {
		name = opts.Backend.Name()
	}
	return opts.Backend, name, nil
}

// loadContext returns a root scope with the random number generator seeded from seed and no configuration:
// a checkpoint loaded into it brings its own hyperparameters, and the keys it lacks stay missing.
func loadContext(seed int64) (*mlmodel.Scope, error) {
	scope := mlmodel.NewStore().RootScope()
	scope.SetParam(mlmodel.ParamInitialSeed, seed)
	if err := scope.Store().SetRNGStateFromSeed(seed); err != nil {
		return nil, err
	}
	return scope, nil
}

// TrainModel trains the network that cfg describes and returns its result; with opts.Dir it saves a
// checkpoint after every epoch and writes result.json at the end. A run is deterministic for a
// configuration and backend, and a run resumed from a checkpoint ends with the same result as an
// uninterrupted one (wall times aside). A NaN or infinite loss stops training with a *NaNError.
func TrainModel(cfg Config, opts Options) (*Result, error) {
	started := time.Now()
	if opts.Progress == nil {
		opts.Progress = func(Progress) {}
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	cfg = cfg.Resolved()
	// A resumed run's hyperparameters come from its checkpoint alone (keys it lacks mean the semantics it
	// was trained with, see ConfigFromContext): the store gets cfg's only when no checkpoint is loaded.
	scope, err := loadContext(cfg.Seed)
	if err != nil {
		return nil, err
	}
	var (
		loaded *checkpoint.Handler // the checkpoint resumed from
		from   *inspected
	)
	if opts.Dir != "" {
		loaded, from, err = openCheckpoints(scope, opts)
		if err != nil {
			return nil, err
		}
		if from != nil {
			if cfg, err = resumedConfig(scope, opts); err != nil {
				return nil, err
			}
		}
	}
	resumed := from != nil
	if !resumed {
		cfg.SetParams(scope)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	history, wallBefore, err := loadState(scope)
	if err != nil {
		return nil, err
	}
	segmentsBefore, err := loadSegments(scope, len(history), wallBefore)
	if err != nil {
		return nil, err
	}
	if resumed && len(history) >= cfg.Epochs {
		// A finished run: its result.json stands as it is (nothing is trained, compiled or rewritten);
		// only a missing or unreadable one is written again below.
		if r, err := ReadResult(opts.Dir); err == nil && len(r.Epochs) == len(history) {
			return r, nil
		}
	}
	if opts.Dataset == nil { // a dataset handed over is checked as it is, by NewNetwork
		if err := CheckConstants(cfg); err != nil {
			return nil, err
		}
	}
	ds, sp, err := loadRunData(cfg, opts)
	if err != nil {
		return nil, err
	}
	net, err := NewNetwork(cfg, ds)
	if err != nil {
		return nil, &InputError{Err: err} // the configuration's constants do not fit the dataset
	}
	if _, err := guardCaps(cfg, net); err != nil {
		return nil, &InputError{Err: err}
	}
	b, backendName, err := backendOf(opts)
	if err != nil {
		return nil, err
	}
	progress := opts.Progress
	if resumed {
		progress(Progress{Phase: PhaseResumed, Epoch: len(history), Epochs: cfg.Epochs,
			Message: fmt.Sprintf("resuming %s after epoch %d of %d", opts.Dir, len(history), cfg.Epochs)})
	}
	r, err := newRunner(cfg, sp, net, scope, b)
	if err != nil {
		if resumed {
			if bad := diagnoseModelVariables(b, net, from.name, string(from.jsonData)); bad != nil {
				return nil, bad
			}
		}
		return nil, err
	}
	defer r.close()
	r.skipNonFinite, r.warn = opts.SkipNonFiniteGradients, opts.Warn
	if resumed {
		if err := checkModelNames(scope.Store(), from.name, string(from.jsonData)); err != nil {
			return nil, err
		}
	}
	res := &Result{
		Dataset: cfg.Dataset, Model: cfg.Model, M: cfg.M, Width: cfg.Width, Seed: cfg.Seed,
		Backend: backendName, Engine: r.engine.Name(), Protocol: cfg.Protocol, Classes: ds.Classes, Config: cfg,
		Semantics: cfg.Semantics(),
	}
	segment := newSegment(len(history)+1, started, backendName, res.Engine)
	if len(history) < cfg.Epochs {
		progress(Progress{Phase: PhaseCompile, Epoch: len(history) + 1, Epochs: cfg.Epochs,
			Message: fmt.Sprintf("compiling %s (%s, M=%d, width %d) on %s ...", cfg.Model, cfg.Dataset, cfg.M,
				cfg.Width, backendName)})
	}

	for epoch := len(history); epoch < cfg.Epochs; epoch++ {
		epochStart := time.Now()
		ep, nanErr, err := r.trainEpoch(epoch, started, progress)
		if err != nil {
			return nil, err
		}
		if nanErr != nil {
			nanErr.Dir, nanErr.LastGood = opts.Dir, len(history)
			if opts.Dir == "" {
				nanErr.LastGood = 0
			}
			return nil, nanErr
		}
		progress(Progress{Phase: PhaseEval, Epoch: epoch + 1, Epochs: cfg.Epochs, Elapsed: time.Since(started)})
		// The selection split (validation, else test) is evaluated once: its accuracy and its firing
		// rates without dropout.
		if sp.val != nil {
			_, acc, rates, err := r.evaluate(sp.val)
			if err != nil {
				return nil, err
			}
			ep.ValAcc, ep.EvalFiringRates = &acc, rates
		}
		var testRates []float64
		if _, ep.TestAcc, testRates, err = r.evaluate(sp.test); err != nil {
			return nil, err
		}
		if sp.val == nil {
			ep.EvalFiringRates = testRates
		}
		ep.Seconds = time.Since(epochStart).Seconds()
		history = append(history, ep)
		segment.LastEpoch, segment.WallSeconds = epoch+1, time.Since(started).Seconds()
		if opts.Dir != "" {
			if err := storeState(scope, history, wallBefore+time.Since(started).Seconds()); err != nil {
				return nil, err
			}
			if err := storeSegments(scope, withSegment(segmentsBefore, segment)); err != nil {
				return nil, err
			}
			scope.SetParam(paramParameterCount, model.CountParams(scope.At("%s", modelScope)))
			if err := saveCheckpoint(scope.Store(), opts.Dir, loaded); err != nil {
				return nil, fmt.Errorf("saving checkpoint of epoch %d: %w", epoch+1, err)
			}
		}
		e := ep
		progress(Progress{Phase: PhaseEpoch, Epoch: epoch + 1, Epochs: cfg.Epochs, Result: &e, Elapsed: time.Since(started)})
	}
	if n := model.CountParams(scope.At("%s", modelScope)); n > 0 {
		res.ParameterCount = n
	} else {
		// Nothing was built in this segment (a finished run resumed): use the count saved with it.
		res.ParameterCount = mlmodel.GetParamOr(scope, paramParameterCount, 0)
	}
	res.Epochs = history
	res.summarize()
	res.WallSeconds = wallBefore + time.Since(started).Seconds()
	if segment.LastEpoch >= segment.FirstEpoch {
		segment.WallSeconds = time.Since(started).Seconds()
	}
	res.setSegments(withSegment(segmentsBefore, segment))
	res.CompileSeconds = r.compileSeconds()
	if opts.Dir != "" {
		if err := WriteResult(opts.Dir, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}
