package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
)

// run calls runMain and returns the status, stdout and stderr.
func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	status := runMain(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

// checkBadInput asserts exit status 2, exactly one stderr line, no stdout and no panic trace.
func checkBadInput(t *testing.T, args []string, wantInMsg string) {
	t.Helper()
	status, stdout, stderr := runCLI(args...)
	if status != 2 {
		t.Errorf("%v: status %d, want 2 (stderr %q)", args, status, stderr)
	}
	if stdout != "" {
		t.Errorf("%v: stdout %q, want nothing", args, stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("%v: stderr is not one line: %q", args, stderr)
	}
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
		t.Errorf("%v: stderr shows a panic: %q", args, stderr)
	}
	if !strings.Contains(stderr, wantInMsg) {
		t.Errorf("%v: stderr %q does not mention %q", args, stderr, wantInMsg)
	}
}

// badCase is a command line that must be refused as bad input, and what its message must mention.
type badCase struct {
	args []string
	msg  string
}

// checkBadInputs is checkBadInput of every case.
func checkBadInputs(t *testing.T, cases []badCase) {
	t.Helper()
	for _, tc := range cases {
		checkBadInput(t, tc.args, tc.msg)
	}
}

func TestTheoryJSON(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		c      theory.Constants
		fstars []float64
	}{
		{[]string{"theory", "--json"}, theory.SSC, []float64{1, 5, 10, 20, 50}},
		{[]string{"theory", "--json", "--tau-m=0.1", "--tau-a=0.5", "--dt=0.01", "--fstar=2,30"}, theory.GSC, []float64{2, 30}},
		{[]string{"theory", "--fstar=77", "--json"}, theory.SSC, []float64{77}},
	} {
		status, stdout, stderr := runCLI(tc.args...)
		if status != 0 {
			t.Fatalf("%v: status %d, stderr %q", tc.args, status, stderr)
		}
		if strings.Count(stdout, "\n") != 1 {
			t.Fatalf("%v: stdout is not one JSON line: %q", tc.args, stdout)
		}
		// Every contract key is present.
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"mu", "rho", "dt", "jury", "targets"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("%v: key %q missing", tc.args, k)
			}
		}
		var jury map[string]float64
		if err := json.Unmarshal(raw["jury"], &jury); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"kappa_max_explicit", "kappa_max_semi_implicit", "fstar_max_explicit_hz", "fstar_max_semi_implicit_hz"} {
			if _, ok := jury[k]; !ok {
				t.Errorf("%v: jury key %q missing", tc.args, k)
			}
		}
		var targets []map[string]*float64
		if err := json.Unmarshal(raw["targets"], &targets); err != nil {
			t.Fatal(err)
		}
		if len(targets) != len(tc.fstars) {
			t.Fatalf("%v: %d targets, want %d", tc.args, len(targets), len(tc.fstars))
		}
		// Values match fits/theory.
		var out theoryOutput
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		j := tc.c.Jury()
		if out.Mu != tc.c.Mu() || out.Rho != tc.c.Rho() || out.Dt != tc.c.Dt ||
			out.Jury.KappaMaxSemiImplicit != j.KappaMaxSemiImplicit || out.Jury.FStarMaxExplicitHz != j.FStarMaxExplicitHz ||
			out.Jury.FStarMaxSemiImplicitHz != j.FStarMaxSemiImplicitHz || out.Jury.KappaMaxExplicit != j.KappaMaxExplicit {
			t.Errorf("%v: header %+v does not match theory (%+v)", tc.args, out, j)
		}
		for i, f := range tc.fstars {
			for _, k := range []string{"fstar_ct_hz", "kappa", "fstar_dt_hz", "fstar_dt_sweep_hz", "kappa_dt_exact"} {
				if _, ok := targets[i][k]; !ok {
					t.Errorf("%v: target key %q missing", tc.args, k)
				}
			}
			got := out.Targets[i]
			k, _ := tc.c.KappaForTargetHz(f)
			fd, _ := tc.c.DTTargetHz(k)
			ke, _ := tc.c.KappaDTExact(f)
			if got.FStarCTHz != f || got.Kappa != k || got.FStarDTHz == nil || *got.FStarDTHz != fd ||
				got.FStarDTSweepHz == nil || math.Abs(*got.FStarDTSweepHz-fd) > 1e-6 || got.KappaDTExact == nil || *got.KappaDTExact != ke {
				t.Errorf("%v: target %d = %+v does not match theory (κ %g, f_DT %g, κ_exact %g)", tc.args, i, got, k, fd, ke)
			}
		}
	}
}

func TestTheoryTable(t *testing.T) {
	status, stdout, stderr := runCLI("theory", "--fstar=10")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	for _, want := range []string{"13.78", "77.19", "3825.67", "10.348137"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
}

func TestTheoryBadInput(t *testing.T) {
	checkBadInputs(t, []badCase{
		{[]string{"theory", "--tau-m=0"}, "tau-m"},
		{[]string{"theory", "--tau-a=-0.2"}, "tau-a"},
		{[]string{"theory", "--dt=0"}, "dt"},
		{[]string{"theory", "--dt=0.05"}, "dt"},
		{[]string{"theory", "--tau-m=abc"}, "tau-m"},
		{[]string{"theory", "--dt=NaN"}, "dt"},
		{[]string{"theory", "--fstar=0"}, "fstar"},
		{[]string{"theory", "--fstar=-5"}, "fstar"},
		{[]string{"theory", "--fstar=10,x"}, "fstar"},
		{[]string{"theory", "--fstar=10,,20"}, "fstar"},
		{[]string{"theory", "--fstar="}, "fstar"},
		{[]string{"theory", "--fstar=80"}, "77.19 Hz"},
		{[]string{"theory", "--fstar=1e9"}, "Jury"},
		{[]string{"theory", "--nope=1"}, "nope"},
		{[]string{"theory", "extra"}, "extra"},
	})
}
