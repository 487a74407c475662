package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/fits/sweep"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/owned"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute"
)

func init() {
	register(&command{
		name:    "train",
		summary: "train a FiTS network (checkpoint every epoch, --resume, result.json)",
		run:     runTrain,
	})
}

// trainFlags are the flags of `fits train` bound to a configuration.
type trainFlags struct {
	cfg                           train.Config
	protocol                      string
	out, dataDir, backend         string
	resume, extend, asJSON, quiet bool
	skipNonFinite, tf32           bool
	lr, dropout, seed, small      string
	targetLR                      string
	surrogateAlpha, guard, eps    string
	tauM, tauA, dt, fMin, fMax    string
	experiment, mode              string
	// set holds the names of the flags given on the command line.
	set map[string]bool
}

// bindTrainFlags defines the flags of `fits train` on fs with the defaults of d and returns them.
func bindTrainFlags(fs *flag.FlagSet, d train.Config) (*trainFlags, *string) {
	f := &trainFlags{cfg: d}
	fs.StringVar(&f.experiment, "experiment", "", "train one cell of the paper (an id of `fits experiments`, e.g. ssc/fsts-m2/w512) with its recipe; the other flags override it")
	fs.StringVar(&f.mode, "mode", string(experiment.Full), "with --experiment: full (the paper's recipe) or quick (the stand-in on data this machine has)")
	fs.StringVar(&f.cfg.Dataset, "dataset", d.Dataset, "dataset name (see `fits data list`; synthetic is embedded)")
	fs.StringVar(&f.cfg.Model, "model", d.Model, "neuron kind of the hidden layers: "+strings.Join(neuron.KindNames(), ", "))
	fs.IntVar(&f.cfg.M, "m", d.M, "TS cascade order M (fsts: >= 1; other models: 0)")
	fs.IntVar(&f.cfg.Width, "width", d.Width, "neurons per hidden layer")
	fs.IntVar(&f.cfg.Epochs, "epochs", d.Epochs, "training epochs")
	fs.IntVar(&f.cfg.Batch, "batch", d.Batch, "examples per step")
	fs.StringVar(&f.lr, "lr", fmt.Sprint(d.LR), "peak learning rate of Adam (cosine-annealed to 0)")
	fs.StringVar(&f.dropout, "dropout", fmt.Sprint(d.Dropout), "dropout probability of hidden neurons")
	fs.StringVar(&f.seed, "seed", fmt.Sprint(d.Seed), "random seed (initialization, example order, dropout)")
	fs.StringVar(&f.protocol, "protocol", string(d.Protocol), "model selection: best-test, val-split, official-val, final-epoch")
	fs.StringVar(&f.cfg.Readout, "readout", d.Readout, "classifier readout: sum (linear map of the spikes summed over time), mean, li-max, li-mean; empty: the dataset's default (sum; mean for sMNIST), as the released code")
	fs.StringVar(&f.cfg.TSMix, "ts-mix", d.TSMix, "nesting of the TS module's lambda-mix: official (the released code: innermost first, spike when V > Vth) or paper (Eq. 10 outermost first, V >= Vth); the same neuron for M <= 1")
	fs.StringVar(&f.cfg.Surrogate, "surrogate", d.Surrogate, "surrogate gradient of the spike: triangle (alpha*max(0, 1 - alpha*|V - Vth|), the released code) or bellec (0.3*max(0, 1 - |V - Vth|), this toolkit's first form)")
	fs.StringVar(&f.surrogateAlpha, "surrogate-alpha", fmt.Sprint(d.SurrogateAlpha), "alpha of the triangle surrogate (peak alpha, half-width 1/alpha)")
	fs.StringVar(&f.cfg.TargetCoordinate, "target-coordinate", d.TargetCoordinate, "trainable coordinate of the target frequency: log-hz (ln f*, the released code) or omega (Omega* in rad/s)")
	fs.StringVar(&f.cfg.FInit, "f-init", d.FInit, "initial spacing of f* over its range: log or linear")
	fs.StringVar(&f.guard, "freq-guard-safety", fmt.Sprint(d.FreqGuardSafety), "after every optimizer step project f* below this fraction of the Jury stability bound on kappa*dt^2 (0 = off)")
	fs.BoolVar(&f.cfg.ForwardClip, "forward-clip", d.ForwardClip, "clamp f* in the forward pass at 0.99 of the Jury bound (this toolkit's first form; the neuron past the cap then gets no gradient)")
	fs.StringVar(&f.cfg.DropoutMode, "dropout-mode", d.DropoutMode, "dropout masks: step (a fresh mask per example, time step and neuron, the released code) or shared (one mask for all time steps)")
	fs.StringVar(&f.cfg.LRSchedule, "lr-schedule", d.LRSchedule, "cosine annealing of the learning rate stepped once per epoch (T_max = epochs) or every step")
	fs.StringVar(&f.eps, "adam-epsilon", fmt.Sprint(d.AdamEpsilon), "Adam's epsilon")
	fs.StringVar(&f.cfg.BiasInit, "bias-init", d.BiasInit, "initial dense biases: uniform (U(+-1/sqrt(fan_in)), as PyTorch's nn.Linear) or zero")
	fs.StringVar(&f.tauM, "tau-m", fmt.Sprint(d.TauM), "membrane time constant tau_m in seconds (sMNIST: pixel steps); 0 keeps the dataset's (Appendix B)")
	fs.StringVar(&f.tauA, "tau-a", fmt.Sprint(d.TauA), "adaptation time constant tau_a, same unit; 0 keeps the dataset's")
	fs.StringVar(&f.dt, "dt", fmt.Sprint(d.Dt), "neuron time step dt, same unit; 0 keeps the dataset's time bin")
	fs.StringVar(&f.fMin, "f-min", fmt.Sprint(d.FMinHz), "lower end of the initial f* range in Hz (sMNIST: cycles per step); 0 keeps the dataset's")
	fs.StringVar(&f.fMax, "f-max", fmt.Sprint(d.FMaxHz), "upper end of the initial f* range; 0 keeps the dataset's")
	fs.BoolVar(&f.cfg.InputCounts, "input-counts", d.InputCounts, "feed SHD/SSC/espeak-digits spike counts per bin instead of the released code's binary bins")
	fs.StringVar(&f.cfg.AudioFrontEnd, "frontend", d.AudioFrontEnd, "audio front end of gsc and espeak-digits-mel: released (librosa's recipe, the default) or logmel (this toolkit's first features)")
	fs.StringVar(&f.cfg.ValSplit, "val-split", d.ValSplit, "hold-out of --protocol=val-split: released (the released code's SHD* split, numpy RandomState(0).permutation) or stratified (this toolkit's first, stratified by class)")
	fs.StringVar(&f.cfg.AdaptLIF, "adaptlif", d.AdaptLIF, "adaptive-LIF baseline: fixed (eta = gamma = sqrt(kappa_CT(0)), the released code) or learnable (eta, gamma trainable from 0)")
	fs.StringVar(&f.cfg.Executor, "engine", d.Executor, "training engine: empty for fused on CPU and loop on CUDA (step.Default); "+step.Help())
	fs.StringVar(&f.cfg.Executor, "executor", d.Executor, "the same as --engine (its earlier name, kept as an alias)")
	fs.IntVar(&f.cfg.Chunk, "chunk", d.Chunk, "time steps per call of the chunked engine (0: the largest divisor of T that is at most 5)")
	fs.StringVar(&f.targetLR, "target-lr-scale", fmt.Sprint(d.TargetLRScale), "multiplier of the learning rate of the target frequency Ω* (0 or 1: the paper's single learning rate)")
	fs.StringVar(&f.out, "out", "", "run directory for checkpoints and result.json (default runs/DATASET-MODEL-mM-wW-sSEED; with --experiment runs/MODE/ID/seed-SEED)")
	fs.BoolVar(&f.resume, "resume", false, "continue the run in --out from its newest intact checkpoint, with its saved configuration (flags that contradict it are refused)")
	fs.BoolVar(&f.tf32, "tf32", false, "on CUDA, let the dense products use TF32 (10-bit mantissas; go-xla's default there); without it they multiply in float32, as the released PyTorch code does by default. No effect on CPU")
	fs.BoolVar(&f.skipNonFinite, "skip-nonfinite-gradients", false, "skip the update of a step whose gradients are NaN or infinite while its loss is finite, record it in result.json (skipped_steps of its epoch) and train on; without it such a step stops the run. The released code applies every update, so a run that skips one departs from it; allowed with --resume")
	fs.BoolVar(&f.extend, "extend", false, "with --resume: allow --epochs above the saved number and train on to it (the cosine learning-rate schedule then spans the new total from the next step on)")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object on stdout")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar on stderr")
	fs.BoolVar(&f.cfg.Small, "small", d.Small, "use the dataset's reduced version (tests and smoke runs)")
	fs.StringVar(&f.dataDir, "data-dir", "", "dataset folder (default $FITS_DATA/NAME)")
	fs.IntVar(&f.cfg.TrainLimit, "train-limit", d.TrainLimit, "keep only the first N training examples (0: all), for time-bounded runs")
	fs.IntVar(&f.cfg.TestLimit, "test-limit", d.TestLimit, "keep only the first N test examples (0: all)")
	return f, backendFlag(fs)
}

