// Command fits is the command-line interface of the FiTS toolkit: closed-form theory, responses,
// simulation, training, evaluation, benchmarks, figures and datasets.
//
// Every subcommand takes flags as --name=value, lists as comma-separated values (or --name=@FILE to read
// them from a file), and --json prints exactly one JSON object on stdout.
//
// Errors follow one convention, decided in one place (exitStatus): bad input of any kind — flags, dataset
// files, checkpoints, output paths, unsupported combinations — prints one line on stderr naming the thing
// and the problem and exits with status 2; internal failures (a backend that cannot start, a full disk)
// print one line and exit with status 1. Usage goes to stderr whenever the exit status is not 0. No
// panic trace is ever printed.
//
// Measured times: docs/performance.md, and docs/performance-notes.md for the measurements these comments
// once quoted.
package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/fits-snn/fits/data"
	_ "github.com/fits-snn/fits/data/all" // registers every dataset with package data
	"github.com/fits-snn/fits/fits/bench"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/owned"
)

// command is one subcommand of the CLI.
type command struct {
	summary string
	// run executes the subcommand with its own arguments (without the subcommand name).
	run func(args []string, stdout, stderr io.Writer) error
}

// commands are the subcommands of the CLI, by name.
var commands = map[string]command{
	"aggregate":   {"a paper table from finished runs: mean ± std over seeds beside the paper's numbers (Markdown, CSV)", runAggregate},
	"analyze":     {"analyses of trained runs: shifts, delays, ts-params, perturb, ctdt, energy, training-time", runAnalyze},
	"bench":       {"time one training iteration (forward + backward) per variant: the paper's kernel table or the Open Neuromorphic shape", runBench},
	"data":        {"datasets: list, download, verify, convert, synth (fixtures and full-size stand-ins in the official formats), features, load, split", runData},
	"demo":        {"paper-vs-ours tables: theory numbers, and the ablation ladder trained on the synthetic task", runDemo},
	"eval":        {"evaluate a training checkpoint on its validation and test splits", runEval},
	"experiments": {"the paper's table cells as experiments: ids, tables fed, full and quick recipes (--table filters)", runExperiments},
	"export":      {"write a run of this toolkit in the layout of the authors' released PyTorch code (--format=released)", runExport},
	"figures":     {"write the theory figures (notebooks 01-04) as SVG and PNG", runFigures},
	"import":      {"turn a run folder of the authors' released PyTorch code (best.pth, config.json, metrics.json) into a run of this toolkit", runImport},
	"reproduce":   {"the runs the result notebooks read: quick mode trains every missing stand-in run, full mode lists finished and missing runs", runReproduce},
	"response":    {"frequency responses (magnitude, phase, group delay) of FS, TS and the closed-loop neuron", runResponse},
	"selftest":    {"check that this machine and backend compute FiTS correctly: every engine against the float64 oracle and the released code's golden steps", runSelftest},
	"simulate":    {"run one FiTS neuron (Algorithm 1) on input currents from a file: float64 reference or GoMLX graph", runSimulate},
	"sweep":       {"train a table's grid of experiments x seeds on local workers, or emit a Slurm array job; --collect aggregates", runSweep},
	"theory":      {"closed forms: κ for target frequencies (Theorem 1), realized DT targets (Theorem 2), Jury bounds", runTheory},
	"train":       {"train a FiTS network (checkpoint every epoch, --resume, result.json)", runTrain},
}

func main() {
	execWithHugePageMalloc()
	if len(os.Args) > 1 && trainingCommands[os.Args[1]] && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs the CLI and returns the process exit status. Tests call it directly.
func runMain(args []string, stdout, stderr io.Writer) (status int) {
	defer func() {
		if r := recover(); r != nil {
			msg := strings.SplitN(fmt.Sprint(r), "\n", 2)[0]
			fmt.Fprintf(stderr, "fits: internal error: %s\n", msg)
			status = 1
		}
	}()
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	if args[0] == "help" && len(args) > 1 {
		// fits help CMD is fits CMD --help.
		if _, ok := commands[args[1]]; !ok {
			fmt.Fprintf(stderr, "fits help: unknown command %q (valid: %s)\n", args[1], strings.Join(commandNames(), ", "))
			return 2
		}
		return runMain([]string{args[1], "--help"}, stdout, stderr)
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "fits: unknown command %q (valid: %s; 'fits help' lists them)\n", args[0], strings.Join(commandNames(), ", "))
		return 2
	}
	err := cmd.run(args[1:], stdout, stderr)
	if err == nil || errors.Is(err, errHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "fits %s: %s\n", args[0], strings.Join(strings.Fields(err.Error()), " ")) // one line
	return exitStatus(err)
}

