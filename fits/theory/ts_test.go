package theory

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

func randomTS(r *rand.Rand, m int) TS {
	t := TS{Beta: make([]float64, m), Lambda: make([]float64, m), Nesting: Nesting(r.IntN(2))}
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
				t.Fatalf("case %d bin %d ω=%g (β=%v λ=%v, %s): G_M = %v, DFT = %v", i, j, w, ts.Beta, ts.Lambda, ts.Nesting, got, want)
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

// The two nestings differ for M ≥ 2 and agree for M ≤ 1; EffectiveLambdas carries one into the other: the
// official weights are (1 − λ1), λ1(1 − λ2), λ1λ2 for M = 2.
func TestNestings(t *testing.T) {
	beta, lambda := []float64{0.4, -0.3}, []float64{0.3, 0.6}
	off := TS{Beta: beta, Lambda: lambda}
	pap := TS{Beta: beta, Lambda: lambda, Nesting: PaperNesting}
	w := 0.7
	a1, _ := AllPass{beta[0]}.EvalZ(cmplx.Exp(complex(0, w)))
	a2, _ := AllPass{beta[1]}.EvalZ(cmplx.Exp(complex(0, w)))
	wantOff := complex(1-0.3, 0) + complex(0.3*(1-0.6), 0)*a1 + complex(0.3*0.6, 0)*a1*a2
	wantPap := complex((1-0.3)*(1-0.6), 0) + complex(0.3*(1-0.6), 0)*a1 + complex(0.6, 0)*a1*a2
	if got := off.Response(w); cabs(got-wantOff) > 1e-14 {
		t.Errorf("official M = 2: %v, want %v", got, wantOff)
	}
	if got := pap.Response(w); cabs(got-wantPap) > 1e-14 {
		t.Errorf("paper M = 2: %v, want %v", got, wantPap)
	}
	one := TS{Beta: beta[:1], Lambda: lambda[:1]}
	onePaper := one
	onePaper.Nesting = PaperNesting
	if one.Response(w) != onePaper.Response(w) {
		t.Error("M = 1: the nestings differ")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		ts := randomTS(r, 1+r.IntN(5))
		ts.Nesting = OfficialNesting
		eff := TS{Beta: ts.Beta, Lambda: EffectiveLambdas(ts.Lambda), Nesting: PaperNesting}
		for _, l := range eff.Lambda {
			if !(l >= 0 && l <= 1) {
				t.Fatalf("case %d: effective λ %v outside [0, 1]", i, eff.Lambda)
			}
		}
		y := make([]float64, ts.M()+1)
		for j := range y {
			y[j] = r.NormFloat64()
		}
		if a, b := mixStages(ts, y), mixStages(eff, y); math.Abs(a-b) > 1e-13 {
			t.Fatalf("case %d λ=%v: official mix %g, paper mix with effective λ %g", i, ts.Lambda, a, b)
		}
	}
	// λ1 = λ2 = 1: stages 0 and 1 carry no weight (λ′1 = 1 by convention), V2 and V3 share the rest.
	if got := EffectiveLambdas([]float64{1, 1, 0.5}); got[0] != 1 || got[1] != 1 || got[2] != 0.5 {
		t.Errorf("EffectiveLambdas(1, 1, 0.5) = %v", got)
	}
}

func ExampleEffectiveLambdas() {
	// The released code's M = 2 mix (1 − λ1)V0 + λ1(1 − λ2)V1 + λ1λ2V2 at the initial λ = σ(−3) ≈ 0.0474
	// is Eq. 10's recursion with these weights:
	l := 1 / (1 + math.Exp(3))
	fmt.Printf("%.5f\n", EffectiveLambdas([]float64{l, l}))
	// Output:
	// [0.04528 0.00225]
}

func TestBetaLambdaOf(t *testing.T) {
	for _, c := range []struct{ hat, beta, lambda float64 }{
		{0, 0, 0.5},
		{-3, math.Tanh(-3), 0.04742587317756678}, // Appendix B's initial λ̂ = −3: λ ≈ 0.047
		{40, 1, 1},                               // saturated, never beyond
		{-40, -1, 0},                             // λ = 4.2e−18, not 0 exactly
	} {
		b, l := BetaOf(c.hat), LambdaOf(c.hat)
		if math.Abs(b-c.beta) > 1e-15 || math.Abs(l-c.lambda) > 1e-15 || math.Abs(b) > 1 || l < 0 || l > 1 {
			t.Errorf("hat %g: β %g, λ %g; want %g, %g", c.hat, b, l, c.beta, c.lambda)
		}
	}
}
