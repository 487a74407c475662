package main

import (
	"fmt"
	"io"

	"github.com/fits-snn/fits/fits/interop"
	"github.com/fits-snn/fits/fits/train"
)

func runImport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", stderr)
	from := fs.String("from", "", "run folder of the released code (holding best.pth) or a .pth checkpoint (required)")
	out := fs.String("out", "", "run folder to write (required; created if missing, must not hold a run)")
	configFile := fs.String("config", "", "config.json of a checkpoint that stores no configuration (default: config.json beside it)")
	dataset := fs.String("dataset", "", "dataset of this toolkit the run trained on, when its configuration names none or another name")
	small := fs.Bool("small", false, "the run trained on the reduced version of the dataset (fits train --small), as the PyTorch peer's fixtures")
	asJSON := fs.Bool("json", false, "print the run's result.json content as one JSON object on stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *from == "":
		return badInput("--from is required")
	case *out == "":
		return badInput("--out is required")
	}
	if err := checkWritableDir("out", *out); err != nil {
		return err
	}
	if train.HoldsRun(*out) {
		return badInput("--out=%s already holds a run (choose another folder)", *out)
	}
	// Everything is read and checked before anything is written.
	rel, err := interop.ReadReleased(*from, *configFile)
	if err != nil {
		return interopInput(err)
	}
	mapped, err := interop.MapReleased(rel, interop.MapOptions{Dataset: *dataset, Small: *small})
	if err != nil {
		return interopInput(err)
	}
	var res *train.Result
	if _, err := writeStaged("out", *out, func(dir string) (_ []string, err error) {
		res, err = interop.ImportRun(rel, mapped, dir)
		return nil, err
	}); err != nil {
		return interopInput(err)
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	cfg := mapped.Config
	fmt.Fprintf(stdout, "imported %s (sha256 %s…) into %s\n", *from, res.Imported.SHA256[:12], *out)
	fmt.Fprintf(stdout, "  %s on %s, M=%d, width %d, %d parameters, weights of epoch %d of %d, protocol %s\n",
		cfg.Model, cfg.Dataset, cfg.M, cfg.Width, res.ParameterCount, rel.Epoch, len(res.Epochs), cfg.Protocol)
	if rel.TestAcc != nil {
		fmt.Fprintf(stdout, "  test acc %.2f%% as the released code recorded it; fits eval --checkpoint=%s measures it here\n", 100**rel.TestAcc, *out)
	}
	return nil
}

// interopInput makes a file that cannot be imported or exported bad input (exit status 2).
func interopInput(err error) error {
	if isErr[*interop.InputError](err) {
		return badInput("%v", err)
	}
	return err
}

func runExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", stderr)
	format := fs.String("format", "", "layout to write: released (model.safetensors with the released state-dict names, config.json, checkpoint.json, metrics.json; python peers/released_fixture.py convert --run=DIR adds best.pth)")
	from := fs.String("from", "", "run folder written by fits train or fits import (required)")
	out := fs.String("out", "", "folder to write (required; created if missing)")
	dataDir := fs.String("data-dir", "", "dataset folder (default $FITS_DATA/NAME): the run's neuron constants come from its dataset")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *format != "released":
		return badInput("--format=%q: the only layout is released", *format)
	case *from == "":
		return badInput("--from is required")
	case *out == "":
		return badInput("--out is required")
	}
	if !isDir(*from) || !train.HasCheckpoint(*from) {
		return badInput("--from=%s is not a run folder with an intact checkpoint", *from)
	}
	if err := checkWritableDir("out", *out); err != nil {
		return err
	}
	written, err := writeStaged("out", *out, func(dir string) ([]string, error) {
		return nil, interop.ExportReleased(*from, dir, train.Options{DataDir: *dataDir})
	})
	if err != nil {
		return interopInput(err)
	}
	for _, f := range written {
		fmt.Fprintln(stdout, f)
	}
	return nil
}
