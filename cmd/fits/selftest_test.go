package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/selftest"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/xla"
)

// cliChildEnv makes the test binary run the CLI on its arguments (TestMain): a fresh process, so a test
// can choose the backend, which is process-wide.
const cliChildEnv = "FITS_TEST_CLI_CHILD"

// perturbEnv, in a child process, perturbs one engine's self-test results: "ENGINE:RELATIVE".
const perturbEnv = "FITS_TEST_SELFTEST_PERTURB"

// perturbationFromEnv returns the perturbation perturbEnv names, or nil.
func perturbationFromEnv() *selftest.Perturbation {
	engine, rel, ok := strings.Cut(os.Getenv(perturbEnv), ":")
	if !ok {
		return nil
	}
	r, err := strconv.ParseFloat(rel, 64)
	if err != nil {
		return nil
	}
	return &selftest.Perturbation{Engine: engine, Relative: r}
}

// runChild runs the CLI in a fresh process of the test binary with extra environment variables and
// returns its exit status, stdout and stderr.
func runChild(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), cliChildEnv+"=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// TestSelftestPassesOnSimpleGo: `fits selftest --backend=go:ops_sequential --json` checks every engine the
// pure-Go backend runs (unrolled and fused; the others are listed as skipped, with the reason) and exits 0.
func TestSelftestPassesOnSimpleGo(t *testing.T) {
	status, stdout, stderr := runChild(t, nil, "selftest", "--backend="+xla.SimpleGoConfig, "--json")
	if status != 0 {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	var out selftestOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if !out.Pass || out.Failed != 0 || out.Passed != len(out.Rows) || len(out.Rows) < 50 {
		t.Errorf("pass %v, %d passed, %d failed, %d rows", out.Pass, out.Passed, out.Failed, len(out.Rows))
	}
	if out.Backend != xla.SimpleGoConfig || out.Plugin != "" || out.DefaultEngine != step.Fused {
		t.Errorf("backend %q, plugin %q, default engine %q", out.Backend, out.Plugin, out.DefaultEngine)
	}
	if len(out.Engines)+len(out.Skipped) != len(step.Names()) {
		t.Errorf("engines %v and skipped %v do not cover %v", out.Engines, out.Skipped, step.Names())
	}
	kinds := map[string]bool{}
	for _, r := range out.Rows {
		if c, ok := strings.CutPrefix(r.Case, "oracle/"); ok {
			kinds[strings.Split(c, "/")[0]] = true
		}
	}
	for _, k := range []string{"lif-M0", "fs-M0", "fsts-M1", "fsts-M2", "fsts-M3"} {
		if !kinds[k] {
			t.Errorf("no oracle case %s (have %v)", k, kinds)
		}
	}
}

// TestSelftestFailsOnAPerturbedEngine: the fused engine's loss and gradients made 1 % larger fail the
// self-test with exit status 1 and one line on stderr naming the engine and the case; the table marks the
// failed rows.
func TestSelftestFailsOnAPerturbedEngine(t *testing.T) {
	status, stdout, stderr := runChild(t, []string{perturbEnv + "=" + step.Fused + ":0.01"},
		"selftest", "--backend="+xla.SimpleGoConfig, "--engine="+step.Fused)
	if status != 1 {
		t.Fatalf("status %d, want 1; stderr:\n%s", status, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "fits selftest: ") || !strings.Contains(last, "checks failed: fused oracle/lif-M0/loss (error 0.01 > tolerance") {
		t.Errorf("last stderr line %q does not name the failed case", last)
	}
	if !strings.Contains(stdout, "golden/m2-sum-log-hz-p0/gradients") || !strings.Contains(stdout, "FAIL") {
		t.Errorf("table:\n%s", stdout)
	}
	// Unperturbed, the same command passes.
	if status, _, stderr := runChild(t, nil, "selftest", "--backend="+xla.SimpleGoConfig, "--engine="+step.Fused); status != 0 {
		t.Errorf("unperturbed: status %d, stderr:\n%s", status, stderr)
	}
}