// exitStatus is the one place that decides the exit status of a command that failed with err: 2 when the
// input is at fault, 1 otherwise.
func exitStatus(err error) int {
	if badInputError(err) {
		return 2
	}
	return 1
}

// badInputError reports whether err is bad input: the CLI's own inputError, a dataset file that cannot be
// used (data.FileError), an unknown dataset name, a run or checkpoint that does not allow what was asked
// (train.InputError, train.CheckpointError, train.ErrRunExists), a benchmark cell that cannot be measured
// as asked (bench.InputError), a file of the user's where a command would write one (owned.ConflictError).
// A full disk never is.
func badInputError(err error) bool {
	if diskFull(err) {
		return false
	}
	return isErr[*inputError](err) || isErr[*data.FileError](err) || isErr[*data.UnknownError](err) ||
		isErr[*train.InputError](err) || isErr[*train.CheckpointError](err) || errors.Is(err, train.ErrRunExists) ||
		isErr[*owned.ConflictError](err) || isErr[*bench.InputError](err)
}

func commandNames() []string { return slices.Sorted(maps.Keys(commands)) }

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: fits <command> [--flag=value ...]")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'fits <command> --help' for the flags of one command.")
}

// gcPercent is the Go garbage collector's target (GOGC) the training commands run with unless GOGC is
// set. A training process's Go heap is mostly long-lived [batch, T, W] buffers reused every step plus a few
// MB of garbage per step, and Go's default of 100 lets the heap grow to twice what is live before it
// collects. At 25 a full-size SHD run (shd-val/fsts-m1/w128, Go backend, 3 epochs) peaks at 255 instead of
// 350 MiB resident with the same epoch times; with XLA CPU the peak hardly changes (XLA's own memory
// dominates). Measured: docs/performance.md, "Memory and time of a full-size SHD run".
const gcPercent = 25

// trainingCommands are the commands that train or evaluate networks, which run with gcPercent; the others
// keep Go's default (their heaps were not measured).
var trainingCommands = map[string]bool{"train": true, "eval": true, "bench": true, "sweep": true, "reproduce": true, "demo": true, "selftest": true}

// mallocHugePages is the glibc tunable that makes malloc advise the kernel to back its large allocations
// with transparent huge pages (glibc ≥ 2.35; older versions ignore it). XLA's CPU runtime allocates every
// intermediate tensor of a training step afresh (tens of MB at W = 512), and with 4 KiB pages each of
// them costs one page fault per page; with huge pages it costs one per 2 MiB (measured:
// docs/performance.md, docs/performance-notes.md).
const mallocHugePages = "glibc.malloc.hugetlb=1"

// execWithHugePageMalloc re-executes the running binary, same arguments and process id, with
// mallocHugePages added to GLIBC_TUNABLES, which glibc reads only at process start. It does nothing when
// the tunable is already set (by the user or a previous re-execution), when FITS_MALLOC_HUGEPAGES=0, or
// off Linux; if the re-execution fails the command runs as it is.
func execWithHugePageMalloc() {
	if runtime.GOOS != "linux" || os.Getenv("FITS_MALLOC_HUGEPAGES") == "0" {
		return
	}
	cur := os.Getenv("GLIBC_TUNABLES")
	if strings.Contains(cur, "glibc.malloc.hugetlb") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	value := mallocHugePages
	if cur != "" {
		value = cur + ":" + mallocHugePages
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GLIBC_TUNABLES=") })
	_ = syscall.Exec(exe, os.Args, append([]string{"GLIBC_TUNABLES=" + value}, env...)) // returns only on failure
}
