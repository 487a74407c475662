package theory

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randomTS(r *rand.Rand, m int) TS {
	t := TS{Beta: make([]float64, m), Lambda: make([]float64, m)}
	for i := range m {
		t.Beta[i] = 1.8*r.Float64() - 0.9
		t.Lambda[i] = r.Float64()
	}
	return t
}

func TestAllPassUnitMagnitudeAndDelay(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 500 {
		b := 1.98*r.Float64() - 0.99
		w := r.Float64() * math.Pi
		a := AllPass{b}
		if m := Magnitude(a, w); math.Abs(m-1) > 1e-13 {
			t.Fatalf("case %d: |A| = %g", i, m)
		}
		want := GroupDelay(a, w)
		got := AllPassGroupDelay(b, w)
		if relErr(got, want) > 1e-10 || !(got > 0) {
			t.Fatalf("case %d β=%g ω=%g: closed form %g, analytic %g", i, b, w, got, want)
		}
	}
	// β = 0 is a one-sample delay z⁻¹.
	for _, w := range []float64{0.1, 1, 3} {
		if d := AllPassGroupDelay(0, w); d != 1 {
			t.Errorf("β=0: delay %g, want 1", d)
		}
		if p := AllPassPhase(0, w); math.Abs(p+w) > 1e-15 {
			t.Errorf("β=0: phase %g, want −ω = %g", p, -w)
		}
	}
}

func TestTSMatchesSimulatedRecurrence(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for i := range 30 {
		ts := randomTS(r, 1+r.IntN(4))
		n := 2048 // 0.9^2048 ≈ 1e-94: fully decayed
		g := simulateTS(ts, impulse(n))
		for j := range 16 {
			w := 2 * math.Pi * float64(r.IntN(n/2+1)) / float64(n)
			got, want := ts.Response(w), dtft(g, w)
			if cabs(got-want) > 1e-11 {
				t.Fatalf("case %d bin %d ω=%g (β=%v λ=%v): G_M = %v, DFT = %v", i, j, w, ts.Beta, ts.Lambda, got, want)
			}
		}
	}
}

func TestTSGroupDelayAndBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for i := range 300 {
		ts := randomTS(r, 1+r.IntN(4))
		w := 0.01 + r.Float64()*(math.Pi-0.02)
		if m := ts.Magnitude(w); m > 1+1e-12 {
			t.Fatalf("case %d: |G| = %g > 1", i, m)
		}
		got := ts.GroupDelay(w)
		fd := fdGroupDelay(ts.Response, w, 1e-6)
		if math.Abs(got-fd) > 1e-5*math.Max(1, math.Abs(got)) {
			t.Fatalf("case %d ω=%g: analytic %g, finite difference %g", i, w, got, fd)
		}
	}
	// λ = 1 everywhere is the pure cascade: delays add up.
	ts := TS{Beta: []float64{0.3, -0.5, 0.7}, Lambda: []float64{1, 1, 1}}
	for _, w := range []float64{0.2, 1.1, 2.9} {
		sum := AllPassGroupDelay(0.3, w) + AllPassGroupDelay(-0.5, w) + AllPassGroupDelay(0.7, w)
		if d := ts.GroupDelay(w); relErr(d, sum) > 1e-12 {
			t.Errorf("pure cascade ω=%g: %g, sum of stages %g", w, d, sum)
		}
	}
	// M = 0 and λ = 0 are the identity.
	for _, ts := range []TS{{}, {Beta: []float64{0.5, 0.2}, Lambda: []float64{0, 0}}} {
		if g := ts.Response(1.3); g != 1 || ts.GroupDelay(1.3) != 0 {
			t.Errorf("%+v: G = %v, want 1", ts, g)
		}
	}
}

func TestProposition1(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	neg := 0
	for i := range 20000 {
		b := 1.98*r.Float64() - 0.99
		l := r.Float64()
		w := r.Float64() * math.Pi
		// Skip the measure-zero boundary where the delay crosses zero.
		if math.Abs(l+(1-l)*math.Cos(AllPassPhase(b, w))) < 1e-9 {
			continue
		}
		ts := TS{Beta: []float64{b}, Lambda: []float64{l}}
		d := ts.GroupDelay(w)
		if formula := MixedStageGroupDelay(b, l, w); math.Abs(formula-d) > 1e-9*math.Max(1, math.Abs(d)) {
			t.Fatalf("case %d β=%g λ=%g ω=%g: Eq. app_ts_single_stage_delay %g, analytic %g", i, b, l, w, formula, d)
		}
		if (d < 0) != NegativeDelay(b, l, w) {
			t.Fatalf("case %d β=%g λ=%g ω=%g: delay %g but predicate %v", i, b, l, w, d, NegativeDelay(b, l, w))
		}
		if d < 0 {
			neg++
		}
	}
	if neg < 500 {
		t.Errorf("only %d negative-delay cases drawn; the test checks too little", neg)
	}
}

func TestTSValidate(t *testing.T) {
	for _, tc := range []struct {
		ts TS
		ok bool
	}{
		{TS{}, true},
		{TS{Beta: []float64{0.5, -0.99}, Lambda: []float64{0, 1}}, true},
		{TS{Beta: []float64{1}, Lambda: []float64{0.5}}, false},
		{TS{Beta: []float64{-1.5}, Lambda: []float64{0.5}}, false},
		{TS{Beta: []float64{0.5}, Lambda: []float64{1.01}}, false},
		{TS{Beta: []float64{0.5}, Lambda: []float64{-0.1}}, false},
		{TS{Beta: []float64{0.5}, Lambda: []float64{math.NaN()}}, false},
		{TS{Beta: []float64{0.5, 0.2}, Lambda: []float64{0.5}}, false},
	} {
		if err := tc.ts.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tc.ts, err, tc.ok)
		}
		if tc.ok && tc.ts.M() != len(tc.ts.Beta) {
			t.Errorf("M() = %d", tc.ts.M())
		}
	}
}
