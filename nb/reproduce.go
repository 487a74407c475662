package nb

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

// The notebooks of the paper's results (06 on) read runs that `fits sweep` trains: in quick mode the
// stand-ins of fits/experiment on data this machine has, trained once under one root folder and read by
// every notebook; in full mode the paper's recipes on the real datasets, trained by the user (locally or
// on a Slurm cluster) and never started by a notebook. This file chooses the mode and the folders from
// the environment and makes sure the runs a notebook reads exist.
//
// Environment:
//
//	FITS_MODE=full       full mode (default: quick)
//	FITS_QUICK=1         quick mode restricted to the CI subset (CISubset), which CI sets
//	FITS_RUNS=DIR        the runs' root folder (default: runs/quick or runs/full in the repository)
//	FITS_WORKERS=N       runs trained at the same time by a quick sweep (default 2)
//	FITS_FIGURES_DIR=DIR where figures are saved (default: see ResultFiguresDir)

// Mode returns the reproduction mode of the notebooks: experiment.Full when $FITS_MODE is "full",
// experiment.Quick when it is "quick" or unset. Other values are an error.
func Mode() (experiment.Mode, error) {
	v := os.Getenv("FITS_MODE")
	if strings.TrimSpace(v) == "" {
		return experiment.Quick, nil
	}
	m, err := experiment.ParseMode(v)
	if err != nil {
		return "", fmt.Errorf("FITS_MODE: %w", err)
	}
	return m, nil
}

// RepoRoot returns the repository root: $FITS_ROOT when set (`make lab` and the browser test run copies
// of the notebooks from another folder and set it), else the parent of $GONB_DIR (the notebooks folder,
// which GoNB sets) inside a notebook, else the current folder.
func RepoRoot() string {
	if d := os.Getenv("FITS_ROOT"); d != "" {
		return d
	}
	if d := os.Getenv("GONB_DIR"); d != "" {
		return filepath.Clean(filepath.Join(d, ".."))
	}
	return "."
}

// ShippedRoot returns the repository's folder of shipped results (RepoRoot()/results): finished runs of
// the paper's recipes on the real data, laid out like a runs root, that full mode reads where the user's
// runs root has no run of the same seed (see experiment.Aggregate).
func ShippedRoot() string { return filepath.Join(RepoRoot(), experiment.ShippedDir) }

// RunsRoot returns the root folder of the runs of a mode: $FITS_RUNS when set (a relative path is taken
// from the repository root), else RepoRoot()/runs/<mode> (runs/quick, runs/full), the folders `make
// reproduce` uses.
func RunsRoot(mode experiment.Mode) string {
	if d := os.Getenv("FITS_RUNS"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(RepoRoot(), d)
		}
		return d
	}
	return filepath.Join(RepoRoot(), "runs", string(mode))
}

// ResultFiguresDir returns where the notebooks of the paper's results save their figures:
// $FITS_FIGURES_DIR when set; in quick mode notebooks/.executed/figures-quick (figures of stand-in data
// stay out of the committed figures/ folder, as notebook 05's quick figures do); in full mode figures/.
func ResultFiguresDir(mode experiment.Mode) string {
	if d := os.Getenv("FITS_FIGURES_DIR"); d != "" {
		return d
	}
	if mode == experiment.Quick {
		return filepath.Join(RepoRoot(), "notebooks", ".executed", "figures-quick")
	}
	return filepath.Join(RepoRoot(), "figures")
}

// PlannedRun is one run that a table needs: an experiment trained with one seed, and its state.
type PlannedRun struct {
	Experiment experiment.Experiment
	Seed       int64
	// Dir is experiment.RunDir(root, ID, seed), or in full mode the shipped run's folder under
	// ShippedRoot() when root has no finished run of that seed and the repository ships one (Shipped).
	Dir     string
	Shipped bool
	// Finished is true when Dir holds a result.json with every planned epoch of the experiment's recipe.
	Finished bool
	// Stale says how the run in Dir departs from the seed and recipe (experiment.ReadRun: the recipe
	// changed since it was trained); "" otherwise. A stale run is not Finished, and no sweep retrains it
	// over its folder: delete the folder to train it again.
	Stale string
}