// parseTrainFlags parses the flags of `fits train`. With --experiment the flags are parsed a second time
// with the experiment's recipe (and its first seed) as defaults, so that every flag given explicitly
// still overrides the recipe. It returns the run folder to use when --out is not given.
func parseTrainFlags(args []string, stderr io.Writer) (*trainFlags, string, error) {
	fs := newFlagSet("train", stderr)
	f, backend := bindTrainFlags(fs, train.DefaultConfig())
	if err := parseFlags(fs, args); err != nil {
		return nil, "", err
	}
	f.backend = *backend
	f.set = setFlags(fs)
	if f.experiment == "" {
		if f.set["mode"] {
			return nil, "", badInput("--mode needs --experiment")
		}
		return f, "", nil
	}
	e, err := experiment.Lookup(f.experiment)
	if err != nil {
		return nil, "", badInput("--experiment: %v", err)
	}
	mode, err := experiment.ParseMode(f.mode)
	if err != nil {
		return nil, "", badInput("--mode: %v", err)
	}
	seeds := e.SeedsFor(mode)
	if len(seeds) == 0 {
		seeds = []int64{1}
	}
	d, err := e.Config(mode, seeds[0])
	if err != nil {
		return nil, "", badInput("--experiment: %v", err)
	}
	fs = newFlagSet("train", stderr)
	f, backend = bindTrainFlags(fs, d)
	if err := parseFlags(fs, args); err != nil {
		return nil, "", err
	}
	f.backend = *backend
	f.set = setFlags(fs)
	seed, err := parseFloat("seed", f.seed)
	if err != nil || seed != float64(int64(seed)) {
		return nil, "", badInput("--seed: %q is not an integer", f.seed)
	}
	return f, experiment.RunDir(filepath.Join("runs", string(mode)), e.ID, int64(seed)), nil
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	f, defaultOut, err := parseTrainFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	if err := checkApplicable(cfg, f.set); err != nil {
		return err
	}
	out := f.out
	if out == "" {
		out = defaultOut
	}
	if out == "" {
		out = filepath.Join("runs", fmt.Sprintf("%s-%s-m%d-w%d-s%d", cfg.Dataset, cfg.Model, cfg.M, cfg.Width, cfg.Seed))
	}
	if err := checkOutDir("out", out); err != nil {
		return err
	}
	if err := checkBackendName(f.backend); err != nil {
		return err
	}
	opts := train.Options{Dir: out, Resume: f.resume, DataDir: f.dataDir, SkipNonFiniteGradients: f.skipNonFinite,
		Warn: func(line string) { fmt.Fprintf(stderr, "fits train: warning: %s\n", line) }}
	if f.extend && !f.resume {
		return badInput("--extend continues a saved run: it needs --resume")
	}
	if _, err := os.Stat(out); f.resume && errors.Is(err, os.ErrNotExist) {
		return badInput("--resume: %s does not exist (to start a new run there, drop --resume)", out)
	}
	// The run folder is locked (train.LockRun) from here until the command ends: a second process that
	// trains, resumes or evaluates the same run is refused, naming this one.
	created := missingDirs(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		removeEmptyDirs(created)
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			return err
		}
		return badInput("--out=%s: cannot create it: %v", out, err)
	}
	unlock, err := train.LockRun(out, false)
	if err != nil {
		removeEmptyDirs(created)
		return err
	}
	defer unlock()
	fail := func(err error) error {
		unlock()
		removeEmptyDirs(created)
		return err
	}
	switch {
	case f.resume:
		if opts.ExtendEpochs, err = f.checkResume(out); err != nil {
			return fail(err)
		}
	case train.HoldsRun(out):
		return fail(badInput("--out=%s already holds a run (add --resume to continue it, or choose another --out)", out))
	default:
		if n := foreignEntries(out); n > 0 {
			return fail(badInput("--out=%s holds %d entries and no run: fits train starts a run only in a new or empty folder (choose another --out)", out, n))
		}
	}
	if st, err := os.Lstat(filepath.Join(out, train.ResultFile)); err == nil && !st.Mode().IsRegular() {
		return fail(badInput("--out=%s: %s is not a regular file (move it away)", out, filepath.Join(out, train.ResultFile)))
	}
	if !f.resume { // a resumed run's configuration is the saved one: TrainModel checks it
		if err := train.CheckConstants(cfg); err != nil {
			return fail(badInput("%v", err))
		}
	}
	// The backend's announcement waits until the engine is known to run this network on it, so that an
	// unsupported combination is the one line of bad input and nothing else.
	release := xla.HoldAnnouncement()
	b, err := openBackend(f.backend)
	if err == nil && !f.resume { // a resumed run's engine ran its saved network before
		err = checkTrainEngine(cfg, b)
	}
	release(err == nil)
	if err != nil {
		return fail(err)
	}
	if !f.tf32 {
		// The released code's products are float32 (PyTorch keeps TF32 off for matrix products by default).
		xla.Float32Products(b)
	}
	opts.Backend, opts.BackendName = b, backendName()
	if !f.quiet {
		opts.Progress = train.TerminalProgress(stderr)
	}
	res, err := train.TrainModel(cfg, opts)
	if err != nil {
		return fail(err)
	}
	if f.asJSON {
		return writeJSON(stdout, res)
	}
	printResult(stdout, res, out)
	return nil
}

