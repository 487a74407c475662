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
	"github.com/fits-snn/fits/fits/chunked"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers/cosineschedule"
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
	// Backend computes the graphs; nil means xla.Backend().
	Backend backends.Backend
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
}

// ErrRunExists is returned when Options.Dir already holds a run and Options.Resume is false.
var ErrRunExists = errors.New("run directory already holds a checkpoint")

// NaNError is returned when the training loss becomes NaN or infinite. The checkpoint of the last finished
// epoch (if any) is left intact; nothing of the failed epoch is saved.
type NaNError struct {
	Epoch, Step int    // 1-based epoch and step where the loss was not finite
	Dir         string // run directory ("" if none)
	LastGood    int    // number of the last epoch saved in Dir (0: none)
}

func (e *NaNError) Error() string {
	msg := fmt.Sprintf("training loss is NaN or infinite at epoch %d, step %d (try a lower learning rate)",
		e.Epoch, e.Step)
	if e.Dir != "" {
		if e.LastGood > 0 {
			msg += fmt.Sprintf("; the checkpoint of epoch %d in %s is intact", e.LastGood, e.Dir)
		} else {
			msg += "; no epoch had finished, so no checkpoint was saved"
		}
	}
	return msg
}

// splits are the sets a protocol trains, selects and tests on.
type splits struct {
	train, val, test *data.Set
}

func protocolSplits(p Protocol, ds *data.Dataset) (splits, error) {
	switch p {
	case BestTest:
		return splits{train: ds.Train, test: ds.Test}, nil
	case ValSplit:
		kept, held := ds.Train.SplitOff(ValFraction, ValSplitSeed)
		return splits{train: kept, val: held, test: ds.Test}, nil
	case OfficialVal:
		if ds.Val == nil || ds.Val.N == 0 {
			return splits{}, fmt.Errorf("dataset %q has no official validation split (use --protocol=val-split)", ds.Name)
		}
		return splits{train: ds.Train, val: ds.Val, test: ds.Test}, nil
	}
	return splits{}, fmt.Errorf("unknown protocol %q", p)
}

// Network is the model of a run: a graph-building function from inputs [batch, time, features...] to
// logits and hidden spikes, and the number of classes.
type Network struct {
	Build   func(ctx *context.Context, x *Node) model.Output
	Classes int
}

// NewNetwork returns the network a configuration describes for a dataset: the feedforward network for
// inputs with flat features, the convolutional one for event frames [polarity, height, width].
func NewNetwork(cfg Config, ds *data.Dataset) (Network, error) {
	n, err := NeuronConfig(cfg.Kind(), cfg.M, ds)
	if err != nil {
		return Network{}, err
	}
	readout := model.ReadoutMean
	if cfg.Readout != "" {
		if readout, err = model.ParseReadout(cfg.Readout); err != nil {
			return Network{}, err
		}
	}
	if fs := ds.Train.FeatureShape; len(fs) == 3 {
		// Event frames: the DVS Gesture constants of model.DefaultConvConfig (f* in [0.5, 5] Hz) with the
		// dataset's time bin.
		c := model.DefaultConvConfig(cfg.Kind(), cfg.M)
		c.Neuron.Dt = ds.Dt
		c.Hidden, c.Dropout, c.Classes, c.Readout = cfg.Width, cfg.Dropout, ds.Classes, readout
		if err := c.Validate(); err != nil {
			return Network{}, err
		}
		return Network{Classes: ds.Classes, Build: func(ctx *context.Context, x *Node) model.Output {
			return model.Conv(ctx, c, x)
		}}, nil
	}
	c := model.DefaultConfig(cfg.Kind(), cfg.M, cfg.Width, ds.Classes)
	c.Neuron, c.Dropout, c.Readout = n, cfg.Dropout, readout
	if err := c.Validate(); err != nil {
		return Network{}, err
	}
	return Network{Classes: ds.Classes, Build: func(ctx *context.Context, x *Node) model.Output {
		return model.FeedForward(ctx, c, x)
	}}, nil
}