// CISubset are the experiments that quick mode trains when FITS_QUICK=1 (what CI sets), each with its
// first quick seed only (except CIEverySeed): 23 of the 49 quick runs of the paper's cells, enough for
// every notebook to show every table and figure with at least one run of ours (Plan adds the fidelity
// study's 33 whole). Left out: the GSC and SHD* ablation rows that no other table
// reads (Tables A.5, A.6), M = 3-5 (Table A.7), seeds 2 and 3 of Figure 2, and three of the four DVS
// models (the most expensive runs of the plan, 2-7 minutes each on two shared cores). The recipes are the
// quick plan's, so these runs count as runs of the full quick plan too: a later reproduction without
// FITS_QUICK only adds the missing ones.
var CISubset = []string{
	"shd-best/lif/w128", "shd-best/fsts-m1/w128", // Table 1 (SHD); Table 5, Figure 3 and notebook 13 read the FiTS run
	"shd-val/lif/w256", "shd-val/fsts-m2/w256", // Table 1 (SHD*)
	"ssc/lif/w512", "ssc/adaptlif/w512", "ssc/fs-frozen/w512", "ssc/fs/w512", "ssc/fsts-m1/w512", "ssc/fsts-m2/w512", // Tables 1 (SSC), 3, 4, A.8
	"gsc/lif/w512", "gsc/fsts-m1/w512", // Table 2
	"gsc-org/fsts-m1/w512", // Figure 2, Figure A.2 (seed 1)
	"smnist/fsts-m1/w256",  // Table A.9
	"dvs/fs",               // Table A.10
}

// CIEverySeed are the experiments of CISubset that CI trains with every quick seed, not only the first:
// the four rows of Table 3 whose ordering (LIF ≈ adaptive LIF < FS frozen < FS) the quick reproduction
// must show, which one seed of the synthetic stand-in cannot (its seed-to-seed spread, 66-98 % for FS
// frozen, is larger than the step from FS frozen to FS).
var CIEverySeed = []string{"ssc/lif/w512", "ssc/adaptlif/w512", "ssc/fs-frozen/w512", "ssc/fs/w512"}

// CIMode reports whether quick mode is restricted to CISubset ($FITS_QUICK set and not "0").
func CIMode() bool {
	v := strings.TrimSpace(os.Getenv("FITS_QUICK"))
	return v != "" && v != "0"
}

// Plan returns the runs that the tables and figures need in a mode under root: every experiment that
// feeds one of them (in experiment.All's order, each once) and has a recipe in the mode, with the
// mode's seeds (Experiment.SeedsFor). In quick mode with CIMode, only the experiments of CISubset with
// their first seed, and the fidelity study whole (notebook 14 pairs its variants by seed). Labels are
// parsed by experiment.ParseLabel ("3", "A.7", "fig2", "fidelity").
func Plan(root string, mode experiment.Mode, tables []string) ([]PlannedRun, error) {
	if _, err := experiment.ParseMode(string(mode)); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, t := range tables {
		l, err := experiment.ParseLabel(t)
		if err != nil {
			return nil, err
		}
		if _, err := experiment.ForTable(l); err != nil {
			return nil, err
		}
		want[l] = true
	}
	var out []PlannedRun
	for _, e := range experiment.All() {
		if !slices.ContainsFunc(e.Tables, func(l string) bool { return want[l] }) {
			continue
		}
		if _, err := e.Recipe(mode); err != nil {
			continue // no quick stand-in for this cell
		}
		seeds := e.SeedsFor(mode)
		if mode == experiment.Quick && CIMode() && !e.Feeds(experiment.Fidelity) {
			if !slices.Contains(CISubset, e.ID) || len(seeds) == 0 {
				continue
			}
			if !slices.Contains(CIEverySeed, e.ID) {
				seeds = seeds[:1]
			}
		}
		for _, s := range seeds {
			dir := experiment.RunDir(root, e.ID, s)
			want, err := e.Config(mode, s)
			if err != nil {
				return nil, err
			}
			st := experiment.ReadRun(dir, s, &want)
			done, stale := st.Current(), st.Stale
			shipped := false
			if !done && mode == experiment.Full && !train.HoldsRun(dir) {
				if d := experiment.RunDir(ShippedRoot(), e.ID, s); experiment.ReadRun(d, s, &want).Current() {
					dir, done, shipped = d, true, true
				}
			}
			out = append(out, PlannedRun{Experiment: e, Seed: s, Dir: dir, Finished: done, Stale: stale, Shipped: shipped})
		}
	}
	return out, nil
}

// EnsureOptions configure EnsureRuns.
type EnsureOptions struct {
	// Fits is the fits binary that trains; "" means RepoRoot()/bin/fits, (re)built with `go build`
	// first (a no-op when it is up to date).
	Fits string
	// Workers is the number of runs trained at the same time; 0 means $FITS_WORKERS, else 2.
	Workers int
	// Log receives the commands run and their output; nil discards them.
	Log io.Writer
	// Live passes the output to Log unchanged, for a terminal that redraws progress lines in place.
	// Otherwise Log receives completed lines only, each as its last redrawn state (a notebook's output).
	Live bool
	// Train, in full mode, trains the missing runs on this machine. Without it full mode trains nothing.
	// Quick mode always trains what is missing.
	Train bool
}