// checkTrainEngine refuses, as bad input, an engine that cannot run cfg's network on b (step.CheckSupported:
// a TS order above the fused kernel's, an engine that slices chunks on a backend without dynamic slices).
// What it checks depends on the neuron kind and order only, so any input width and class count will do.
func checkTrainEngine(cfg train.Config, b compute.Backend) error {
	c := model.DefaultConfig(cfg.Kind(), cfg.Order(), cfg.Width, 2)
	if err := step.CheckSupported(cfg.Executor, b, c.Net(1)); err != nil {
		return badInput("%v", err)
	}
	return nil
}

// config turns the flags into a validated configuration; invalid values are bad input (exit status 2)
// and unknown names list the valid ones.
func (f *trainFlags) config() (train.Config, error) {
	cfg := f.cfg
	var err error
	if cfg.LR, err = parseFloat("lr", f.lr); err != nil {
		return cfg, err
	}
	if cfg.Dropout, err = parseFloat("dropout", f.dropout); err != nil {
		return cfg, err
	}
	if cfg.TargetLRScale, err = parseFloat("target-lr-scale", f.targetLR); err != nil {
		return cfg, err
	}
	for _, o := range []struct {
		flag, value string
		dst         *float64
	}{{"surrogate-alpha", f.surrogateAlpha, &cfg.SurrogateAlpha}, {"freq-guard-safety", f.guard, &cfg.FreqGuardSafety},
		{"adam-epsilon", f.eps, &cfg.AdamEpsilon}, {"tau-m", f.tauM, &cfg.TauM}, {"tau-a", f.tauA, &cfg.TauA},
		{"dt", f.dt, &cfg.Dt}, {"f-min", f.fMin, &cfg.FMinHz}, {"f-max", f.fMax, &cfg.FMaxHz}} {
		if *o.dst, err = parseFloat(o.flag, o.value); err != nil {
			return cfg, err
		}
	}
	seed, err := parseFloat("seed", f.seed)
	if err != nil || seed != float64(int64(seed)) {
		return cfg, badInput("--seed: %q is not an integer", f.seed)
	}
	cfg.Seed = int64(seed)
	p, err := train.ParseProtocol(f.protocol)
	if err != nil {
		return cfg, badInput("--protocol: %v", err)
	}
	cfg.Protocol = p
	if err := cfg.Validate(); err != nil {
		return cfg, badInput("%v", err)
	}
	return cfg, nil
}

