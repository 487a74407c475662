package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/fits-snn/fits/fits/train"
)

func init() {
	register(&command{
		name:    "eval",
		summary: "evaluate a training checkpoint on its validation and test splits",
		run:     runEval,
	})
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", stderr)
	dir := fs.String("checkpoint", "", "run directory written by `fits train` (required)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object on stdout")
	dataDir := fs.String("data-dir", "", "dataset folder (default $FITS_DATA/NAME)")
	backend := backendFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return badInput("--checkpoint is required")
	}
	if !train.HasCheckpoint(*dir) {
		return badInput("--checkpoint=%s holds no checkpoint", *dir)
	}
	b, err := openBackend(*backend)
	if err != nil {
		return err
	}
	res, err := train.Evaluate(*dir, train.Options{Backend: b, BackendName: backendName(), DataDir: *dataDir})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "%s on %s (M=%d, width %d, seed %d, %d parameters) after %d epochs, %s\n",
		res.Model, res.Dataset, res.M, res.Width, res.Seed, res.ParameterCount, res.Epoch, res.Backend)
	if res.ValAcc != nil {
		fmt.Fprintf(stdout, "  val acc   %6.2f%%  (loss %.4f)\n", 100**res.ValAcc, *res.ValLoss)
	}
	fmt.Fprintf(stdout, "  test acc  %6.2f%%  (loss %.4f)\n", 100*res.TestAcc, res.TestLoss)
	rates := make([]string, len(res.FiringRates))
	for i, v := range res.FiringRates {
		rates[i] = fmt.Sprintf("%.2f%%", 100*v)
	}
	fmt.Fprintf(stdout, "  firing rates %s (spikes per neuron per bin, test split)\n", strings.Join(rates, ", "))
	return nil
}
