package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/sweep"
	"github.com/fits-snn/fits/internal/owned"
	"github.com/fits-snn/fits/nb"
)

// sweepUsage completes the flag list of `fits sweep --help`.
const sweepUsage = `
Extra flags of 'fits train' for every run go after --, e.g.
  fits sweep --table=3 --mode=quick -- --epochs=2
(the tables count only runs that keep the recipe in all but its schedule: epochs, batch, lr, dropout, limits, engine).
Runs live in OUT/ID/seed-S (checkpoints, result.json, log.txt); the index is OUT/sweep.json.
A sweep restarted with the same flags skips finished runs and resumes interrupted ones.`

func runSweep(args []string, stdout, stderr io.Writer) error {
	var extra []string // the extra flags of fits train, after "--"
	if i := slices.Index(args, "--"); i >= 0 {
		args, extra = args[:i], args[i+1:]
	}
	fs := newFlagSet("sweep", stderr)
	table := fs.String("table", "", `table or figure: every experiment feeding it ("Table 3", "3", "A.7", "fig2"; listed by fits experiments)`)
	ids := listFlag(fs, "experiments", "", "comma-separated experiment IDs (instead of --table)")
	seeds := listFlag(fs, "seeds", "", "seeds, e.g. 1-5 or 1,3,7 (default: each experiment's own)")
	mode := fs.String("mode", string(experiment.Full), "schedule: full (the paper's) or quick")
	out := fs.String("out", "", "root folder of the sweep (default runs/MODE, where `fits train --experiment` puts its runs)")
	workers := fs.Int("workers", 1, "runs trained at the same time on this machine")
	emit := fs.String("emit", "", "slurm: write OUT/sweep.sbatch (an array job, one task per run) and OUT/runs.txt instead of training")
	collect := fs.Bool("collect", false, "aggregate the finished runs into OUT/table-*.md and .csv (the --table, or every table the --experiments feed) and refresh OUT/sweep.json")
	cpus := fs.Int("cpus-per-task", 4, "--emit=slurm: CPUs per array task")
	mem := fs.String("mem", "16G", "--emit=slurm: memory per array task (Slurm --mem)")
	wall := fs.String("time", "24:00:00", "--emit=slurm: wall-time limit per array task (Slurm --time)")
	partition := fs.String("partition", "", "--emit=slurm: Slurm partition (default: the cluster's default)")
	gres := fs.String("gres", "", "--emit=slurm: generic resources per task, e.g. gpu:1")
	jobName := fs.String("job-name", "fits-sweep", "--emit=slurm: Slurm job name")
	dryRun := fs.Bool("dry-run", false, "list the grid's runs (experiment, seed, state, directory) and do nothing")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout: the index, the emitted files, or the collected tables")
	quiet := fs.Bool("quiet", false, "no progress display on stderr")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, errHelp) {
			fmt.Fprintln(stderr, strings.TrimSpace(sweepUsage))
		}
		return err
	}
	if *emit != "" && *emit != "slurm" {
		return badInput("--emit: unknown target %q (valid: slurm)", *emit)
	}
	if *emit != "" && (*collect || *dryRun) || *collect && *dryRun {
		return badInput("--emit, --collect and --dry-run exclude each other")
	}
	m, err := experiment.ParseMode(*mode)
	if err != nil {
		return badInput("--mode: %v", err)
	}
	*out = cmp.Or(*out, filepath.Join("runs", string(m)))
	spec := sweep.Spec{Table: *table, Mode: m, Root: *out, TrainArgs: extra}
	if *ids != "" {
		for _, id := range strings.Split(*ids, ",") {
			spec.Experiments = append(spec.Experiments, strings.TrimSpace(id))
		}
	}
	if *table != "" && *ids != "" {
		return badInput("--table and --experiments exclude each other")
	}
	if *table == "" && *ids == "" {
		return badInput("give --table=LABEL or --experiments=ID,ID (tables: %s)", strings.Join(experiment.Tables(), ", "))
	}
	if *seeds != "" {
		if spec.Seeds, err = sweep.ParseSeeds(*seeds); err != nil {
			return badInput("--seeds: %v", err)
		}
	}
	g, err := sweep.NewGrid(spec)
	if err != nil {
		return badInput("%v", err)
	}
	if err := checkSweepRuns(g); err != nil {
		return err
	}
	if !*dryRun { // every other form writes under the root: a root that cannot be written is bad input now
		if err := checkWritableDir("out", *out); err != nil {
			return err
		}
	}
	if !*asJSON {
		sweepNotes(stderr, g, *table, extra)
	}
	switch {
	case *dryRun:
		return sweepDryRun(g, *asJSON, stdout)
	case *emit == "slurm":
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		if exe, err = filepath.Abs(exe); err != nil {
			return err
		}
		o := sweep.SlurmOptions{CPUsPerTask: *cpus, Mem: *mem, Time: *wall, Partition: *partition, Gres: *gres,
			JobName: *jobName, Exe: exe}
		if err := o.Validate(); err != nil {
			return badInput("%v", err)
		}
		return sweepEmit(g, o, *asJSON, stdout)
	case *collect:
		return sweepCollect(g, *table, *asJSON, stdout)
	}
	return sweepLocal(g, *workers, *quiet, *asJSON, stdout, stderr)
}