// checkResume checks a --resume of the run in out: the folder must exist, and the flags given must agree
// with the configuration saved in its newest intact checkpoint; --epochs above the saved number needs
// --extend. It returns the number of epochs to extend the run to (0: the saved number).
func (f *trainFlags) checkResume(out string) (int, error) {
	if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
		return 0, badInput("--resume: %s does not exist (to start a new run there, drop --resume)", out)
	}
	saved, ck, _, err := train.SavedConfig(out)
	var ce *train.CheckpointError
	if errors.As(err, &ce) && !ce.AnyCorrupt() {
		if _, err := os.Lstat(filepath.Join(out, train.ResultFile)); err == nil {
			return 0, badInput("--resume: %s holds a %s but no checkpoint to resume from (choose another --out for a new run)", out, train.ResultFile)
		}
		return 0, badInput("--resume: %v: nothing to resume from (drop --resume to start the run again)", err)
	}
	if err != nil {
		return 0, err
	}
	if err := ck.CheckResumable(); err != nil {
		return 0, err
	}
	asked, err := f.config()
	if err != nil {
		return 0, err
	}
	if err := f.checkResumeExperiment(out, asked, saved); err != nil {
		return 0, err
	}
	extend := 0
	if f.extend && f.set["epochs"] && asked.Epochs > saved.Epochs {
		extend = asked.Epochs
	}
	diffs := contradictions(f.set, asked, saved, func(name string) bool { return name == "epochs" && extend > 0 })
	for i, d := range diffs {
		if strings.HasPrefix(d, "--epochs=") && asked.Epochs > saved.Epochs {
			diffs[i] += " [add --extend to train on to more epochs]"
		}
	}
	if len(diffs) > 0 {
		return 0, badInput("--resume: flags contradict the configuration saved in %s: %s; drop them to continue the saved run",
			out, strings.Join(diffs, ", "))
	}
	return extend, nil
}

