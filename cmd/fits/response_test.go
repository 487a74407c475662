package main

import (
	"encoding/json"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
)

func TestResponseJSON(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		c     theory.Constants
		f     float64
		ts    theory.TS
		omega []float64
	}{
		{[]string{"response", "--json"}, theory.SSC, 10, theory.TS{}, nil},
		{[]string{"response", "--json", "--fstar=20", "--beta=0.5,-0.3", "--lambda=0.2,0.7", "--omega=0,0.1,1,3.141592653589793"},
			theory.SSC, 20, theory.TS{Beta: []float64{0.5, -0.3}, Lambda: []float64{0.2, 0.7}}, []float64{0, 0.1, 1, math.Pi}},
		{[]string{"response", "--json", "--tau-m=0.1", "--tau-a=0.5", "--dt=0.01", "--fstar=5", "--beta=0.9", "--lambda=0.3", "--omega=0.05,2"},
			theory.GSC, 5, theory.TS{Beta: []float64{0.9}, Lambda: []float64{0.3}}, []float64{0.05, 2}},
	} {
		status, stdout, stderr := runCLI(tc.args...)
		if status != 0 {
			t.Fatalf("%v: status %d, stderr %q", tc.args, status, stderr)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal([]byte(stdout), &all); err != nil {
			t.Fatal(err)
		}
		raw := map[string]map[string][]*float64{}
		for _, k := range []string{"fs", "ts", "neuron"} {
			m := map[string][]*float64{}
			if err := json.Unmarshal(all[k], &m); err != nil {
				t.Fatalf("%v: key %q: %v", tc.args, k, err)
			}
			raw[k] = m
		}
		omega := tc.omega
		if omega == nil {
			omega = defaultResponseOmega()
		}
		k, _ := tc.c.KappaForTargetHz(tc.f)
		fs := tc.c.FS(k)
		systems := map[string]theory.ZTransfer{"fs": fs, "ts": tc.ts, "neuron": theory.ClosedLoop{FS: fs, TS: tc.ts}}
		for name, sys := range systems {
			for key, fn := range map[string]func(theory.ZTransfer, float64) float64{
				"magnitude": theory.Magnitude, "phase": theory.Phase, "group_delay_samples": theory.GroupDelay,
			} {
				vals, ok := raw[name][key]
				if !ok || len(vals) != len(omega) {
					t.Fatalf("%v: %s.%s has %d values, want %d", tc.args, name, key, len(vals), len(omega))
				}
				for i, w := range omega {
					want := fn(sys, w)
					if vals[i] == nil {
						if !math.IsNaN(want) && !math.IsInf(want, 0) {
							t.Errorf("%v: %s.%s[%d] is null, want %g", tc.args, name, key, i, want)
						}
						continue
					}
					if *vals[i] != want {
						t.Errorf("%v: %s.%s[%d] = %g, want %g", tc.args, name, key, i, *vals[i], want)
					}
				}
			}
		}
	}
}

func TestResponseNullWhereUndefined(t *testing.T) {
	// λ = 1/2 with one stage puts a zero of G on the unit circle at ω = π (A(−1) = −1): the group delay
	// there is 0/0 and must be encoded as null, not break the JSON.
	status, stdout, stderr := runCLI("response", "--json", "--beta=0", "--lambda=0.5", "--omega=3.141592653589793")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("not JSON: %v: %q", err, stdout)
	}
}

func TestResponseTable(t *testing.T) {
	status, stdout, stderr := runCLI("response", "--beta=0.5", "--lambda=0.5", "--omega=0.1,1")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if lines := strings.Count(stdout, "\n"); lines != 5 {
		t.Errorf("table has %d lines, want 2 header + 1 column line + 2 rows:\n%s", lines, stdout)
	}
	if !strings.Contains(stdout, "M = 1") || !strings.Contains(stdout, "delay neuron") {
		t.Errorf("table header missing:\n%s", stdout)
	}
}

func TestResponseBadInput(t *testing.T) {
	checkBadInputs(t, []badCase{
		{[]string{"response", "--tau-m=0"}, "tau-m"},
		{[]string{"response", "--tau-a=-1"}, "tau-a"},
		{[]string{"response", "--dt=-0.004"}, "dt"},
		{[]string{"response", "--fstar=0"}, "fstar"},
		{[]string{"response", "--fstar=-1"}, "fstar"},
		{[]string{"response", "--fstar=100"}, "77.19 Hz"},
		{[]string{"response", "--fstar=ten"}, "fstar"},
		{[]string{"response", "--beta=1", "--lambda=0.5"}, "beta"},
		{[]string{"response", "--beta=-1.2", "--lambda=0.5"}, "beta"},
		{[]string{"response", "--beta=0.5", "--lambda=1.5"}, "lambda"},
		{[]string{"response", "--beta=0.5", "--lambda=-0.1"}, "lambda"},
		{[]string{"response", "--beta=0.5,0.2", "--lambda=0.5"}, "same length"},
		{[]string{"response", "--beta=0.5"}, "same length"},
		{[]string{"response", "--beta=0.5,zz", "--lambda=0.5,0.5"}, "beta"},
		{[]string{"response", "--omega=-0.1"}, "omega"},
		{[]string{"response", "--omega=3.2"}, "omega"},
		{[]string{"response", "--omega=1,Inf"}, "omega"},
		{[]string{"response", "--json=maybe"}, "json"},
	})
}

// TestResponseTSMix: `fits response --ts-mix` draws the TS module and the closed loop in the nesting asked
// for: the released code's (the default) and the paper's differ for M = 2 and agree for M = 1, and the
// official TS magnitude at M = 2 is |(1 − λ1) + λ1(1 − λ2)A1 + λ1λ2A1A2|.
func TestResponseTSMix(t *testing.T) {
	get := func(args ...string) responseOutput {
		t.Helper()
		code, stdout, stderr := run(append([]string{"response", "--json", "--omega=0.3,1.2"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var out responseOutput
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	two := []string{"--beta=0.5,-0.3", "--lambda=0.4,0.7"}
	def, off, pap := get(two...), get(append(two, "--ts-mix=official")...), get(append(two, "--ts-mix=paper")...)
	a := func(b, w float64) complex128 {
		z := cmplx.Exp(complex(0, w))
		return (1 - complex(b, 0)*z) / (z - complex(b, 0))
	}
	for i, w := range []float64{0.3, 1.2} {
		want := cmplx.Abs(complex(0.6, 0) + complex(0.4*0.3, 0)*a(0.5, w) + complex(0.4*0.7, 0)*a(0.5, w)*a(-0.3, w))
		if got := float64(off.TS.Magnitude[i]); math.Abs(got-want) > 1e-12 || def.TS.Magnitude[i] != off.TS.Magnitude[i] {
			t.Errorf("ω = %g: official |G| %g (default %g), want %g", w, got, float64(def.TS.Magnitude[i]), want)
		}
		if off.TS.Magnitude[i] == pap.TS.Magnitude[i] || off.Neuron.Magnitude[i] == pap.Neuron.Magnitude[i] {
			t.Errorf("ω = %g: the nestings give the same M = 2 response", w)
		}
	}
	one := []string{"--beta=0.5", "--lambda=0.4"}
	o1, p1 := get(append(one, "--ts-mix=official")...), get(append(one, "--ts-mix=paper")...)
	for i := range o1.TS.Magnitude {
		if o1.TS.Magnitude[i] != p1.TS.Magnitude[i] || o1.Neuron.GroupDelay[i] != p1.Neuron.GroupDelay[i] {
			t.Errorf("M = 1: the nestings differ at ω index %d", i)
		}
	}
}
