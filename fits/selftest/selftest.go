// Package selftest checks that a machine and a GoMLX backend compute FiTS correctly: every step engine the
// backend supports (fits/step) against references that do not depend on the backend, in seconds to a
// minute on CPU. It is what `fits selftest` runs.
//
// The checks (one Row each):
//
//   - oracle/<kind>-M<m>: for every registered neuron kind at every TS order M = 0–3 it takes, a network
//     of two dense blocks of that kind (6 neurons each, 4 inputs, 8 time steps, 4 examples of which one is
//     padding) and the sum readout over 3 classes. "loss" and "rates" hold one training step's loss and
//     per-block firing rates to the float64 forward of the same network built on the kind's twin in
//     fits/sim (Algorithm 1, the oracle); the inputs are drawn until no pre-reset voltage of the float64
//     forward lies within 1e-3 of the threshold, so float32 must give the same spikes. "gradients" holds
//     every gradient to the unrolled engine's (the recurrence unrolled in one graph, differentiated by
//     GoMLX's autodiff) on the same backend.
//   - golden/<case>: the released code's training steps (internal/golden, steps.json, float64 PyTorch):
//     "loss" and "gradients" of one step. Every engine runs one case of each M = 0–3 (the file has two per
//     M; the engines alternate between them, so every case runs on half of the engines).
//   - training: the default engine (step.Default) trains a toy task for a few Adam steps; "loss-ratio",
//     the last step's loss over the first's, must fall below its tolerance.
//
// Errors are relative: a loss |got − want| / max(1, |want|); a gradient max_i |got_i − want_i| / (s + a)
// over every element of every variable, s the largest |want_i| of the variable and a an absolute floor;
// rates the largest difference of a block's summed firing rate.
package selftest

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/fits-snn/fits/fits/step"
	"github.com/gomlx/compute"
)

// Row is the result of one check of one engine.
type Row struct {
	// Engine is the step engine (step.Names).
	Engine string `json:"engine"`
	// Case names the network and the quantity, e.g. "golden/m2-sum-log-hz-p0/gradients",
	// "oracle/fsts-M3/loss", "training/loss-ratio".
	Case string `json:"case"`
	// MaxError is the check's error (see the package comment); NaN when the engine failed to run.
	MaxError float64 `json:"max_error"`
	// Tolerance is the largest error that passes.
	Tolerance float64 `json:"tolerance"`
	// Pass reports MaxError ≤ Tolerance (and no Error).
	Pass bool `json:"pass"`
	// Error is why the engine could not compute the case; "" when it could.
	Error string `json:"error,omitempty"`
}

// Report is the result of Run.
type Report struct {
	// Engines are the engines checked, in step.Names order; Skipped those the backend does not support,
	// with the reason.
	Engines []string          `json:"engines"`
	Skipped map[string]string `json:"skipped,omitempty"`
	// Default is the engine step.Default picks on this backend (the one the training check uses).
	Default string `json:"default_engine"`
	Rows    []Row  `json:"rows"`
	// Passed and Failed count the rows.
	Passed int `json:"passed"`
	Failed int `json:"failed"`
}

// OK reports whether every row passed.
func (r Report) OK() bool { return r.Failed == 0 && len(r.Rows) > 0 }

// FailedRows returns the rows that did not pass.
func (r Report) FailedRows() []Row {
	return slices.DeleteFunc(slices.Clone(r.Rows), func(row Row) bool { return row.Pass })
}

// Options configure Run.
type Options struct {
	// Engines restricts the check to these engines (nil: every engine of step.Names the backend supports).
	Engines []string
	// Workers is how many cases run at once (0: the number of CPUs, at most 8).
	Workers int
	// Progress, when not nil, is called after each case with the number of cases done and their total.
	Progress func(done, total int)
	// Perturb, when not nil, changes the results of one engine before they are compared: tests use it to
	// see that a wrong engine fails the self-test, naming the case.
	Perturb *Perturbation
}

// Perturbation multiplies an engine's loss and gradients by 1 + Relative before the comparison (not where
// the engine is the reference of the others).
type Perturbation struct {
	Engine   string
	Relative float64
}

// apply perturbs the results of engine, if it is the perturbed one.
func (p *Perturbation) apply(engine string, loss *float64, grads map[string][]float32) {
	if p == nil || p.Engine != engine {
		return
	}
	*loss *= 1 + p.Relative
	for _, g := range grads {
		for i := range g {
			g[i] *= float32(1 + p.Relative)
		}
	}
}

// ErrUnknownEngine reports an engine name that step does not know.
var ErrUnknownEngine = errors.New("unknown engine")