// EnsureRuns makes sure the runs that the tables need (Plan) exist under root and returns their
// states. In quick mode it trains every missing or interrupted run with `fits sweep` (finished runs are
// skipped, interrupted ones resumed), after synthesising the espeak-ng spoken digits once (`fits data
// convert --dataset=espeak`, skipped when cached) so that parallel runs do not race to make them. In full
// mode it trains nothing unless opts.Train: the runs are the user's sweep on the real datasets
// (FullCommands says how to start it). The error lists the runs that a sweep left unfinished and the runs
// trained with another recipe (Stale), which it leaves alone.
func EnsureRuns(root string, mode experiment.Mode, tables []string, opts EnsureOptions) ([]PlannedRun, error) {
	runs, err := Plan(root, mode, tables)
	if err != nil {
		return nil, err
	}
	var missing, stale []PlannedRun
	for _, r := range runs {
		switch {
		case r.Stale != "":
			stale = append(stale, r)
		case !r.Finished:
			missing = append(missing, r)
		}
	}
	log := cmp.Or(opts.Log, io.Discard)
	if len(missing) == 0 || (mode == experiment.Full && !opts.Train) {
		return runs, staleError(stale)
	}
	exe, err := fitsBinary(opts.Fits, log)
	if err != nil {
		return runs, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = 2
		if v, err := strconv.Atoi(os.Getenv("FITS_WORKERS")); err == nil && v > 0 {
			workers = v
		}
	}
	if mode == experiment.Quick {
		if err := prepareQuickData(exe, missing, log, opts.Live); err != nil {
			return runs, err
		}
	}
	for _, g := range sweepGroups(missing) {
		args := []string{"sweep", "--experiments=" + strings.Join(g.ids, ","), "--seeds=" + g.seeds,
			"--mode=" + string(mode), "--out=" + root, "--workers=" + strconv.Itoa(workers)}
		// A failed run does not stop the others; the check below names every run left unfinished.
		_ = runLogged(log, opts.Live, exe, args...)
	}
	runs, err = Plan(root, mode, tables)
	if err != nil {
		return nil, err
	}
	var failed []string
	for _, r := range runs {
		if !r.Finished && r.Stale == "" {
			failed = append(failed, fmt.Sprintf("%s (log: %s)", r.Dir, filepath.Join(r.Dir, "log.txt")))
		}
	}
	if len(failed) > 0 {
		return runs, fmt.Errorf("%d run(s) did not finish: %s", len(failed), strings.Join(failed, "; "))
	}
	return runs, staleError(stale)
}

// staleError names the runs trained with another recipe and what to do, or returns nil.
func staleError(stale []PlannedRun) error {
	if len(stale) == 0 {
		return nil
	}
	var parts []string
	for _, r := range stale {
		parts = append(parts, fmt.Sprintf("%s (%s)", r.Dir, r.Stale))
	}
	return fmt.Errorf("%d run(s) were trained with another recipe than the experiment's current one; delete their folders to train them again: %s",
		len(stale), strings.Join(parts, "; "))
}

// FullCommands returns the commands that train the missing full-mode runs of the tables (labels as Plan
// takes them) under root: for each table with a missing run, `fits sweep --table` on local workers and its
// Slurm variant (a table's sweep trains exactly the runs the table reads; finished ones are skipped).
func FullCommands(root string, tables []string, runs []PlannedRun) []string {
	var out []string
	for _, t := range tables {
		l, err := experiment.ParseLabel(t)
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(runs, func(r PlannedRun) bool { return !r.Finished && r.Experiment.Feeds(l) }) {
			continue
		}
		base := fmt.Sprintf("bin/fits sweep --table=%s --mode=full --out=%s", ShortLabel(l), root)
		out = append(out, base+" --workers=1", base+" --emit=slurm --gres=gpu:1")
	}
	return out
}

// ShortLabel writes a paper label the way the CLI's --table flags accept it without quoting: "Table 3"
// -> "3", "Table A.7" -> "A.7", "Figure 2" -> "fig2", "Figure A.2" -> "figA.2".
func ShortLabel(label string) string {
	if s, ok := strings.CutPrefix(label, "Table "); ok {
		return s
	}
	if s, ok := strings.CutPrefix(label, "Figure "); ok {
		return "fig" + s
	}
	return label
}

// sweepGroup is one `fits sweep` call: experiments sharing their seeds.
type sweepGroup struct {
	ids   []string
	seeds string
}