// modelScope is the context scope of the network's variables.
const modelScope = "model"

// stepOutputs are the values a training or evaluation step returns, summed over the batch's valid
// examples: the cross-entropy, the number of correct predictions and, per hidden layer, the mean firing
// rate of each example.
type stepOutputs struct {
	loss, correct float64
	rates         []float64
	lr            float64
}

// lossAndMetrics builds, from logits [batch, classes], labels [batch] (int32) and mask [batch] (1 for real
// examples, 0 for padding): the summed cross-entropy, the number of correct predictions and the summed
// per-example firing rate of each layer.
func lossAndMetrics(out model.Output, labels, mask *Node, classes int) (lossSum, correct *Node, rates []*Node) {
	logits := out.Logits
	ce := Neg(ReduceSum(Mul(OneHot(labels, classes, logits.DType()), LogSoftmax(logits, -1)), -1)) // [batch]
	lossSum = ReduceAllSum(Mul(ce, mask))
	hit := ConvertDType(Equal(ArgMax(logits, -1, dtypes.Int32), labels), mask.DType())
	correct = ReduceAllSum(Mul(hit, mask))
	for _, s := range out.Spikes {
		axes := make([]int, s.Rank()-1)
		for i := range axes {
			axes[i] = i + 1
		}
		rates = append(rates, ReduceAllSum(Mul(ReduceMean(s, axes...), mask)))
	}
	return
}

// runner holds what a run needs between steps.
type runner struct {
	cfg       Config
	ds        *data.Dataset
	sp        splits
	net       Network
	ctx       *context.Context
	backend   backends.Backend
	trainExec *context.Exec
	evalExec  *context.Exec
	steps     int // training steps per epoch
	// With Config.Executor "chunked": the spec of the chunked executor, the executor (created at the
	// first step, once the variables exist), the Adam update graph taking the gradients as inputs, and
	// the gradients' variable names in its input order.
	chunkSpec  *chunked.Spec
	chunkExec  *chunked.Executor
	updateExec *context.Exec
	gradNames  []string
	times      execTimes
	// totalSteps is the length of the cosine schedule: steps per epoch × epochs.
	totalSteps int
	// Batch buffers.
	x      []float32
	labels []int32
	mask   []float32
	dims   []int
}

