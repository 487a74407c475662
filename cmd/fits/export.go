package main

import (
	"fmt"
	"io"

	"github.com/fits-snn/fits/fits/interop"
	"github.com/fits-snn/fits/fits/train"
)

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
