package main

import (
	"flag"

	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/gomlx/backends"
)

// backendFlag registers --backend on fs. Empty means automatic (see package xla): $GOMLX_BACKEND, else XLA
// CUDA, else XLA CPU, else SimpleGo.
func backendFlag(fs *flag.FlagSet) *string {
	return fs.String("backend", "", `GoMLX backend, e.g. "xla:cpu", "xla:cuda", "go:ops_sequential" (default: automatic)`)
}

// openBackend applies the --backend value and returns the process-wide backend. The choice is printed once
// on stderr. A backend that cannot be created is reported as bad input (exit status 2).
func openBackend(config string) (backends.Backend, error) {
	if err := xla.SetConfig(config); err != nil {
		return nil, badInput("--backend: %v", err)
	}
	b, err := xla.Backend()
	if err != nil {
		return nil, badInput("--backend: %v", err)
	}
	return b, nil
}

// backendName is the configuration of the process-wide backend (e.g. "xla:cpu"), for result files.
func backendName() string { return xla.Current().Config }