// sweepGroups splits runs into sweeps, one per list of seeds, in the runs' order.
func sweepGroups(runs []PlannedRun) []sweepGroup {
	planned := map[string][]string{}
	var ids []string
	for _, r := range runs {
		if _, ok := planned[r.Experiment.ID]; !ok {
			ids = append(ids, r.Experiment.ID)
		}
		planned[r.Experiment.ID] = append(planned[r.Experiment.ID], strconv.FormatInt(r.Seed, 10))
	}
	var groups []sweepGroup
	for _, id := range ids {
		seeds := strings.Join(planned[id], ",")
		i := slices.IndexFunc(groups, func(g sweepGroup) bool { return g.seeds == seeds })
		if i < 0 {
			i, groups = len(groups), append(groups, sweepGroup{seeds: seeds})
		}
		groups[i].ids = append(groups[i].ids, id)
	}
	return groups
}

// prepareQuickData synthesises the espeak-ng spoken digits when a missing quick run reads them.
func prepareQuickData(exe string, runs []PlannedRun, log io.Writer, live bool) error {
	for _, r := range runs {
		if strings.HasPrefix(r.Experiment.Quick.Dataset, "espeak-digits") {
			if err := runLogged(log, live, exe, "data", "convert", "--dataset=espeak"); err != nil {
				return fmt.Errorf("preparing the espeak-ng spoken digits: %w", err)
			}
			return nil
		}
	}
	return nil
}

// fitsBinary returns the fits binary to run: exe when given, else RepoRoot()/bin/fits built (or found
// up to date) by `go build`.
func fitsBinary(exe string, log io.Writer) (string, error) {
	if exe != "" {
		return exe, nil
	}
	root, err := filepath.Abs(RepoRoot())
	if err != nil {
		return "", err
	}
	exe = filepath.Join(root, "bin", "fits")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/fits")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	fmt.Fprintf(log, "$ go build -o bin/fits ./cmd/fits\n")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the fits binary: %w\n%s", err, out.String())
	}
	return exe, nil
}

// runLogged runs exe with args, writing the command line and its output to log: unchanged when live,
// else the completed lines only (a line redrawn in place with carriage returns, such as a progress bar,
// keeps only its last state).
func runLogged(log io.Writer, live bool, exe string, args ...string) error {
	fmt.Fprintf(log, "$ %s %s\n", filepath.Base(exe), strings.Join(args, " "))
	cmd := exec.Command(exe, args...)
	w := &lineWriter{w: log}
	cmd.Stdout, cmd.Stderr = io.Writer(w), io.Writer(w)
	if live {
		cmd.Stdout, cmd.Stderr = log, log
	}
	err := cmd.Run()
	w.Flush()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%s %s: exit status %d", filepath.Base(exe), args[0], exit.ExitCode())
	}
	return err
}

// lineWriter passes completed lines to w, each reduced to the text after its last carriage return and
// without terminal control sequences.
type lineWriter struct {
	w   io.Writer
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

// Flush writes a last unterminated line.
func (l *lineWriter) Flush() {
	if len(bytes.TrimSpace(l.buf)) > 0 {
		l.emit(l.buf)
	}
	l.buf = nil
}

// ansiCSI matches terminal control sequences (ESC [ ... letter), such as the erase-line of progress bars.
var ansiCSI = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

func (l *lineWriter) emit(line []byte) {
	if i := bytes.LastIndexByte(line, '\r'); i >= 0 {
		line = line[i+1:]
	}
	line = ansiCSI.ReplaceAll(line, nil)
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	fmt.Fprintf(l.w, "%s\n", line)
}

// RunSummary lists, per table or figure, how many of its runs have finished, how many are unfinished
// (a checkpoint, log or result but no complete run of the current recipe) and the first missing or
// unfinished runs.
func RunSummary(tables []string, runs []PlannedRun) Table {
	t := Table{Caption: "Runs of this notebook's tables and figures", Header: []string{"table / figure", "finished", "unfinished", "missing", "not finished (first 4)"}}
	for _, label := range tables {
		l, err := experiment.ParseLabel(label)
		if err != nil {
			l = label
		}
		var done, unfinished, missing int
		var names []string
		for _, r := range runs {
			if !r.Experiment.Feeds(l) {
				continue
			}
			switch {
			case r.Finished:
				done++
				continue
			case partial(r.Dir):
				unfinished++
			default:
				missing++
			}
			if len(names) < 4 {
				names = append(names, fmt.Sprintf("%s seed %d", r.Experiment.ID, r.Seed))
			}
		}
		total := done + unfinished + missing
		t.Rows = append(t.Rows, []string{l, fmt.Sprintf("%d / %d", done, total), strconv.Itoa(unfinished), strconv.Itoa(missing), strings.Join(names, ", ")})
	}
	return t
}

// partial reports whether dir holds anything of a run (a checkpoint, a result or a log).
func partial(dir string) bool {
	if train.HasCheckpoint(dir) {
		return true
	}
	for _, f := range []string{train.ResultFile, "log.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}