// contradictions lists, as "--name=given (saved: was)", the flags set on the command line (set) whose
// values in asked differ from those in saved, except the flags that skip accepts.
func contradictions(set map[string]bool, asked, saved train.Config, skip func(name string) bool) []string {
	var diffs []string
	for _, fl := range trainConfigFlags {
		if !set[fl.name] || skip(fl.name) {
			continue
		}
		if given, was := fl.value(asked), fl.value(saved); given != was {
			diffs = append(diffs, fmt.Sprintf("--%s=%s (saved: %s)", fl.name, given, savedValue(fl.name, was)))
		}
	}
	return diffs
}

// savedValue is how a contradiction names the saved value of flag name: a field saved empty is the
// default the run was started with ("(saved: )" told the user nothing).
func savedValue(name, was string) string {
	switch {
	case was != "":
		return was
	case name == "engine" || name == "executor":
		return "none, the backend's default engine"
	}
	return "none, the default"
}

// trainConfigFlags are the flags of `fits train` that set a field of the saved configuration, with the
// field's value written as the flag takes it.
var trainConfigFlags = []struct {
	name  string
	value func(c train.Config) string
}{
	{"dataset", func(c train.Config) string { return c.Dataset }},
	{"small", func(c train.Config) string { return strconv.FormatBool(c.Small) }},
	{"train-limit", func(c train.Config) string { return strconv.Itoa(c.TrainLimit) }},
	{"test-limit", func(c train.Config) string { return strconv.Itoa(c.TestLimit) }},
	{"model", func(c train.Config) string { return c.Model }},
	{"m", func(c train.Config) string { return strconv.Itoa(c.Order()) }},
	{"width", func(c train.Config) string { return strconv.Itoa(c.Width) }},
	{"epochs", func(c train.Config) string { return strconv.Itoa(c.Epochs) }},
	{"batch", func(c train.Config) string { return strconv.Itoa(c.Batch) }},
	{"lr", func(c train.Config) string { return strconv.FormatFloat(c.LR, 'g', -1, 64) }},
	{"dropout", func(c train.Config) string { return strconv.FormatFloat(c.Dropout, 'g', -1, 64) }},
	{"seed", func(c train.Config) string { return strconv.FormatInt(c.Seed, 10) }},
	{"protocol", func(c train.Config) string { return string(c.Protocol) }},
	{"readout", func(c train.Config) string { return c.Resolved().Readout }},
	{"engine", func(c train.Config) string { return c.Executor }},
	{"executor", func(c train.Config) string { return c.Executor }},
	{"chunk", func(c train.Config) string { return strconv.Itoa(c.Chunk) }},
	{"target-lr-scale", func(c train.Config) string { return strconv.FormatFloat(c.TargetLRScale, 'g', -1, 64) }},
	{"ts-mix", func(c train.Config) string { return c.TSMix }},
	{"surrogate", func(c train.Config) string { return c.Surrogate }},
	{"surrogate-alpha", func(c train.Config) string { return strconv.FormatFloat(c.SurrogateAlpha, 'g', -1, 64) }},
	{"target-coordinate", func(c train.Config) string { return c.TargetCoordinate }},
	{"f-init", func(c train.Config) string { return c.FInit }},
	{"freq-guard-safety", func(c train.Config) string { return strconv.FormatFloat(c.FreqGuardSafety, 'g', -1, 64) }},
	{"forward-clip", func(c train.Config) string { return strconv.FormatBool(c.ForwardClip) }},
	{"dropout-mode", func(c train.Config) string { return c.DropoutMode }},
	{"lr-schedule", func(c train.Config) string { return c.LRSchedule }},
	{"adam-epsilon", func(c train.Config) string { return strconv.FormatFloat(c.AdamEpsilon, 'g', -1, 64) }},
	{"bias-init", func(c train.Config) string { return c.BiasInit }},
	{"adaptlif", func(c train.Config) string { return c.AdaptLIF }},
	{"val-split", func(c train.Config) string { return c.ValSplit }},
	{"input-counts", func(c train.Config) string { return strconv.FormatBool(c.InputCounts) }},
	{"frontend", func(c train.Config) string { return c.AudioFrontEnd }},
	{"tau-m", func(c train.Config) string { return strconv.FormatFloat(c.TauM, 'g', -1, 64) }},
	{"tau-a", func(c train.Config) string { return strconv.FormatFloat(c.TauA, 'g', -1, 64) }},
	{"dt", func(c train.Config) string { return strconv.FormatFloat(c.Dt, 'g', -1, 64) }},
	{"f-min", func(c train.Config) string { return strconv.FormatFloat(c.FMinHz, 'g', -1, 64) }},
	{"f-max", func(c train.Config) string { return strconv.FormatFloat(c.FMaxHz, 'g', -1, 64) }},
}

