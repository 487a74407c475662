package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

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

// trainFlags are the flags of `fits train` bound to a configuration.
type trainFlags struct {
	cfg                           train.Config
	out, dataDir, backend         string
	resume, extend, asJSON, quiet bool
	skipNonFinite, tf32           bool
	experiment, mode              string
	// numbers holds, by field index, the text of the flags that set a float64 or int64 field of cfg:
	// config parses them with messages of its own.
	numbers map[int]*string
	// set holds the names of the flags given on the command line.
	set map[string]bool
}

// configFlag is a flag of `fits train` that sets a field of train.Config, as the field's tags declare it:
// flag (the name), alias (an earlier name that does the same) and help.
type configFlag struct {
	name, help string
	field      int
}

// trainConfigFlags are the flags of `fits train` that set a field of the saved configuration, in the
// order of the fields.
var trainConfigFlags = func() (out []configFlag) {
	for f := range reflect.TypeFor[train.Config]().Fields() {
		out = append(out, configFlag{f.Tag.Get("flag"), f.Tag.Get("help"), f.Index[0]})
		if alias := f.Tag.Get("alias"); alias != "" {
			out = append(out, configFlag{alias, "the same as --" + f.Tag.Get("flag") + " (its earlier name, kept as an alias)", f.Index[0]})
		}
	}
	return out
}()

// value returns the field of c that fl sets (the readout resolved to the dataset's default), written as
// the flag takes it.
func (fl configFlag) value(c train.Config) string {
	return fmt.Sprint(reflect.ValueOf(c.Resolved()).Field(fl.field).Interface())
}

// bindTrainFlags parses args as the flags of `fits train` with the defaults of d, and returns them and
// their flag set.
func bindTrainFlags(args []string, stderr io.Writer, d train.Config) (*trainFlags, *flag.FlagSet, error) {
	fs := newFlagSet("train", stderr)
	f := &trainFlags{cfg: d, numbers: map[int]*string{}}
	fs.StringVar(&f.experiment, "experiment", "", "train one cell of the paper (an id of `fits experiments`, e.g. ssc/fsts-m2/w512) with its recipe; the other flags override it")
	fs.StringVar(&f.mode, "mode", string(experiment.Full), "with --experiment: full (the paper's recipe) or quick (the stand-in on data this machine has)")
	cfg := reflect.ValueOf(&f.cfg).Elem()
	for _, fl := range trainConfigFlags {
		switch p := cfg.Field(fl.field).Addr().Interface().(type) {
		case *string:
			fs.StringVar(p, fl.name, *p, fl.help)
		case *train.Protocol:
			fs.StringVar((*string)(p), fl.name, string(*p), fl.help)
		case *int:
			fs.IntVar(p, fl.name, *p, fl.help)
		case *bool:
			fs.BoolVar(p, fl.name, *p, fl.help)
		default: // float64 and int64
			f.numbers[fl.field] = cmp.Or(f.numbers[fl.field], new(string))
			fs.StringVar(f.numbers[fl.field], fl.name, fmt.Sprint(cfg.Field(fl.field).Interface()), fl.help)
		}
	}
	fs.Lookup("model").Usage += strings.Join(neuron.KindNames(), ", ") // the kinds registered at run time
	fs.Lookup("engine").Usage += step.Help()                           // the engines registered at run time
	fs.StringVar(&f.out, "out", "", "run directory for checkpoints and result.json (default runs/DATASET-MODEL-mM-wW-sSEED; with --experiment runs/MODE/ID/seed-SEED)")
	fs.BoolVar(&f.resume, "resume", false, "continue the run in --out from its newest intact checkpoint, with its saved configuration (flags that contradict it are refused)")
	fs.BoolVar(&f.tf32, "tf32", false, "on CUDA, let the dense products use TF32 (10-bit mantissas; go-xla's default there); without it they multiply in float32, as the released PyTorch code does by default. No effect on CPU")
	fs.BoolVar(&f.skipNonFinite, "skip-nonfinite-gradients", false, "skip the update of a step whose gradients are NaN or infinite while its loss is finite, record it in result.json (skipped_steps of its epoch) and train on; without it such a step stops the run. The released code applies every update, so a run that skips one departs from it; allowed with --resume")
	fs.BoolVar(&f.extend, "extend", false, "with --resume: allow --epochs above the saved number and train on to it (the cosine learning-rate schedule then spans the new total from the next step on)")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object on stdout")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar on stderr")
	fs.StringVar(&f.dataDir, "data-dir", "", "dataset folder (default $FITS_DATA/NAME)")
	backend := backendFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, nil, err
	}
	f.backend = *backend
	f.set = setFlags(fs)
	return f, fs, nil
}

