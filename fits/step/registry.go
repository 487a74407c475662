package step

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/model"
	"github.com/gomlx/compute"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// registration is what an engine's file registers from its init function: the engine's name, its place in
// Names, what it needs of the backend and the network, and its constructor. Adding an engine is one file
// that registers one, plus its test; New, CheckSupported, Names and every command and test that lists the
// engines read this registry.
type registration struct {
	name string
	// summary says in a few words how the engine computes a step, for flag help (Help).
	summary string
	// rank orders Names: the default on a backend without host-shared memory first.
	rank int
	// needs returns an *UnsupportedError when the engine cannot run net on backend; nil runs anything.
	needs func(backend compute.Backend, net model.Net) error
	// build constructs the engine (New has validated net and opts).
	build func(backend compute.Backend, scope *mlmodel.Scope, net model.Net, opts Options) (Engine, error)
}

// registry holds the registered engines by name.
var registry = map[string]registration{}

// register adds an engine to the registry; a name registered twice is a programming error.
func register(r registration) {
	if _, dup := registry[r.name]; dup || r.build == nil {
		panic(fmt.Sprintf("step: engine %q registered twice or without a constructor", r.name))
	}
	registry[r.name] = r
}

// Names lists the engines, the default on a backend without host-shared memory first.
func Names() []string {
	regs := make([]registration, 0, len(registry))
	for _, r := range registry {
		regs = append(regs, r)
	}
	slices.SortFunc(regs, func(a, b registration) int { return a.rank - b.rank })
	out := make([]string, len(regs))
	for i, r := range regs {
		out[i] = r.name
	}
	return out
}

// Help lists the engines with their summaries, in Names' order, for flag help: "chunked (…), stepwise (…), …".
func Help() string {
	var parts []string
	for _, n := range Names() {
		parts = append(parts, fmt.Sprintf("%s (%s)", n, registry[n].summary))
	}
	return strings.Join(parts, ", ")
}

// lookup returns the registration of engine name, or an error listing the valid names.
func lookup(name string) (registration, error) {
	r, ok := registry[name]
	if !ok {
		return r, fmt.Errorf("unknown engine %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	return r, nil
}

// needsDynamicSlices is the need of the engines that slice the sequence chunk by chunk: a backend with
// dynamic slices (XLA; the "go" backend lacks them).
func needsDynamicSlices(name string) func(compute.Backend, model.Net) error {
	return func(backend compute.Backend, _ model.Net) error {
		if !backend.Capabilities().Operations[compute.OpTypeDynamicSlice] {
			return &UnsupportedError{Err: fmt.Errorf("step: engine %q needs a backend with dynamic slices (XLA); %q lacks them (use --engine=fused or unrolled)", name, backend.Name())}
		}
		return nil
	}
}