// sweepNotes prints on stderr what the grid leaves out and what its quick runs need.
func sweepNotes(stderr io.Writer, g *sweep.Grid, table string, extra []string) {
	if len(g.Omitted) > 0 {
		fmt.Fprintf(stderr, "%s: %d of its experiments have no %s-mode recipe and are left out (see `fits experiments --table=%s`)\n",
			table, len(g.Omitted), g.Mode, table)
	}
	if g.Mode != experiment.Quick || slices.ContainsFunc(extra, func(a string) bool { return strings.HasPrefix(a, "--data-dir") }) {
		return
	}
	seen := map[string]bool{}
	for _, r := range g.Runs {
		if e, err := experiment.Lookup(r.Experiment); err == nil && e.QuickFixture != "" && !seen[e.QuickFixture] {
			seen[e.QuickFixture] = true
			fmt.Fprintf(stderr, "note: the quick runs of %s read files that `fits data synth --format=%s --out=DIR` writes; pass them with -- --data-dir=DIR\n",
				r.Experiment, e.QuickFixture)
		}
	}
}

// sweepDryRun prints one line per run: experiment, seed, state (from its directory) and directory.
func sweepDryRun(g *sweep.Grid, asJSON bool, stdout io.Writer) error {
	type run struct {
		Experiment string       `json:"experiment"`
		Seed       int64        `json:"seed"`
		Status     sweep.Status `json:"status"`
		Dir        string       `json:"dir"`
		Command    []string     `json:"command"`
	}
	var runs []run
	for _, r := range g.Runs {
		st := sweep.Inspect(r)
		runs = append(runs, run{r.Experiment, r.Seed, st.Status, r.Dir, g.Command(r, st.Status == sweep.Partial)})
	}
	if asJSON {
		return writeJSON(stdout, map[string]any{"root": g.Root, "mode": g.Mode, "runs": runs})
	}
	for _, r := range runs {
		fmt.Fprintf(stdout, "%s\t%d\t%s\t%s\n", r.Experiment, r.Seed, r.Status, r.Dir)
	}
	return nil
}

func sweepLocal(g *sweep.Grid, workers int, quiet, asJSON bool, stdout, stderr io.Writer) error {
	if workers < 1 {
		return badInput("--workers must be at least 1, got %d", workers)
	}
	if err := checkSweepFiles("out", g.Root, sweep.IndexFile); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := sweep.Options{Workers: workers}
	if !quiet {
		opts.Progress = stderr
	}
	idx, err := sweep.Execute(ctx, g, opts)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: the runs in flight keep their checkpoints; run the same command to resume")
		}
		return sweepError(err)
	}
	if asJSON {
		if err := writeJSON(stdout, idx); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "%d runs: %s; index %s\n", len(idx.Runs), countsText(idx),
			filepath.Join(g.Root, sweep.IndexFile))
	}
	if n := idx.Failed(); n > 0 {
		return fmt.Errorf("%d of %d runs failed (see the errors in %s and each run's %s)", n, len(idx.Runs),
			filepath.Join(g.Root, sweep.IndexFile), sweep.LogFile)
	}
	return nil
}

// sweepError turns the errors caused by the choice of --out into bad input (exit status 2).
func sweepError(err error) error {
	if errors.Is(err, sweep.ErrLocked) || errors.Is(err, sweep.ErrOtherMode) || errors.Is(err, sweep.ErrSlurmRoot) {
		return badInput("%v", err)
	}
	return err
}

