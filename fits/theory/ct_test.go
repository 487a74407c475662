package theory

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteForceCTPeak maximizes |H(jΩ)| over Ω > 0 with a log grid and bisection on the sign of
// d ln|H|/dΩ = −Im(H'(jΩ)/H(jΩ)); it returns 0 when the grid maximum is the smallest grid point.
func bruteForceCTPeak(c CT) float64 {
	grid := LogSpace(1e-4, 1e6, 20000)
	best, bestMag := 0, -1.0
	for i, w := range grid {
		if m := c.Magnitude(w); m > bestMag {
			best, bestMag = i, m
		}
	}
	if best == 0 {
		return 0
	}
	slope := func(w float64) float64 {
		h, dh := c.TransferS(complex(0, w))
		return -imag(dh / h)
	}
	lo, hi := grid[best-1], grid[best+1]
	for range 200 {
		mid := 0.5 * (lo + hi)
		if mid <= lo || mid >= hi {
			break
		}
		if slope(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}

func TestTheorem1InverseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		mu := logUniform(r, 1, 200)
		rho := logUniform(r, 0.5, 100)
		// Eq. 4 has condition number ≈ ρ²/(2Ω*²) near the threshold (Ω* ≪ ρ), where κ itself cannot
		// carry more digits; keep Ω* ≥ ρ/10 (condition ≤ 50) so that 1e-12 is a fair bound.
		omega := logUniform(r, 0.1*rho, 2000)
		kappa := KappaStar(mu, rho, omega)
		if !(kappa > 0) {
			t.Fatalf("case %d: κ* = %g not positive (μ=%g ρ=%g Ω*=%g)", i, kappa, mu, rho, omega)
		}
		back, ok := OmegaStar(mu, rho, kappa)
		if !ok || relErr(back, omega) > 1e-12 {
			t.Fatalf("case %d: Ω*(κ*(%g)) = %g ok=%v, rel err %g (μ=%g ρ=%g)", i, omega, back, ok, relErr(back, omega), mu, rho)
		}
		// The other direction: κ above the threshold maps to Ω* and back.
		k := KappaThreshold(mu, rho) * logUniform(r, 1.01, 1e4)
		w, ok := OmegaStar(mu, rho, k)
		if !ok {
			t.Fatalf("case %d: κ = %g above threshold gave no target", i, k)
		}
		if kb := KappaStar(mu, rho, w); relErr(kb, k) > 1e-12 {
			t.Fatalf("case %d: κ*(Ω*(%g)) = %g, rel err %g", i, k, kb, relErr(kb, k))
		}
	}
}

func TestTheorem1MatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		mu := logUniform(r, 1, 200)
		rho := logUniform(r, 0.5, 100)
		omega := logUniform(r, 0.5, 2000)
		c := CT{Mu: mu, Rho: rho, Kappa: KappaStar(mu, rho, omega)}
		got, ok := c.Target()
		want := bruteForceCTPeak(c)
		if !ok || relErr(got, want) > 1e-9 {
			t.Fatalf("case %d (μ=%g ρ=%g κ=%g): Theorem 1 Ω* = %g ok=%v, brute force %g", i, mu, rho, c.Kappa, got, ok, want)
		}
	}
}

func TestTheorem1NoNonzeroMaximizer(t *testing.T) {
	for _, tc := range []struct{ mu, rho, kappa float64 }{
		{25, 5, 0},    // standard LIF: κ = 0
		{25, 5, -10},  // negative κ
		{25, 5, 0.5},  // below the threshold κ₀ ≈ 2.0
		{4, 1, 0.099}, // below κ₀ = −5 + √26 ≈ 0.099
	} {
		c := CT{Mu: tc.mu, Rho: tc.rho, Kappa: tc.kappa}
		if tc.kappa >= KappaThreshold(tc.mu, tc.rho) {
			t.Fatalf("test case κ = %g is not below the threshold %g", tc.kappa, KappaThreshold(tc.mu, tc.rho))
		}
		w, ok := c.Target()
		if ok || w != 0 {
			t.Errorf("μ=%g ρ=%g κ=%g: got Ω* = %g ok=%v, want 0 false", tc.mu, tc.rho, tc.kappa, w, ok)
		}
		if tc.kappa >= 0 {
			if b := bruteForceCTPeak(c); b != 0 {
				t.Errorf("μ=%g ρ=%g κ=%g: brute force finds a nonzero peak at %g", tc.mu, tc.rho, tc.kappa, b)
			}
		}
	}
}

func TestKappaThreshold(t *testing.T) {
	// κ₀ solves κ² + 2ρ(ρ+μ)κ − ρ⁴ = 0 (x* = 0 in Eq. app_fs_xstar).
	for _, tc := range []struct{ mu, rho float64 }{{25, 5}, {4, 1}, {10, 0.5}, {1000, 2}} {
		k := KappaThreshold(tc.mu, tc.rho)
		p := k*k + 2*tc.rho*(tc.rho+tc.mu)*k - math.Pow(tc.rho, 4)
		if math.Abs(p) > 1e-12*math.Pow(tc.rho, 4) {
			t.Errorf("μ=%g ρ=%g: residual %g at κ₀ = %g", tc.mu, tc.rho, p, k)
		}
		if got := KappaStar(tc.mu, tc.rho, 0); relErr(got, k) > 1e-14 {
			t.Errorf("μ=%g ρ=%g: KappaStar(0) = %g, want κ₀ = %g", tc.mu, tc.rho, got, k)
		}
	}
}