// Supported returns the engines of names (step.Names when empty) that backend runs, and, for the others,
// why not. An unknown name is an error wrapping ErrUnknownEngine.
func Supported(backend compute.Backend, names []string) (engines []string, skipped map[string]string, err error) {
	all := step.Names()
	if len(names) == 0 {
		names = all
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return nil, nil, fmt.Errorf("%w %q (valid: %v)", ErrUnknownEngine, n, all)
		}
	}
	skipped = map[string]string{}
	for _, n := range all { // step.Names order
		if !slices.Contains(names, n) {
			continue
		}
		if why := unsupported(backend, n); why != "" {
			skipped[n] = why
			continue
		}
		engines = append(engines, n)
	}
	return engines, skipped, nil
}

// unsupported returns why backend cannot run engine ("" when it can): the engine refuses the backend
// (step.UnsupportedError) or needs an operation the backend does not implement, on a tiny network.
func unsupported(backend compute.Backend, engine string) string {
	err := tryTinyEngine(backend, engine)
	var u *step.UnsupportedError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &u):
		return u.Error()
	case errors.Is(err, compute.ErrNotImplemented) || strings.Contains(err.Error(), compute.ErrNotImplemented.Error()):
		return fmt.Sprintf("the backend (%s) does not implement an operation the engine needs", backend.Name())
	}
	return "" // another failure: the checks report it
}

// job is one case: it computes its rows for every engine.
type job struct {
	name string
	run  func() []Row
}

// Run checks the engines on backend and returns every row. It fails only when it cannot start (an unknown
// engine, no golden file); failed checks are rows that do not pass.
func Run(backend compute.Backend, opts Options) (Report, error) {
	engines, skipped, err := Supported(backend, opts.Engines)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Engines: engines, Default: step.Default(backend)}
	if len(skipped) > 0 {
		rep.Skipped = skipped
	}
	if len(engines) == 0 {
		return rep, fmt.Errorf("no engine to check on this backend (skipped: %v)", skipped)
	}
	var jobs []job
	for _, kc := range kindCases() {
		jobs = append(jobs, job{"oracle/" + kc.name, func() []Row { return runKindCase(backend, kc, engines, opts.Perturb) }})
	}
	goldenJobs, err := goldenJobs(backend, engines, opts.Perturb)
	if err != nil {
		return Report{}, err
	}
	jobs = append(jobs, goldenJobs...)
	if slices.Contains(engines, rep.Default) {
		jobs = append(jobs, job{"training", func() []Row { return []Row{runTraining(backend, rep.Default, opts.Perturb)} }})
	}

	workers := opts.Workers
	if workers <= 0 {
		workers = min(runtime.NumCPU(), 8)
	}
	results := make([][]Row, len(jobs))
	next := make(chan int, len(jobs))
	for i := range jobs {
		next <- i
	}
	close(next)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		finished int
	)
	for range min(workers, len(jobs)) {
		wg.Go(func() {
			for i := range next {
				results[i] = jobs[i].run()
				mu.Lock()
				finished++
				if opts.Progress != nil {
					opts.Progress(finished, len(jobs))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, rows := range results {
		rep.Rows = append(rep.Rows, rows...)
	}
	for _, r := range rep.Rows {
		if r.Pass {
			rep.Passed++
		} else {
			rep.Failed++
		}
	}
	return rep, nil
}

// check returns the row of a computed error.
func check(engine, name string, err, tol float64) Row {
	return Row{Engine: engine, Case: name, MaxError: err, Tolerance: tol, Pass: err <= tol}
}

// failed returns the row of a case an engine could not compute.
func failed(engine, name string, err error) Row {
	return Row{Engine: engine, Case: name, MaxError: math.NaN(), Error: oneLine(err.Error())}
}

// lossError is |got − want| / max(1, |want|).
func lossError(got, want float64) float64 {
	d := math.Abs(got-want) / math.Max(1, math.Abs(want))
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d
}

// gradError is the largest over the variables of want of max_i |got_i − want_i| / (s + floor), s the
// variable's largest |want_i|; a variable missing from got, or of another length, is an infinite error.
func gradError(got map[string][]float32, want map[string][]float64, floor float64) float64 {
	worst := 0.0
	if len(got) != len(want) {
		return math.Inf(1)
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok || len(g) != len(w) {
			return math.Inf(1)
		}
		scale := 0.0
		for _, x := range w {
			scale = math.Max(scale, math.Abs(x))
		}
		for i, x := range w {
			d := math.Abs(float64(g[i])-x) / (scale + floor)
			if math.IsNaN(d) {
				return math.Inf(1)
			}
			worst = math.Max(worst, d)
		}
	}
	return worst
}

// oneLine returns the first line of s.
func oneLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
