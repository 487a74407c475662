package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/sweep"
	"github.com/fits-snn/fits/nb"
)

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
