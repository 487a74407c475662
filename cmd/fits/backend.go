package main

import (
	"flag"
	"slices"
	"strings"

	// HOME from the user database where the environment lacks it, before the XLA bindings initialize.
	_ "github.com/fits-snn/fits/internal/homeenv"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute"
)

// backendFlag registers --backend on fs. Empty means automatic (see package xla): $GOMLX_BACKEND, else XLA
// CUDA, else XLA CPU, else SimpleGo.
func backendFlag(fs *flag.FlagSet) *string {
	return fs.String("backend", "", `GoMLX backend, e.g. "xla:cpu", "xla:cuda", "go:ops_sequential" (default: automatic)`)
}

// checkBackendName rejects a --backend value whose backend name (before the ':') GoMLX does not know, as
// bad input listing the known ones; it starts nothing. Empty means automatic.
func checkBackendName(config string) error {
	if config == "" {
		return nil
	}
	name, _, _ := strings.Cut(config, ":")
	known := compute.List()
	slices.Sort(known)
	if !slices.Contains(known, name) {
		return badInput("--backend: unknown backend %q in %q (valid: %s, each with its options after ':', e.g. xla:cpu)",
			name, config, strings.Join(known, ", "))
	}
	return nil
}

// openBackend applies the --backend value and returns the process-wide backend. The choice is printed once
// on stderr. An unknown backend name is bad input (exit status 2); a known backend that fails to start is
// an internal failure (exit status 1).
func openBackend(config string) (compute.Backend, error) {
	if err := checkBackendName(config); err != nil {
		return nil, err
	}
	if err := xla.SetConfig(config); err != nil {
		return nil, badInput("--backend: %v", err)
	}
	return xla.Backend()
}

// backendName is the configuration of the process-wide backend (e.g. "xla:cpu"), for result files.
func backendName() string { return xla.Current().Config }
