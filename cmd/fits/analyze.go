package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/fits-snn/fits/data/progress"
	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/internal/filesafe"
)

// analysisKind is one analysis of `fits analyze`: its name, what it reproduces and the flags it takes
// besides the common ones.
type analysisKind struct {
	name, what string
	flags      []string
}

// analyses lists the analyses in the order of the usage text.
var analyses = []analysisKind{
	{"shifts", "learned target-frequency shifts per layer (Fig. 2 left)", []string{"bins", "lo-hz", "hi-hz"}},
	{"delays", "learned group-delay shifts per layer, TS alone and closed loop (Fig. 2 right)", []string{"points", "fmax-hz", "reference"}},
	{"ts-params", "distributions of the learned beta and lambda per layer (Fig. A.2)", []string{"bins"}},
	{"perturb", "reset and shuffle of the learned f* at inference, paired accuracy changes (Table A.8)", []string{"seed", "backend"}},
	{"ctdt", "CT vs realized DT vs closed-form target of every neuron (Fig. 3, Table 5)", nil},
	{"energy", "theoretical energy from AC/MAC counts and firing rates (Table 4)", []string{"evaluate", "backend"}},
	{"training-time", "median training time per run (Table A.4) and kernel runtimes from fits bench files (Table A.3)", []string{"bench", "bench-out"}},
}

func analysisNames() []string {
	out := make([]string, len(analyses))
	for i, a := range analyses {
		out[i] = a.name
	}
	return out
}

// commonAnalyzeFlags are accepted by every analysis.
var commonAnalyzeFlags = []string{"runs", "root", "json", "out", "data-dir"}

// analyzeOutput is the JSON form of `fits analyze --json`.
type analyzeOutput struct {
	Analysis string   `json:"analysis"`
	Runs     []string `json:"runs"`
	// Report is the analysis's report (the fits/analysis type of the same name).
	Report any `json:"report"`
	// KernelRuntime is the kernel-runtime table of training-time --bench.
	KernelRuntime *analysis.KernelRuntimeReport `json:"kernel_runtime,omitempty"`
}

// tabular is what every report offers: a compact table and a long one (the CSV).
type tabular interface {
	Summary() analysis.Table
	Long() analysis.Table
}

func analyzeUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: fits analyze <analysis> --runs=DIR[,DIR...] | --root=DIR [--json] [--out=FILE.csv] [flags]")
	fmt.Fprintln(w, "\nanalyses (runs of one configuration that differ in their seed are aggregated):")
	for _, a := range analyses {
		extra := ""
		if len(a.flags) > 0 {
			extra = " [--" + strings.Join(a.flags, ", --") + "]"
		}
		fmt.Fprintf(w, "  %-14s %s%s\n", a.name, a.what, extra)
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

func runAnalyze(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("analyze", stderr)
	runsFlag := listFlag(fs, "runs", "", "run folders written by fits train, comma-separated")
	root := fs.String("root", "", "folder searched for run folders (every folder with a checkpoint or result.json)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	out := fs.String("out", "", "write the analysis's long table as CSV to this new file (an existing file is not overwritten)")
	dataDir := fs.String("data-dir", "", "dataset folder (default $FITS_DATA/NAME)")
	bins := fs.Int("bins", 0, "histogram bins (shifts: 30; ts-params: 20)")
	loHz := fs.String("lo-hz", "", "shifts: lower end of the histogram of the shifts in Hz (default: the data's range)")
	hiHz := fs.String("hi-hz", "", "shifts: upper end of the histogram of the shifts in Hz")
	points := fs.Int("points", 101, "delays: frequencies of the grid, evenly spaced from 0 Hz")
	fmaxHz := fs.String("fmax-hz", "", "delays: upper end of the frequency grid in Hz (default: Nyquist, 1/(2 dt))")
	reference := fs.String("reference", string(analysis.DelayVsIdentity), "delays: identity (TS vs no TS, closed loop vs FS alone) or init (vs the TS initialization)")
	seed := fs.Int64("seed", 1, "perturb: seed of the shuffle's permutations (>= 1)")
	evaluate := fs.Bool("evaluate", false, "energy: measure the firing rates by evaluating the latest checkpoint instead of reading the selected epoch's")
	bench := listFlag(fs, "bench", "", "training-time: JSON files written by fits bench --json --suite=kernel, comma-separated")
	benchOut := fs.String("bench-out", "", "training-time: write the kernel-runtime table as CSV to this new file")
	backend := backendFlag(fs)

	if len(args) == 0 {
		return badInput("missing analysis (one of: %s)", strings.Join(analysisNames(), ", "))
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		analyzeUsage(stdout, fs)
		return errHelp
	}
	what := args[0]
	i := slices.IndexFunc(analyses, func(a analysisKind) bool { return a.name == what })
	if i < 0 {
		return badInput("unknown analysis %q (valid: %s)", what, strings.Join(analysisNames(), ", "))
	}
	info := analyses[i]
	if err := parseFlags(fs, args[1:]); err != nil {
		if errors.Is(err, errHelp) {
			analyzeUsage(stdout, fs)
		}
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(setFlags(fs))) {
		if !slices.Contains(commonAnalyzeFlags, name) && !slices.Contains(info.flags, name) {
			return badInput("--%s does not apply to %s", name, what)
		}
	}
	for _, f := range []struct{ name, path string }{{"out", *out}, {"bench-out", *benchOut}} {
		if f.path == "" {
			continue
		}
		if err := checkNewFile(f.name, f.path); err != nil {
			return err
		}
	}

	var dirs []string
	var err error
	switch {
	case *runsFlag != "" && *root != "":
		return badInput("give --runs or --root, not both")
	case *runsFlag != "":
		dirs = splitList(*runsFlag)
		if len(dirs) == 0 {
			return badInput("--runs=%s names no run folder", *runsFlag)
		}
		for _, d := range dirs {
			if !isDir(d) {
				return badInput("--runs: %s is not a folder", d)
			}
		}
	case *root != "":
		if dirs, err = analysis.FindRuns(*root); err != nil {
			return badInput("--root: %v", err)
		}
	case what == "training-time" && *bench != "":
	default:
		return badInput("give the run folders with --runs=DIR[,DIR...] or --root=DIR")
	}

	opts := analysis.Options{DataDir: *dataDir}
	if slices.Contains(info.flags, "backend") {
		// perturb evaluates checkpoints; energy may, where a run did not record its selected epoch's rates.
		b, err := openBackend(*backend)
		if err != nil {
			return err
		}
		opts.Backend = b
	}
	// The analysis's own flags are checked before any run is loaded.
	so := analysis.ShiftOptions{Bins: *bins}
	do := analysis.DelayOptions{Points: *points, Reference: analysis.DelayReference(*reference)}
	switch what {
	case "shifts", "ts-params": // ts-params refuses --lo-hz and --hi-hz above
		if *bins < 0 {
			return badInput("--bins: %d is negative", *bins)
		}
		if so.LoHz, so.HiHz, err = optRange(*loHz, *hiHz); err != nil {
			return err
		}
	case "delays":
		if *points < 2 {
			return badInput("--points: need at least 2, got %d", *points)
		}
		if do.Reference != analysis.DelayVsIdentity && do.Reference != analysis.DelayVsInit {
			return badInput("--reference: %q is not identity or init", *reference)
		}
		if *fmaxHz != "" {
			if do.FMaxHz, err = parseFloat("fmax-hz", *fmaxHz); err != nil {
				return err
			}
			if !(do.FMaxHz > 0) {
				return badInput("--fmax-hz: must be positive, got %s", *fmaxHz)
			}
		}
	case "perturb":
		if *seed < 1 {
			return badInput("--seed: must be at least 1, got %d", *seed)
		}
	}
	var runs []*analysis.Run
	if what != "training-time" {
		if runs, err = analysis.LoadRuns(dirs, opts); err != nil {
			if isErr[*inputError](err) || errors.Is(err, os.ErrNotExist) || errors.Is(err, analysis.ErrNoCheckpoint) {
				return badInput("%v", err)
			}
			return err
		}
	}

	var (
		rep    tabular
		kernel *analysis.KernelRuntimeReport
		title  string
	)
	switch what {
	case "shifts":
		title = "Learned target-frequency shifts Δf* = f*_learned − f*_init (Hz), per layer, pooled over seeds (Fig. 2 left)"
		rep, err = analysis.TargetShifts(runs, so)
	case "delays":
		title = fmt.Sprintf("Learned group-delay shifts Δτ (reference %s): the frequency of the largest mean shift per layer, "+
			"TS module alone (Fig. 2 right) and closed-loop neuron; --out or --json give the curves", do.Reference)
		rep, err = analysis.DelayShifts(runs, do)
	case "ts-params":
		title = "Learned TS coefficients β ∈ (−1, 1) and λ ∈ (0, 1), per layer and stage, pooled over seeds (Fig. A.2)"
		rep, err = analysis.TSParams(runs, analysis.TSParamOptions{Bins: *bins})
	case "perturb":
		for _, r := range runs {
			if !r.Config.Kind().HasTargetFrequency() {
				return badInput("run %s: model %s has no target frequency to perturb", r.Dir, r.Config.Model)
			}
		}
		bar := progress.New(stderr, "fits analyze perturb", int64(3*len(runs)))
		r, err := analysis.Perturb(runs, analysis.PerturbOptions{Seed: uint64(*seed),
			Progress: func(done, total int, _ string) { bar.Set(int64(done)) }})
		bar.Done()
		if err != nil {
			return err
		}
		rep, title = r, "Inference-time target-frequency perturbation of the latest checkpoints: test accuracy (%) and paired change (Table A.8)"
	case "ctdt":
		title = "CT-DT fidelity: errors against the realized DT target of the FS module, found by a refined sweep (Table 5)"
		rep, err = analysis.CTDT(runs)
	case "energy":
		r, err := analysis.Energy(runs, analysis.EnergyOptions{Evaluate: *evaluate})
		if err != nil {
			return err
		}
		rep = r
		title = fmt.Sprintf("Theoretical energy per example (µJ), E_AC = %g pJ, E_MAC = %g pJ, firing rates of the selected checkpoint (Table 4)",
			analysis.EnergyACpJ, analysis.EnergyMACpJ)
	case "training-time":
		if *bench != "" {
			if kernel, err = analysis.KernelRuntimesRead(splitList(*bench), func(path string) ([]byte, error) {
				return readInputFile(path, maxBenchFile)
			}); err != nil {
				return badInput("--bench: %v", err)
			}
		}
		if len(dirs) > 0 {
			title = "Training time per run in minutes, median over the finished runs (Table A.4)"
			rep, err = analysis.TrainingTimes(dirs)
		}
	}
	if err != nil { // what the runs hold does not allow the analysis
		return badInput("%v", err)
	}

	if *out != "" {
		t := analysis.Table{}
		switch {
		case rep != nil:
			t = rep.Long()
		case kernel != nil:
			t = kernel.Long()
		}
		if err := writeCSV(*out, t); err != nil {
			return err
		}
	}
	if *benchOut != "" && kernel != nil {
		if err := writeCSV(*benchOut, kernel.Long()); err != nil {
			return err
		}
	}
	if *asJSON {
		o := analyzeOutput{Analysis: what, Runs: dirs, Report: rep, KernelRuntime: kernel}
		if o.Runs == nil {
			o.Runs = []string{}
		}
		return writeJSON(stdout, o)
	}
	if rep != nil {
		fmt.Fprintln(stdout, title)
		if err := rep.Summary().WriteText(stdout); err != nil {
			return err
		}
	}
	if kernel != nil {
		if rep != nil {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintln(stdout, "Kernel runtime: one training iteration (forward + backward), median ms, beside the paper's (Table A.3)")
		if err := kernel.Summary().WriteText(stdout); err != nil {
			return err
		}
	}
	return nil
}

// optRange parses the optional histogram range of shifts; both or none must be given.
func optRange(lo, hi string) (float64, float64, error) {
	if lo == "" && hi == "" {
		return 0, 0, nil
	}
	if lo == "" || hi == "" {
		return 0, 0, badInput("--lo-hz and --hi-hz go together")
	}
	l, err := parseFloat("lo-hz", lo)
	if err != nil {
		return 0, 0, err
	}
	h, err := parseFloat("hi-hz", hi)
	if err != nil {
		return 0, 0, err
	}
	if !(l < h) || math.IsInf(h-l, 0) {
		return 0, 0, badInput("--lo-hz=%s must be below --hi-hz=%s", lo, hi)
	}
	return l, h, nil
}

// writeCSV writes t as CSV to the new file path (atomically), which must not exist: a file that appeared
// at path since the flags were checked is not replaced (bad input naming it). It writes through a
// temporary file in the same folder that is hard-linked to path (the link fails when anything is there, so
// nothing is ever replaced), then removed (where the file system has no hard links: checked again, then
// renamed).
func writeCSV(path string, t analysis.Table) error {
	tmp, err := filesafe.CreateTemp(path)
	if err != nil {
		return badPath(err, "%s: cannot write a file there: %v", path, err)
	}
	defer filesafe.Discard(tmp)
	if err := t.WriteCSV(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	exists := func() error {
		return badInput("%s already exists and was not written by fits: fits never replaces a file it did not write (choose another file)", path)
	}
	err = os.Link(tmp.Name(), path)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrExist):
		return exists()
	}
	// A file system without hard links: check again, then rename.
	if _, err := os.Lstat(path); err == nil {
		return exists()
	}
	return os.Rename(tmp.Name(), path)
}