// parseTrainFlags parses the flags of `fits train`. With --experiment the flags are parsed a second time
// with the experiment's recipe (and its first seed) as defaults, so that every flag given explicitly
// still overrides the recipe. It returns the run folder to use when --out is not given.
func parseTrainFlags(args []string, stderr io.Writer) (*trainFlags, string, error) {
	f, _, err := bindTrainFlags(args, stderr, train.DefaultConfig())
	if err != nil {
		return nil, "", err
	}
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
	f, fs, err := bindTrainFlags(args, stderr, d)
	if err != nil {
		return nil, "", err
	}
	seed, err := parseInt("seed", fs.Lookup("seed").Value.String())
	if err != nil {
		return nil, "", err
	}
	return f, experiment.RunDir(filepath.Join("runs", string(mode)), e.ID, seed), nil
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
	out := cmp.Or(f.out, defaultOut, filepath.Join("runs", fmt.Sprintf("%s-%s-m%d-w%d-s%d", cfg.Dataset, cfg.Model, cfg.M, cfg.Width, cfg.Seed)))
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
		return badPath(err, "--out=%s: cannot create it: %v", out, err)
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
	v := reflect.ValueOf(&cfg).Elem()
	for _, kind := range []reflect.Kind{reflect.Float64, reflect.Int64} { // the floats first, then the seed
		for _, fl := range trainConfigFlags {
			if text := f.numbers[fl.field]; text != nil && v.Field(fl.field).Kind() == kind {
				if err := parseNumber(v.Field(fl.field), fl.name, *text); err != nil {
					return cfg, err
				}
			}
		}
	}
	if _, err := train.ParseProtocol(string(cfg.Protocol)); err != nil {
		return cfg, badInput("--protocol: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, badInput("%v", err)
	}
	return cfg, nil
}

// parseNumber sets field, a float64 or an int64, to text parsed as the flag name takes it.
func parseNumber(field reflect.Value, name, text string) error {
	if field.Kind() == reflect.Int64 {
		x, err := parseInt(name, text)
		field.SetInt(x)
		return err
	}
	x, err := parseFloat(name, text)
	field.SetFloat(x)
	return err
}

// checkResume checks a --resume of the run in out, a folder that exists: the flags given must agree with
// the configuration saved in its newest intact checkpoint; --epochs above the saved number needs
// --extend. It returns the number of epochs to extend the run to (0: the saved number).
func (f *trainFlags) checkResume(out string) (int, error) {
	saved, ck, _, err := train.SavedConfig(out)
	if ce, ok := errors.AsType[*train.CheckpointError](err); ok && !ce.AnyCorrupt() {
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
	diffs := configDiffs(asked, saved, func(name string) bool { return f.set[name] && !(name == "epochs" && extend > 0) },
		"--%s=%s (saved: %s)")
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

// configDiffs lists, each formatted with format from the flag's name and its values in asked and saved
// (e.g. "--%s=%s (saved: %s)"), the flags of trainConfigFlags that include accepts (e.g. those given on
// the command line) whose values in asked and saved differ.
func configDiffs(asked, saved train.Config, include func(name string) bool, format string) []string {
	var diffs []string
	for _, fl := range trainConfigFlags {
		if !include(fl.name) {
			continue
		}
		if given, was := fl.value(asked), fl.value(saved); given != was {
			diffs = append(diffs, fmt.Sprintf(format, fl.name, given, savedValue(fl.name, was)))
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

func printResult(w io.Writer, r *train.Result, dir string) {
	fmt.Fprintf(w, "%s on %s (M=%d, width %d, seed %d, %d parameters, %s, %s)\n",
		r.Model, r.Dataset, r.M, r.Width, r.Seed, r.ParameterCount, r.Protocol, r.Backend)
	if r.BestValAcc != nil {
		fmt.Fprintf(w, "  best val acc      %6.2f%% (epoch %d)\n", 100**r.BestValAcc, r.BestEpoch)
		fmt.Fprintf(w, "  test at best val  %6.2f%%\n", 100**r.TestAccAtBestVal)
	}
	fmt.Fprintf(w, "  best test acc     %6.2f%%\n", 100*r.BestTestAcc)
	fmt.Fprintf(w, "  final test acc    %6.2f%%\n", 100*r.FinalTestAcc)
	fmt.Fprintf(w, "  firing rates      %s (spikes per neuron per bin)\n", joinFloats(r.FiringRates, 100, "%.2f%%"))
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

// trainFlagScope says to which datasets or neuron kinds flags of `fits train` apply; a flag given on
// the command line where it does not apply would do nothing, and is refused by name.
type trainFlagScope struct {
	flags []string
	// datasets lists the datasets the flag applies to (nil: every one).
	datasets []string
	// kind reports whether the flag applies to a neuron kind (nil: every one); kinds describes them.
	kind  func(neuron.Kind) bool
	kinds string
}

// trainFlagScopes are the flags of `fits train` that apply only to some datasets or neuron kinds.
var trainFlagScopes = []trainFlagScope{
	{flags: []string{"input-counts"}, datasets: []string{"shd", "shd-val", "ssc", "espeak-digits"}},
	{flags: []string{"frontend"}, datasets: []string{"gsc", "espeak-digits-mel"}},
	{flags: []string{"ts-mix"}, kind: neuron.Kind.HasTS, kinds: "kinds with a TS cascade (fsts)"},
	{flags: []string{"target-coordinate", "f-init", "f-min", "f-max", "freq-guard-safety", "forward-clip", "target-lr-scale"},
		kind: neuron.Kind.HasTargetFrequency, kinds: "kinds with a target frequency"},
	{flags: []string{"tau-a"}, kind: neuron.Kind.HasAdaptation, kinds: "kinds with an adaptation current"},
	{flags: []string{"adaptlif"}, kind: func(k neuron.Kind) bool { return k == neuron.AdaptLIF }, kinds: "adaptlif"},
}

// checkApplicable refuses a flag given on the command line (set) that does not apply to cfg's dataset or
// neuron kind.
func checkApplicable(cfg train.Config, set map[string]bool) error {
	for _, s := range trainFlagScopes {
		i := slices.IndexFunc(s.flags, func(f string) bool { return set[f] })
		switch {
		case i < 0:
		case s.datasets != nil && !slices.Contains(s.datasets, cfg.Dataset):
			return badInput("--%s applies to %s, not --dataset=%s", s.flags[i], strings.Join(s.datasets, ", "), cfg.Dataset)
		case s.kind != nil && !s.kind(cfg.Kind()):
			return badInput("--%s applies to %s, not --model=%s", s.flags[i], s.kinds, cfg.Model)
		}
	}
	return nil
}

// experimentCellFlags are the fields that name a cell of the paper's tables: a run resumed with
// --experiment must be of that cell.
var experimentCellFlags = []string{"dataset", "model", "m", "width", "protocol"}

// checkResumeExperiment refuses `--resume --experiment=ID` when the run saved in out is of another cell
// than ID's recipe (asked: the configuration the flags and the recipe give) in a field no flag set.
func (f *trainFlags) checkResumeExperiment(out string, asked, saved train.Config) error {
	if f.experiment == "" {
		return nil
	}
	if diffs := configDiffs(asked, saved, func(name string) bool {
		return !f.set[name] && slices.Contains(experimentCellFlags, name)
	}, "%s %s (saved: %s)"); len(diffs) > 0 {
		return badInput("--resume: --experiment=%s names another cell than the run saved in %s: %s", f.experiment, out,
			strings.Join(diffs, ", "))
	}
	return nil
}

// checkSweepRuns parses the training command of every run of g as `fits train` will, so that a bad or
// inapplicable extra training flag is refused before anything is emitted, skipped or trained; and refuses
// a finished run of g whose configuration differs from what the extra flags ask (the sweep would
// otherwise count it as finished and train nothing).
func checkSweepRuns(g *sweep.Grid) error {
	for _, r := range g.Runs {
		f, _, err := parseTrainFlags(g.Command(r, false)[1:], io.Discard)
		if err != nil {
			return badInput("extra training flags of %s: %v", r.Name(), err)
		}
		cfg, err := f.config()
		if err == nil {
			err = checkApplicable(cfg, f.set)
		}
		if err != nil {
			return badInput("extra training flags of %s: %v", r.Name(), err)
		}
		st := sweep.Inspect(r)
		if st.Status != sweep.Finished {
			continue
		}
		if diffs := configDiffs(cfg, st.Result.Config, func(name string) bool { return f.set[name] }, "--%s=%s (saved: %s)"); len(diffs) > 0 {
			return badInput("%s finished with another configuration than the extra training flags ask: %s (give another --out to train runs of the new configuration)",
				r.Dir, strings.Join(diffs, ", "))
		}
	}
	return nil
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", stderr)
	dir := fs.String("checkpoint", "", "run directory written by `fits train` (required); its newest intact checkpoint is evaluated")
	asJSON := fs.Bool("json", false, "print the result as one JSON object on stdout")
	dataDir := fs.String("data-dir", "", "dataset folder (default $FITS_DATA/NAME)")
	engine := fs.String("engine", "", "engine that evaluates: empty for the run's own (its fits train --engine); "+
		strings.Join(train.Executors(), ", ")+" (every engine gives the same numbers up to float32 rounding; fits train --help describes them)")
	backend := backendFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return badInput("--checkpoint is required")
	}
	if !isDir(*dir) {
		return badInput("--checkpoint=%s is not a run directory", *dir)
	}
	if *engine != "" && !slices.Contains(train.Executors(), *engine) {
		return badInput("--engine: unknown engine %q (valid: %s)", *engine, strings.Join(train.Executors(), ", "))
	}
	if err := checkBackendName(*backend); err != nil {
		return err
	}
	// No other process trains or resumes the run while it is evaluated (train.LockRun).
	unlock, err := train.LockRun(*dir, true)
	if err != nil {
		return err
	}
	defer unlock()
	// Which checkpoint will be used: refuse before starting a backend when none is usable.
	if _, _, _, err := train.SavedConfig(*dir); err != nil {
		if isErr[*train.CheckpointError](err) {
			return badInput("--checkpoint=%s: %v", *dir, err)
		}
		return err
	}
	b, err := openBackend(*backend)
	if err != nil {
		return err
	}
	res, err := train.Evaluate(*dir, train.Options{Backend: b, BackendName: backendName(), DataDir: *dataDir, Engine: *engine})
	if err != nil {
		return err
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stderr, "fits eval: warning: skipping checkpoint %s in %s: %s\n", s.Name, *dir, s.Reason)
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(stderr, "fits eval: using checkpoint %s (epoch %d), the newest intact one\n", res.CheckpointName, res.Epoch)
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "%s on %s (M=%d, width %d, seed %d, %d parameters) after %d epochs, %s, engine %s\n",
		res.Model, res.Dataset, res.M, res.Width, res.Seed, res.ParameterCount, res.Epoch, res.Backend, res.Engine)
	fmt.Fprintf(stdout, "  checkpoint %s\n", filepath.Join(*dir, res.CheckpointName))
	if res.ValAcc != nil {
		fmt.Fprintf(stdout, "  val acc   %6.2f%%  (loss %.4f)\n", 100**res.ValAcc, *res.ValLoss)
	}
	fmt.Fprintf(stdout, "  test acc  %6.2f%%  (loss %.4f)\n", 100*res.TestAcc, res.TestLoss)
	fmt.Fprintf(stdout, "  firing rates %s (spikes per neuron per bin, test split)\n", joinFloats(res.FiringRates, 100, "%.2f%%"))
	return nil
}
