package selftest

import (
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute"
)

// simpleGo returns the pure-Go backend (SimpleGo, sequential), which needs no plugin.
func simpleGo(t *testing.T) compute.Backend {
	t.Helper()
	b, err := xla.New(xla.SimpleGoConfig)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSelfTestPassesOnSimpleGo runs the whole self-test on the pure-Go backend: every engine it supports,
// every case, and the training run.
func TestSelfTestPassesOnSimpleGo(t *testing.T) {
	rep, err := Run(simpleGo(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.FailedRows() {
		t.Errorf("%s %s: error %g, tolerance %g %s", r.Engine, r.Case, r.MaxError, r.Tolerance, r.Error)
	}
	// SimpleGo has no While loop (loop) and no dynamic slices (the chunked engines' chunks).
	if !slices.Equal(rep.Engines, []string{step.Unrolled, step.Fused}) {
		t.Errorf("engines %v, want unrolled and fused", rep.Engines)
	}
	for _, e := range []string{step.Chunked, step.Stepwise, step.Scan, step.Loop} {
		if rep.Skipped[e] == "" {
			t.Errorf("engine %s neither checked nor skipped with a reason: skipped %v", e, rep.Skipped)
		}
	}
	if rep.Passed < 50 {
		t.Errorf("only %d rows", rep.Passed)
	}
	t.Logf("%d rows passed", rep.Passed)
}