func newRunner(cfg Config, ds *data.Dataset, sp splits, net Network, ctx *context.Context, b backends.Backend) (*runner, error) {
	r := &runner{cfg: cfg, ds: ds, sp: sp, net: net, ctx: ctx, backend: b, times: execTimes{}}
	r.steps = (sp.train.N + cfg.Batch - 1) / cfg.Batch
	totalSteps := r.steps * cfg.Epochs
	set := sp.train
	r.x = make([]float32, cfg.Batch*set.T*set.F)
	r.labels = make([]int32, cfg.Batch)
	r.mask = make([]float32, cfg.Batch)
	r.dims = append([]int{cfg.Batch}, set.Shape()...)
	r.totalSteps = totalSteps
	var err error
	if cfg.Executor == ExecutorChunked {
		if len(set.FeatureShape) == 3 {
			return nil, fmt.Errorf("executor chunked supports only the feedforward network, not event frames %v (use --executor=unrolled)", set.FeatureShape)
		}
		n, err := NeuronConfig(cfg.Kind(), cfg.M, ds)
		if err != nil {
			return nil, err
		}
		mc := model.DefaultConfig(cfg.Kind(), cfg.M, cfg.Width, ds.Classes)
		r.chunkSpec = &chunked.Spec{Layers: mc.Layers, Width: cfg.Width, Neuron: n, Classes: ds.Classes}
		r.updateExec, err = context.NewExec(b, ctx, r.updateGraph)
		if err != nil {
			return nil, err
		}
	} else {
		r.trainExec, err = context.NewExec(b, ctx, r.trainGraph)
		if err != nil {
			return nil, err
		}
	}
	r.evalExec, err = context.NewExec(b, ctx, func(ctx *context.Context, x, labels, mask *Node) []*Node {
		ctx = ctx.Checked(false)
		ctx.SetTraining(x.Graph(), false)
		out := net.Build(ctx.In(modelScope), x)
		lossSum, correct, rates := lossAndMetrics(out, labels, mask, net.Classes)
		return append([]*Node{lossSum, correct}, rates...)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// trainGraph builds one training step: forward pass in training mode, masked mean cross-entropy, cosine
// learning rate and Adam update. It returns the summed loss, the number of correct predictions, the
// learning rate used and the summed firing rates per layer. Graphs run unchecked: the variables may already
// exist (built by another graph, or loaded from a checkpoint), and are created otherwise.
func (r *runner) trainGraph(ctx *context.Context, x, labels, mask *Node) []*Node {
	ctx = ctx.Checked(false)
	g := x.Graph()
	ctx.SetTraining(g, true)
	out := r.net.Build(ctx.In(modelScope), x)
	lossSum, correct, rates := lossAndMetrics(out, labels, mask, r.net.Classes)
	loss := Div(lossSum, MaxScalar(ReduceAllSum(mask), 1))
	lr := r.cfg.LR
	cosineschedule.New(ctx, g, dtypes.Float32).PeriodSteps(r.totalSteps).LearningRate(lr).Done()
	optimizers.Adam().LearningRate(lr).Done().UpdateGraph(ctx, g, loss)
	lrNow := optimizers.LearningRateVar(ctx, dtypes.Float32, lr).ValueGraph(g)
	return append([]*Node{lossSum, correct, lrNow}, rates...)
}

// updateGraph applies one Adam step from the gradients given as inputs (in the order of r.gradNames),
// with the learning rate of trainGraph's cosine schedule, and returns the learning rate used.
func (r *runner) updateGraph(ctx *context.Context, grads []*Node) *Node {
	ctx = ctx.Checked(false)
	g := grads[0].Graph()
	byName := make(map[string]*Node, len(grads))
	for i, name := range r.gradNames {
		byName[name] = grads[i]
	}
	// The optimizer expects the gradients in the order it visits the trainable variables in use by the
	// graph: that of ctx.IterVariables.
	var ordered []*Node
	for v := range ctx.IterVariables() {
		if !v.Trainable {
			continue
		}
		grad, ok := byName[v.ScopeAndName()]
		if !ok {
			panic(fmt.Errorf("train: no gradient for the trainable variable %s", v.ScopeAndName()))
		}
		v.ValueGraph(g)
		ordered = append(ordered, grad)
	}
	if len(ordered) != len(grads) {
		panic(fmt.Errorf("train: %d gradients for %d trainable variables", len(grads), len(ordered)))
	}
	lr := r.cfg.LR
	cosineschedule.New(ctx, g, dtypes.Float32).PeriodSteps(r.totalSteps).LearningRate(lr).Done()
	opt, ok := optimizers.Adam().LearningRate(lr).Done().(interface {
		UpdateGraphWithGradients(ctx *context.Context, grads []*Node, lossDType dtypes.DType)
	})
	if !ok {
		panic(errors.New("train: the Adam optimizer cannot take precomputed gradients"))
	}
	opt.UpdateGraphWithGradients(ctx, ordered, dtypes.Float32)
	return optimizers.LearningRateVar(ctx, dtypes.Float32, lr).ValueGraph(g)
}

// chunkedStep runs one training step with the chunked executor on the batch buffers and returns the
// values trainGraph returns: loss sum, correct count, learning rate and the summed firing rates.
func (r *runner) chunkedStep() ([]float64, error) {
	start := time.Now()
	if len(chunked.TrainableIn(r.ctx, r.ctx.In(modelScope).Scope())) == 0 {
		// Create and initialize the variables as the unrolled path would (the same initializers, drawn
		// in the same order), by running the evaluation graph once.
		if _, err := r.exec(r.evalExec); err != nil {
			return nil, err
		}
		start = time.Now()
	}
	if r.chunkExec == nil {
		var err error
		if r.chunkExec, err = chunked.New(r.backend, r.ctx.In(modelScope), *r.chunkSpec); err != nil {
			return nil, err
		}
	}
	x := tensors.FromFlatDataAndDimensions(append([]float32(nil), r.x...), r.dims...)
	labels := tensors.FromFlatDataAndDimensions(append([]int32(nil), r.labels...), len(r.labels))
	mask := tensors.FromFlatDataAndDimensions(append([]float32(nil), r.mask...), len(r.mask))
	defer func() {
		x.MustFinalizeAll()
		labels.MustFinalizeAll()
		mask.MustFinalizeAll()
	}()
	res, err := r.chunkExec.Step(x, labels, mask)
	if err != nil {
		return nil, err
	}
	if r.gradNames == nil {
		for name := range res.Grads {
			r.gradNames = append(r.gradNames, name)
		}
		slices.Sort(r.gradNames)
	}
	args := make([]any, len(r.gradNames))
	for i, name := range r.gradNames {
		t, ok := res.Grads[name]
		if !ok {
			return nil, fmt.Errorf("train: the chunked step returned no gradient for %s", name)
		}
		args[i] = t
	}
	outs, err := r.updateExec.Exec(args...)
	for _, t := range res.Grads {
		t.MustFinalizeAll()
	}
	if err != nil {
		return nil, err
	}
	lr, err := tensors.CopyFlatData[float32](outs[0])
	if err != nil {
		return nil, err
	}
	outs[0].MustFinalizeAll()
	r.times[r.updateExec] = append(r.times[r.updateExec], time.Since(start))
	return append([]float64{res.LossSum, res.Correct, float64(lr[0])}, res.Rates...), nil
}

// trainStep runs one training step with the configured executor on the batch buffers.
func (r *runner) trainStep() ([]float64, error) {
	if r.chunkSpec != nil {
		return r.chunkedStep()
	}
	return r.exec(r.trainExec)
}

// fill copies the examples idx of set into the batch buffers; the rest of the batch repeats the first
// example with mask 0. It returns the number of valid examples.
func (r *runner) fill(set *data.Set, idx []int) int {
	n := set.T * set.F
	for j := range r.labels {
		src := idx[0]
		r.mask[j] = 0
		if j < len(idx) {
			src = idx[j]
			r.mask[j] = 1
		}
		copy(r.x[j*n:(j+1)*n], set.Example(src))
		r.labels[j] = set.Labels[src]
	}
	return len(idx)
}

// execTimes records the wall time of each call of an executor; the first call includes building and
// compiling the graph.
type execTimes map[*context.Exec][]time.Duration

// compileSeconds estimates the time spent building and compiling graphs: for each executor, its first
// call's time minus the median of the later calls (the first call alone when there is no later one).
func (r *runner) compileSeconds() float64 {
	total := 0.0
	for _, d := range r.times {
		if len(d) == 0 {
			continue
		}
		first := d[0]
		if len(d) > 1 {
			rest := slices.Clone(d[1:])
			slices.Sort(rest)
			first -= rest[len(rest)/2]
		}
		total += max(first, 0).Seconds()
	}
	return total
}

func (r *runner) exec(e *context.Exec) ([]float64, error) {
	start := time.Now()
	defer func() { r.times[e] = append(r.times[e], time.Since(start)) }()
	x := tensors.FromFlatDataAndDimensions(append([]float32(nil), r.x...), r.dims...)
	labels := tensors.FromFlatDataAndDimensions(append([]int32(nil), r.labels...), len(r.labels))
	mask := tensors.FromFlatDataAndDimensions(append([]float32(nil), r.mask...), len(r.mask))
	outs, err := e.Exec(x, labels, mask)
	if err != nil {
		return nil, err
	}
	vals := make([]float64, len(outs))
	for i, t := range outs {
		v, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		vals[i] = float64(v[0])
		t.MustFinalizeAll()
	}
	x.MustFinalizeAll()
	labels.MustFinalizeAll()
	mask.MustFinalizeAll()
	return vals, nil
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
	for step := range r.steps {
		lo := step * r.cfg.Batch
		hi := min(lo+r.cfg.Batch, len(order))
		n := r.fill(r.sp.train, order[lo:hi])
		vals, err := r.trainStep()
		if err != nil {
			return Epoch{}, nil, err
		}
		if math.IsNaN(vals[0]) || math.IsInf(vals[0], 0) {
			return Epoch{}, &NaNError{Epoch: epoch + 1, Step: step + 1}, nil
		}
		sumLoss += vals[0]
		sumCorrect += vals[1]
		lr = vals[2]
		if len(sumRates) == 0 {
			sumRates = make([]float64, len(vals)-3)
		}
		for i := range sumRates {
			sumRates[i] += vals[3+i]
		}
		seen += n
		if progress != nil {
			progress(Progress{Phase: PhaseStep, Epoch: epoch + 1, Epochs: r.cfg.Epochs, Step: step + 1,
				Steps: r.steps, Loss: sumLoss / float64(seen), Acc: sumCorrect / float64(seen),
				FiringRates: scale(sumRates, 1/float64(seen)), Elapsed: time.Since(started)})
		}
	}
	return Epoch{
		Epoch:       epoch + 1,
		Loss:        sumLoss / float64(seen),
		TrainAcc:    sumCorrect / float64(seen),
		FiringRates: scale(sumRates, 1/float64(seen)),
		LR:          lr,
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
		vals, err := r.exec(r.evalExec)
		if err != nil {
			return 0, 0, nil, err
		}
		sumLoss += vals[0]
		sumCorrect += vals[1]
		if sumRates == nil {
			sumRates = make([]float64, len(vals)-2)
		}
		for i := range sumRates {
			sumRates[i] += vals[2+i]
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

// loadDataset returns opts.Dataset or loads cfg.Dataset, keeping the first cfg.TrainLimit training and
// cfg.TestLimit test examples when those are positive.
func loadDataset(cfg Config, opts Options) (*data.Dataset, error) {
	ds := opts.Dataset
	if ds == nil {
		var err error
		if ds, err = data.Load(cfg.Dataset, data.Options{Dir: opts.DataDir, Small: cfg.Small}); err != nil {
			return nil, err
		}
	} else if err := ds.Validate(); err != nil {
		return nil, err
	}
	if cfg.TrainLimit == 0 && cfg.TestLimit == 0 {
		return ds, nil
	}
	out := *ds
	out.Train = ds.Train.Head(cfg.TrainLimit)
	out.Test = ds.Test.Head(cfg.TestLimit)
	return &out, nil
}

func backendOf(opts Options) (backends.Backend, string, error) {
	if opts.Backend != nil {
		// Name the configuration (e.g. "xla:cpu") when the backend is the one package xla created.
		name := opts.Backend.Name()
		if c := xla.Current().Config; c != "" && strings.HasPrefix(c, name) {
			name = c
		}
		return opts.Backend, name, nil
	}
	b, err := xla.Backend()
	if err != nil {
		return nil, "", err
	}
	return b, xla.Current().Config, nil
}

// newContext returns a context holding cfg as hyperparameters, with its random number generator seeded
// from cfg.Seed (initialization and dropout masks).
func newContext(cfg Config) (*context.Context, error) {
	ctx := context.New()
	cfg.SetParams(ctx)
	ctx.SetParam(context.ParamInitialSeed, cfg.Seed)
	if err := ctx.SetRNGStateFromSeed(cfg.Seed); err != nil {
		return nil, err
	}
	return ctx, nil
}

// TrainModel trains the network that cfg describes and returns its result; with opts.Dir it saves a
// checkpoint after every epoch and writes result.json at the end. A run is deterministic for a
// configuration and backend, and a run resumed from a checkpoint ends with the same result as an
// uninterrupted one (wall times aside). A NaN or infinite loss stops training with a *NaNError.
func TrainModel(cfg Config, opts Options) (*Result, error) {
	started := time.Now()
	ctx, err := newContext(cfg)
	if err != nil {
		return nil, err
	}
	var (
		handler *checkpoints.Handler
		resumed bool
	)
	if opts.Dir != "" {
		if !opts.Resume && HasCheckpoint(opts.Dir) {
			return nil, fmt.Errorf("%w: %s (use --resume to continue it, or another directory)", ErrRunExists, opts.Dir)
		}
		handler, resumed, err = openCheckpoints(ctx, opts)
		if err != nil {
			return nil, err
		}
		if resumed {
			if cfg, err = resumedConfig(ctx, opts); err != nil {
				return nil, err
			}
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	history, wallBefore, err := loadState(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := loadDataset(cfg, opts)
	if err != nil {
		return nil, err
	}
	sp, err := protocolSplits(cfg.Protocol, ds)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if err := checkRun(cfg, ds, sp); err != nil {
		return nil, err
	}
	net, err := NewNetwork(cfg, ds)
	if err != nil {
		return nil, err
	}
	b, backendName, err := backendOf(opts)
	if err != nil {
		return nil, err
	}
	progress := opts.Progress
	if resumed && progress != nil {
		progress(Progress{Phase: PhaseResumed, Epoch: len(history), Epochs: cfg.Epochs,
			Message: fmt.Sprintf("resuming %s after epoch %d of %d", opts.Dir, len(history), cfg.Epochs)})
	}
	r, err := newRunner(cfg, ds, sp, net, ctx, b)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Dataset: cfg.Dataset, Model: cfg.Model, M: cfg.M, Width: cfg.Width, Seed: cfg.Seed,
		Backend: backendName, Protocol: cfg.Protocol, Classes: ds.Classes, Config: cfg,
	}
	selection := sp.test
	if sp.val != nil {
		selection = sp.val
	}
	if len(history) < cfg.Epochs && progress != nil {
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
		if progress != nil {
			progress(Progress{Phase: PhaseEval, Epoch: epoch + 1, Epochs: cfg.Epochs, Elapsed: time.Since(started)})
		}
		if sp.val != nil {
			_, acc, _, err := r.evaluate(sp.val)
			if err != nil {
				return nil, err
			}
			ep.ValAcc = &acc
		}
		_, ep.TestAcc, ep.EvalFiringRates, err = r.evaluate(sp.test)
		if err != nil {
			return nil, err
		}
		if selection != sp.test {
			if _, _, ep.EvalFiringRates, err = r.evaluate(selection); err != nil {
				return nil, err
			}
		}
		ep.Seconds = time.Since(epochStart).Seconds()
		history = append(history, ep)
		if handler != nil {
			if err := storeState(ctx, history, wallBefore+time.Since(started).Seconds()); err != nil {
				return nil, err
			}
			ctx.SetParam(paramParameterCount, model.CountParams(ctx.In(modelScope)))
			if err := saveCheckpoint(handler); err != nil {
				return nil, fmt.Errorf("saving checkpoint of epoch %d: %w", epoch+1, err)
			}
		}
		if progress != nil {
			e := ep
			progress(Progress{Phase: PhaseEpoch, Epoch: epoch + 1, Epochs: cfg.Epochs, Result: &e,
				Elapsed: time.Since(started)})
		}
	}
	if n := model.CountParams(ctx.In(modelScope)); n > 0 {
		res.ParameterCount = n
	} else {
		// Nothing was built in this segment (a finished run resumed): use the count saved with it.
		res.ParameterCount = context.GetParamOr(ctx, paramParameterCount, 0)
	}
	res.Epochs = history
	res.summarize()
	res.WallSeconds = wallBefore + time.Since(started).Seconds()
	res.CompileSeconds = r.compileSeconds()
	if opts.Dir != "" {
		if err := WriteResult(opts.Dir, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}
