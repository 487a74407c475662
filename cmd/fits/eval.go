package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/train"
)

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