// countsText lists the index's counts per status, e.g. "3 finished, 1 failed".
func countsText(idx *sweep.Index) string {
	var parts []string
	for _, s := range []sweep.Status{sweep.Finished, sweep.Failed, sweep.Running, sweep.Partial, sweep.Pending} {
		if n := idx.Counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return strings.Join(parts, ", ")
}

func sweepEmit(g *sweep.Grid, o sweep.SlurmOptions, asJSON bool, stdout io.Writer) error {
	if err := checkSweepFiles("out", g.Root, sweep.IndexFile, sweep.RunsFile, sweep.SlurmScript); err != nil {
		return err
	}
	path, err := sweep.EmitSlurm(g, o)
	if err != nil {
		return sweepError(err)
	}
	if err := owned.Note(g.Root, sweep.RunsFile, sweep.SlurmScript); err != nil {
		return err
	}
	submit := "sbatch " + path
	if asJSON {
		return writeJSON(stdout, map[string]any{"script": path, "runs_file": filepath.Join(g.Root, sweep.RunsFile),
			"tasks": len(g.Runs), "submit": submit})
	}
	fmt.Fprintf(stdout, "wrote %s (%d array tasks) and %s\nsubmit with:\n  %s\n", path, len(g.Runs),
		filepath.Join(g.Root, sweep.RunsFile), submit)
	fmt.Fprintf(stdout, "then, when tasks have finished:\n  fits sweep --collect ... --out=%s\n", g.Root)
	return nil
}

func sweepCollect(g *sweep.Grid, table string, asJSON bool, stdout io.Writer) error {
	var tables []string
	if table != "" {
		tables = []string{table}
	}
	written := []string{sweep.IndexFile}
	for _, l := range collectTables(g, table) {
		stem := experiment.Stem(l)
		written = append(written, stem+".md", stem+".csv")
	}
	if err := checkSweepFiles("out", g.Root, written...); err != nil {
		return err
	}
	idx, files, err := sweep.Collect(g, tables)
	for _, f := range files {
		for _, p := range []string{f.Markdown, f.CSV} {
			if rel, rerr := filepath.Rel(g.Root, p); rerr == nil {
				if nerr := owned.Note(g.Root, rel); nerr != nil && err == nil {
					err = nerr
				}
			}
		}
	}
	if errors.Is(err, experiment.ErrNotAggregated) {
		return badInput("--table: %v", err)
	}
	if err != nil {
		return sweepError(err)
	}
	if asJSON {
		return writeJSON(stdout, map[string]any{"index": idx, "tables": files})
	}
	fmt.Fprintf(stdout, "%d runs: %s; index %s\n", len(idx.Runs), countsText(idx), filepath.Join(g.Root, sweep.IndexFile))
	for _, f := range files {
		fmt.Fprintf(stdout, "\n%s (%s, %s)\n\n%s", f.Label, f.Markdown, f.CSV, f.Table.Markdown())
	}
	return nil
}

// collectTables returns the labels of the tables that sweep.Collect writes for --table: table (parsed),
// or when it is empty every aggregated table the grid's experiments feed. A label that does not parse, or
// a grid whose tables cannot be listed, is left to Collect to report.
func collectTables(g *sweep.Grid, table string) []string {
	if table != "" {
		if l, err := experiment.ParseLabel(table); err == nil {
			return []string{l}
		}
		return nil
	}
	feeds, _ := g.Tables()
	return slices.DeleteFunc(experiment.AggregatedTables(), func(l string) bool { return !slices.Contains(feeds, l) })
}

// checkSweepFiles checks, before a sweep writes files beside its runs in root (the --flagName folder),
// that each of files (relative to root) may be written: absent, recorded in root's record of the files
// fits wrote (package owned) and unchanged since, or — the index sweep.json — an index that a sweep wrote.
// A user's file of one of those names (or a folder, or a symbolic link) is bad input naming it, and
// nothing is written.
func checkSweepFiles(flagName, root string, files ...string) error {
	rec, err := owned.Open(root)
	if err != nil {
		return badInput("--%s=%s: %v", flagName, root, err)
	}
	var bad []string
	for _, f := range files {
		if rec.Replaceable(f) || f == sweep.IndexFile && isSweepIndex(filepath.Join(root, f)) {
			continue
		}
		bad = append(bad, f)
	}
	if len(bad) > 0 {
		return badInput("--%s=%s: %v", flagName, root, &owned.ConflictError{Dir: root, Paths: bad})
	}
	return nil
}

// isSweepIndex reports whether path is a regular file (at most 64 MiB) holding a sweep index as
// sweep.Index.Write writes it: a JSON object with the root, a mode of the experiments, the time written,
// the counts and the runs.
func isSweepIndex(path string) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 64<<20 {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	for _, k := range []string{"root", "mode", "updated", "counts", "runs"} {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	var mode string
	if json.Unmarshal(m["mode"], &mode) != nil {
		return false
	}
	_, err = experiment.ParseMode(mode)
	return err == nil
}

// reproduceRun is one run in the JSON output of `fits reproduce`.
type reproduceRun struct {
	Experiment string `json:"experiment"`
	Seed       int64  `json:"seed"`
	Dir        string `json:"dir"`
	Finished   bool   `json:"finished"`
}

// reproduceOutput is the JSON form of `fits reproduce --json`.
type reproduceOutput struct {
	Mode experiment.Mode `json:"mode"`
	// CISubset is true when FITS_QUICK=1 restricted quick mode to nb.CISubset.
	CISubset bool           `json:"ci_subset"`
	Root     string         `json:"root"`
	Tables   []string       `json:"tables"`
	Finished int            `json:"finished"`
	Total    int            `json:"total"`
	Runs     []reproduceRun `json:"runs"`
	// Commands train the missing runs of full mode (fits sweep on local workers, or a Slurm array job).
	Commands []string `json:"commands,omitempty"`
	// Error says which runs a quick sweep left unfinished.
	Error string `json:"error,omitempty"`
}

func runReproduce(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reproduce", stderr)
	modeName := fs.String("mode", string(experiment.Quick), "quick (stand-in data, trained here; with FITS_QUICK=1 in the environment only the CI subset) or full (the paper's recipes on the real datasets)")
	root := fs.String("root", "", "root folder of the runs (default runs/MODE)")
	tables := fs.String("tables", "", `tables and figures, comma-separated ("3,A.7,fig2"; default: every one with training runs)`)
	workers := fs.Int("workers", 2, "runs trained at the same time")
	trainFull := fs.Bool("train", false, "full mode: train the missing runs on this machine with fits sweep (without it, full mode trains nothing)")
	asJSON := fs.Bool("json", false, "print one JSON object: every run and its state")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	mode, err := experiment.ParseMode(*modeName)
	if err != nil {
		return badInput("--mode: %v", err)
	}
	if *workers < 1 {
		return badInput("--workers: must be at least 1, got %d", *workers)
	}
	if *trainFull && mode != experiment.Full {
		return badInput("--train applies to full mode (quick mode always trains what is missing)")
	}
	labels := experiment.Tables()
	if strings.TrimSpace(*tables) != "" {
		labels = nil
		for _, t := range strings.Split(*tables, ",") {
			l, err := experiment.ParseLabel(t)
			if err != nil {
				return badInput("--tables: %v", err)
			}
			if _, err := experiment.ForTable(l); err != nil {
				return badInput("--tables: %v", err)
			}
			labels = append(labels, l)
		}
	}
	*root = cmp.Or(*root, filepath.Join("runs", string(mode)))
	if st, err := os.Stat(*root); err == nil && !st.IsDir() {
		return badInput("--root=%s is not a folder", *root)
	}
	if mode == experiment.Quick || *trainFull {
		// The sweeps it starts write the index beside the runs: a user's file of its name is refused
		// before anything is trained.
		if err := checkSweepFiles("root", *root, sweep.IndexFile); err != nil {
			return err
		}
		if err := checkWritableDir("root", *root); err != nil {
			return err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	opts := nb.EnsureOptions{Fits: exe, Workers: *workers, Train: *trainFull, Log: stderr, Live: isTerminal(stderr)}
	runs, ensureErr := nb.EnsureRuns(*root, mode, labels, opts)
	if runs == nil && ensureErr != nil {
		return ensureErr
	}
	out := reproduceOutput{Mode: mode, CISubset: mode == experiment.Quick && nb.CIMode(), Root: *root, Tables: labels, Total: len(runs), Runs: []reproduceRun{}}
	for _, r := range runs {
		out.Runs = append(out.Runs, reproduceRun{Experiment: r.Experiment.ID, Seed: r.Seed, Dir: r.Dir, Finished: r.Finished})
		if r.Finished {
			out.Finished++
		}
	}
	if mode == experiment.Full && out.Finished < out.Total && !*trainFull {
		out.Commands = nb.FullCommands(*root, labels, runs)
	}
	if ensureErr != nil {
		out.Error = ensureErr.Error()
	}
	if *asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
		return ensureErr
	}
	for _, l := range labels {
		done, total := 0, 0
		for _, r := range runs {
			if r.Experiment.Feeds(l) {
				total++
				if r.Finished {
					done++
				}
			}
		}
		fmt.Fprintf(stdout, "%-11s %d of %d runs finished\n", l, done, total)
	}
	subset := ""
	if out.CISubset {
		subset = " (FITS_QUICK=1: the CI subset)"
	}
	fmt.Fprintf(stdout, "%s mode%s, %s: %d of %d runs finished\n", mode, subset, *root, out.Finished, out.Total)
	if len(out.Commands) > 0 {
		fmt.Fprintln(stdout, "full mode trains nothing unless asked (--train). The missing runs are trained by, per table:")
		for _, c := range out.Commands {
			fmt.Fprintln(stdout, "  "+c)
		}
	}
	return ensureErr
}

// isTerminal reports whether w is a terminal (a character device), where progress lines redraw in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
