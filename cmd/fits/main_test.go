package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/bench"
)

// TestMain makes the test binary act as the fits binary when `fits bench` starts it as a cell's child
// process (bench.ChildEnv), so that isolated benchmark cells run from tests as they do from the CLI, and when
// a test runs it as a fresh fits process (cliChildEnv, selftest_test.go), whose backend is its own.
func TestMain(m *testing.M) {
	if os.Getenv(bench.ChildEnv) == "1" {
		os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	if os.Getenv(cliChildEnv) == "1" {
		selftestPerturb = perturbationFromEnv()
		os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// run executes the CLI in-process and returns its exit status, stdout and stderr.
func run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	status := runMain(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

func TestUnknownCommandAndFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"no command", nil, 2},
		{"unknown command", []string{"frobnicate"}, 2},
		{"unknown flag", []string{"demo", "--bogus=1"}, 2},
		{"bad epochs", []string{"demo", "--train=false", "--epochs=0"}, 2},
		{"bad batch", []string{"demo", "--train=false", "--batch=0"}, 2},
		{"fractional seed", []string{"demo", "--train=false", "--seed=0.5"}, 2},
		{"positional argument", []string{"demo", "extra"}, 2},
		{"help", []string{"help"}, 0},
		{"help of a command", []string{"help", "train"}, 0},
		{"help of an unknown command", []string{"help", "frobnicate"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, stderr := run(c.args...)
			if status != c.want {
				t.Fatalf("status %d, want %d (stderr %q)", status, c.want, stderr)
			}
			if c.want == 2 && len(c.args) > 0 {
				if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
					t.Errorf("stderr should be one line, got %q", stderr)
				}
			}
			if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
				t.Errorf("stderr shows a panic: %q", stderr)
			}
		})
	}
}

func TestDemoJSON(t *testing.T) {
	status, stdout, stderr := run("demo", "--json", "--train=false")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var got demoOutput
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	if len(got.Theory) == 0 {
		t.Fatal("no theory rows")
	}
	for _, r := range got.Theory {
		if !r.Indicative && !r.Match {
			t.Errorf("%s: paper %v, ours %v", r.Quantity, r.Paper, r.Ours)
		}
	}
}

// TestHelpOfCommand checks that `fits help CMD` prints CMD's own usage (its flags), as `fits CMD --help`
// does, and not the list of commands.
func TestHelpOfCommand(t *testing.T) {
	for _, cmd := range []string{"train", "bench"} {
		status, stdout, stderr := run("help", cmd)
		out := stdout + stderr
		if status != 0 || !strings.Contains(out, "usage of fits "+cmd) || !strings.Contains(out, "-engine") {
			t.Errorf("fits help %s: status %d, output %.200q", cmd, status, out)
		}
		if strings.Contains(out, "commands:") {
			t.Errorf("fits help %s prints the general usage", cmd)
		}
	}
}
