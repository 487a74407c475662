package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fits-snn/fits/data/progress"
	"github.com/fits-snn/fits/fits/selftest"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/xla"
)

// selftestXLAFlags are the XLA_FLAGS of fits selftest when the environment sets none: LLVM's optimization
// lowered to compile the checks' graphs faster.
const selftestXLAFlags = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"

// selftestPerturb, when a test sets it, perturbs one engine's results (see selftest.Perturbation).
var selftestPerturb *selftest.Perturbation

// selftestOutput is the JSON form of `fits selftest --json`.
type selftestOutput struct {
	// Backend is the GoMLX backend configuration; Plugin the PJRT plugin's file with at most two parent
	// folders (no absolute path) and PJRTAPI its PJRT C API version ("" on SimpleGo).
	Backend string `json:"backend"`
	Plugin  string `json:"plugin,omitempty"`
	PJRTAPI string `json:"pjrt_c_api,omitempty"`
	// TF32 says whether the backend multiplies in TF32 by default ("on": turned off for the checks).
	TF32          string            `json:"tf32,omitempty"`
	DefaultEngine string            `json:"default_engine"`
	Engines       []string          `json:"engines"`
	Skipped       map[string]string `json:"skipped,omitempty"`
	Rows          []selftestRow     `json:"rows"`
	Passed        int               `json:"passed"`
	Failed        int               `json:"failed"`
	Pass          bool              `json:"pass"`
	Seconds       float64           `json:"seconds"`
}

// selftestRow is selftest.Row with its error as JSON null when the engine failed to run.
type selftestRow struct {
	Engine    string    `json:"engine"`
	Case      string    `json:"case"`
	MaxError  jsonFloat `json:"max_error"`
	Tolerance float64   `json:"tolerance"`
	Pass      bool      `json:"pass"`
	Error     string    `json:"error,omitempty"`
}

func runSelftest(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("selftest", stderr)
	backend := backendFlag(fs)
	engines := listFlag(fs, "engine", "", "engines to check (default: every engine the backend runs)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if _, err := engineList(*engines); err != nil {
		return err
	}
	// The checks compile many small graphs and run each a few times: XLA's code optimization costs more
	// than it saves there (on 2 cores of an AMD EPYC the full run took 111 s with XLA's defaults, 63-77 s with
	// these), and it does not change what the checks compare. A user's XLA_FLAGS is kept as it is.
	if _, set := os.LookupEnv("XLA_FLAGS"); !set {
		_ = os.Setenv("XLA_FLAGS", selftestXLAFlags)
		defer os.Unsetenv("XLA_FLAGS")
	}
	b, err := openBackend(*backend)
	if err != nil {
		return err
	}
	restore, tf32 := xla.Float32Products(b)
	defer restore()
	start := time.Now()
	var bar *progress.Bar
	rep, err := selftest.Run(b, selftest.Options{
		Engines: splitList(*engines),
		Perturb: selftestPerturb,
		Progress: func(done, total int) {
			if bar == nil {
				bar = progress.New(stderr, "fits selftest: cases", int64(total))
			}
			bar.Set(int64(done))
			if done == total {
				bar.Done()
			}
		},
	})
	if err != nil {
		return err
	}
	out := selftestOutput{Backend: backendName(), DefaultEngine: rep.Default, Engines: rep.Engines, Skipped: rep.Skipped,
		Passed: rep.Passed, Failed: rep.Failed, Pass: rep.OK(), Seconds: math.Round(time.Since(start).Seconds()*10) / 10}
	plugin, hasPlugin := xla.LoadedPlugin(b)
	if hasPlugin {
		out.Plugin, out.PJRTAPI = plugin.ShortPath(), plugin.API()
	}
	if tf32 {
		out.TF32 = "on by default; off for the checks"
	}
	for _, r := range rep.Rows {
		out.Rows = append(out.Rows, selftestRow{r.Engine, r.Case, jsonFloat(r.MaxError), r.Tolerance, r.Pass, r.Error})
	}
	if *asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "backend %s", out.Backend)
		if hasPlugin {
			fmt.Fprintf(stdout, ", PJRT plugin %s (PJRT C API %s)", plugin.Path, out.PJRTAPI)
		}
		if tf32 {
			fmt.Fprint(stdout, ", TF32 off for the checks")
		}
		fmt.Fprintf(stdout, "\nengines %s (default %s)", strings.Join(rep.Engines, ", "), rep.Default)
		for _, e := range slices.Sorted(maps.Keys(rep.Skipped)) {
			fmt.Fprintf(stdout, "; %s skipped: %s", e, rep.Skipped[e])
		}
		fmt.Fprintln(stdout)
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "engine\tcase\tmax error\ttolerance\tpass")
		for _, r := range rep.Rows {
			pass := "ok"
			if !r.Pass {
				pass = "FAIL"
			}
			maxErr := fmt.Sprintf("%.3g", r.MaxError)
			if r.Error != "" {
				maxErr = "-"
				pass = "FAIL: " + r.Error
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.3g\t%s\n", r.Engine, r.Case, maxErr, r.Tolerance, pass)
		}
		tw.Flush()
		fmt.Fprintf(stdout, "%d of %d checks passed in %.1f s\n", rep.Passed, len(rep.Rows), out.Seconds)
	}
	if rep.OK() {
		return nil
	}
	var failed []string
	for _, r := range rep.FailedRows() {
		what := fmt.Sprintf("error %.3g > tolerance %.3g", r.MaxError, r.Tolerance)
		if r.Error != "" {
			what = r.Error
		}
		failed = append(failed, fmt.Sprintf("%s %s (%s)", r.Engine, r.Case, what))
	}
	if len(failed) > 5 {
		failed = append(failed[:5], fmt.Sprintf("and %d more", len(failed)-5))
	}
	return fmt.Errorf("%d of %d checks failed: %s", rep.Failed, len(rep.Rows), strings.Join(failed, "; "))
}

// engineList parses a comma-separated --engine list of names of fits/step (step.Names); empty for none.
func engineList(s string) ([]string, error) {
	names := splitList(s)
	for _, e := range names {
		if !slices.Contains(step.Names(), e) {
			return nil, badInput("--engine: unknown engine %q (valid: %s)", e, strings.Join(step.Names(), ", "))
		}
	}
	return names, nil
}