func printResult(w io.Writer, r *train.Result, dir string) {
	fmt.Fprintf(w, "%s on %s (M=%d, width %d, seed %d, %d parameters, %s, %s)\n",
		r.Model, r.Dataset, r.M, r.Width, r.Seed, r.ParameterCount, r.Protocol, r.Backend)
	if r.BestValAcc != nil {
		fmt.Fprintf(w, "  best val acc      %6.2f%% (epoch %d)\n", 100**r.BestValAcc, r.BestEpoch)
		fmt.Fprintf(w, "  test at best val  %6.2f%%\n", 100**r.TestAccAtBestVal)
	}
	fmt.Fprintf(w, "  best test acc     %6.2f%%\n", 100*r.BestTestAcc)
	fmt.Fprintf(w, "  final test acc    %6.2f%%\n", 100*r.FinalTestAcc)
	rates := make([]string, len(r.FiringRates))
	for i, v := range r.FiringRates {
		rates[i] = fmt.Sprintf("%.2f%%", 100*v)
	}
	fmt.Fprintf(w, "  firing rates      %s (spikes per neuron per bin)\n", strings.Join(rates, ", "))
	fmt.Fprintf(w, "  wall time         %.1f s (compile %.1f s)\n", r.WallSeconds, r.CompileSeconds)
	fmt.Fprintf(w, "  result            %s\n", filepath.Join(dir, train.ResultFile))
}

// foreignEntries counts the entries of dir other than the run's lock file, the log that `fits sweep`
// opens in a run's folder before it starts `fits train` there (sweep.LogFile; fits train never writes
// it), and what a killed first save left: the record, staging folders and the files the record lists
// unchanged (owned.RecordFile, owned.StagingPrefix). The rest is what a new run would be mixed with.
func foreignEntries(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	rec, err := owned.Open(dir)
	if err != nil {
		return len(ents)
	}
	n := 0
	for _, e := range ents {
		if e.Name() != train.LockFile && e.Name() != sweep.LogFile && e.Name() != owned.RecordFile &&
			!strings.HasPrefix(e.Name(), owned.StagingPrefix) && !rec.Owns(e.Name()) {
			n++
		}
	}
	return n
}