func TestPaperPoleExample(t *testing.T) {
	// Appendix A.6: μ = 4, ρ = 1, κ = 2 has real poles yet a nonzero target, (Ω*)² = √24 − 1. The paper
	// prints Ω* ≈ 1.98; the exact value is 1.97458…, which rounds to 1.97 (the paper rounds up).
	c := CT{Mu: 4, Rho: 1, Kappa: 2}
	if _, ok := c.PoleFrequency(); ok {
		t.Error("μ=4 ρ=1 κ=2: PoleFrequency reports complex poles, want real")
	}
	p1, p2 := c.Poles()
	if imag(p1) != 0 || imag(p2) != 0 {
		t.Errorf("poles %v %v are not real", p1, p2)
	}
	w, ok := c.Target()
	if !ok || math.Abs(w-math.Sqrt(math.Sqrt(24)-1)) > 1e-14 || math.Abs(w-1.98) > 0.01 {
		t.Errorf("Ω* = %g ok=%v, want √(√24 − 1) ≈ 1.98", w, ok)
	}
	// Complex-pole case: Ω_pole is |Im| of the poles.
	c = CT{Mu: 4, Rho: 1, Kappa: 30}
	wp, ok := c.PoleFrequency()
	p1, _ = c.Poles()
	if !ok || math.Abs(wp-imag(p1)) > 1e-12 || math.Abs(wp-0.5*math.Sqrt(4*34-25)) > 1e-12 {
		t.Errorf("Ω_pole = %g ok=%v, pole %v", wp, ok, p1)
	}
}

func TestCTPolesAreRoots(t *testing.T) {
	for _, c := range []CT{{4, 1, 2}, {4, 1, 30}, {25, 5, 3825}, {25, 5, 0}} {
		p1, p2 := c.Poles()
		for _, p := range []complex128{p1, p2} {
			q := p*p + complex(c.Mu+c.Rho, 0)*p + complex(c.Mu*c.Rho+c.Kappa, 0)
			if cabs(q) > 1e-9*(c.Mu*c.Rho+c.Kappa+1) {
				t.Errorf("%+v: pole %v residual %v", c, p, q)
			}
		}
	}
}

func TestCTResponseMatchesMagnitudeFormula(t *testing.T) {
	// |H(jΩ)|² of Eq. app_fs_mag_sq.
	c := CT{Mu: 25, Rho: 5, Kappa: 3825}
	for _, w := range []float64{0, 1, 10, 62.8, 100, 1000} {
		want := (c.Rho*c.Rho + w*w) / (math.Pow(c.Mu*c.Rho+c.Kappa-w*w, 2) + math.Pow((c.Mu+c.Rho)*w, 2))
		if got := c.Magnitude(w); relErr(got*got, want) > 1e-13 {
			t.Errorf("Ω = %g: |H|² = %g, want %g", w, got*got, want)
		}
	}
}

func TestCTGroupDelayMatchesFiniteDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		c := CT{Mu: logUniform(r, 1, 200), Rho: logUniform(r, 0.5, 100), Kappa: logUniform(r, 1, 1e6)}
		w := logUniform(r, 0.01, 5000)
		h := 1e-5 * w
		fd := fdGroupDelay(c.Response, w, h)
		got := c.GroupDelay(w)
		if math.Abs(got-fd) > 1e-6*math.Max(math.Abs(got), 1/(c.Mu+c.Rho+w)) {
			t.Fatalf("case %d %+v Ω=%g: analytic %g, finite difference %g", i, c, w, got, fd)
		}
	}
}

func TestConstantsHzHelpers(t *testing.T) {
	c := SSC
	k, err := c.KappaForTargetHz(10)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := c.TargetHz(k)
	if !ok || relErr(f, 10) > 1e-13 {
		t.Errorf("TargetHz(KappaForTargetHz(10)) = %g ok=%v", f, ok)
	}
	if relErr(KappaStarHz(c.Mu(), c.Rho(), 10), k) > 1e-15 {
		t.Error("KappaStarHz disagrees with KappaForTargetHz")
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := c.KappaForTargetHz(bad); err == nil {
			t.Errorf("KappaForTargetHz(%g) succeeded", bad)
		}
	}
	if got := c.HzFromRadPerSample(c.RadPerSampleFromHz(37)); relErr(got, 37) > 1e-15 {
		t.Errorf("Hz ↔ rad/sample round trip gave %g", got)
	}
	if got := HzFromRadPerSec(RadPerSecFromHz(37)); relErr(got, 37) > 1e-15 {
		t.Errorf("Hz ↔ rad/s round trip gave %g", got)
	}
	if c.NyquistHz() != 125 {
		t.Errorf("Nyquist at Δt = 4 ms is %g Hz, want 125", c.NyquistHz())
	}
}

func TestConstantsValidate(t *testing.T) {
	for _, tc := range []struct {
		c  Constants
		ok bool
	}{
		{SSC, true},
		{GSC, true},
		{Constants{0, 0.2, 0.004}, false},
		{Constants{0.04, -0.2, 0.004}, false},
		{Constants{0.04, 0.2, 0}, false},
		{Constants{0.04, 0.2, math.NaN()}, false},
		{Constants{0.04, math.Inf(1), 0.004}, false},
		{Constants{0.04, 0.2, 0.04}, false}, // μ̄ = 0
		{Constants{0.04, 0.02, 0.03}, false},
	} {
		if err := tc.c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tc.c, err, tc.ok)
		}
	}
}
