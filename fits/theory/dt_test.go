package theory

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// randomStableTarget draws constants and a CT target f* (Hz) below 95% of the semi-implicit Jury bound.
func randomStableTarget(r *rand.Rand) (Constants, float64) {
	c := randomConstants(r)
	fmax := c.Jury().FStarMaxSemiImplicitHz
	return c, logUniform(r, 0.02*fmax, 0.95*fmax)
}

// randomStableKappa returns random constants and the κ of a random target below their Jury bound
// (randomStableTarget, Theorem 1).
func randomStableKappa(r *rand.Rand) (Constants, float64) {
	c, f := randomStableTarget(r)
	k, _ := c.KappaForTargetHz(f)
	return c, k
}

// randomFS is the FS module of randomStableKappa.
func randomFS(r *rand.Rand) FS {
	c, k := randomStableKappa(r)
	return c.FS(k)
}

func TestTheorem2MatchesSweep(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	both := 0
	for i := range 300 {
		c, f := randomStableTarget(r)
		k, err := c.KappaForTargetHz(f)
		if err != nil {
			t.Fatal(err)
		}
		if !c.FS(k).Stable() {
			t.Fatalf("case %d: κ below the semi-implicit Jury bound is unstable (%+v, f* = %g)", i, c, f)
		}
		closed, ok1 := c.DTTargetHz(k)
		sweep, ok2 := c.DTSweepTargetHz(k)
		if ok1 != ok2 {
			t.Fatalf("case %d %+v f*=%g: closed form ok=%v (%g Hz), sweep ok=%v (%g Hz)", i, c, f, ok1, closed, ok2, sweep)
		}
		if !ok1 {
			continue
		}
		both++
		if math.Abs(closed-sweep) > 1e-6 {
			t.Fatalf("case %d %+v f*=%g: closed form %.12g Hz, sweep %.12g Hz", i, c, f, closed, sweep)
		}
	}
	if both < 250 {
		t.Errorf("only %d of 300 cases had a realized DT target; the test checks too little", both)
	}
}

func TestTheorem2PaperConstants(t *testing.T) {
	// At the SHD/SSC constants the realized DT target is above the CT target and the gap grows
	// with frequency (Section 5.3, Appendix A.3).
	c := SSC
	prevGap := 0.0
	for _, f := range []float64{1, 5, 10, 20, 50} {
		k, _ := c.KappaForTargetHz(f)
		fd, ok := c.DTTargetHz(k)
		fs, ok2 := c.DTSweepTargetHz(k)
		if !ok || !ok2 || math.Abs(fd-fs) > 1e-6 {
			t.Fatalf("f* = %g: closed form %g (%v), sweep %g (%v)", f, fd, ok, fs, ok2)
		}
		gap := fd - f
		if !(gap > prevGap) {
			t.Errorf("f* = %g Hz: DT − CT gap %g Hz does not grow (previous %g)", f, gap, prevGap)
		}
		prevGap = gap
	}
}

func TestTheorem2Candidates(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 200 {
		fs := randomFS(r)
		tg := fs.Target()
		// x± are the roots of the stationarity quadratic (Eq. app_fs_dt_stationary_quad_bar).
		for _, x := range []float64{tg.XMinus, tg.XPlus} {
			scale := fs.MuBar * math.Pow(1+fs.RhoBar*fs.RhoBar+2*fs.RhoBar*math.Abs(x), 2)
			if q := fs.Stationary(x); math.Abs(q) > 1e-12*scale {
				t.Fatalf("case %d: quadratic at x = %g is %g", i, x, q)
			}
		}
		if !(tg.XPlus > 1) || !math.IsNaN(tg.OmegaPlus) {
			t.Fatalf("case %d: x₊ = %g (ω₊ = %g), want x₊ > 1 and no ω₊", i, tg.XPlus, tg.OmegaPlus)
		}
		if tg.OK && relErr(math.Cos(tg.Omega), tg.XMinus) > 1e-12 && math.Abs(math.Cos(tg.Omega)-tg.XMinus) > 1e-15 {
			t.Fatalf("case %d: cos ω* = %g, x₋ = %g", i, math.Cos(tg.Omega), tg.XMinus)
		}
	}
}

func TestMagnitudeSquaredXAndStationarySign(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 200 {
		fs := randomFS(r)
		w := r.Float64() * math.Pi
		x := math.Cos(w)
		m := fs.Magnitude(w)
		if got := fs.MagnitudeSquaredX(x); relErr(got, m*m) > 1e-9 {
			t.Fatalf("case %d ω=%g: M(x) = %g, |H_d|² = %g", i, w, got, m*m)
		}
		// dM/dx has the sign of the stationarity quadratic.
		h := 1e-6
		if x-h <= -1 || x+h >= 1 {
			continue
		}
		d := fs.MagnitudeSquaredX(x+h) - fs.MagnitudeSquaredX(x-h)
		q := fs.Stationary(x)
		if math.Abs(d) > 1e-9*fs.MagnitudeSquaredX(x) && (d > 0) != (q > 0) {
			t.Fatalf("case %d x=%g: dM/dx ≈ %g but quadratic %g", i, x, d, q)
		}
	}
}

func TestKappaDTExact(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := range 300 {
		c := randomConstants(r)
		f := logUniform(r, 1e-3*c.NyquistHz(), 0.999*c.NyquistHz())
		k, err := c.KappaDTExact(f)
		if err != nil {
			t.Fatalf("case %d %+v f=%g: %v", i, c, f, err)
		}
		fs := c.FS(k)
		if !fs.Stable() {
			t.Fatalf("case %d: κ = %g is unstable", i, k)
		}
		closed, ok := c.DTTargetHz(k)
		sweep, ok2 := c.DTSweepTargetHz(k)
		if !ok || !ok2 || math.Abs(sweep-f) > 1e-6 || math.Abs(closed-f) > 1e-6 {
			t.Fatalf("case %d %+v: asked %.12g Hz, closed form %.12g (%v), sweep %.12g (%v)", i, c, f, closed, ok, sweep, ok2)
		}
		// The target is a maximum: |H_d| is lower on both sides.
		w := c.RadPerSampleFromHz(f)
		dw := 1e-3 * math.Min(w, math.Pi-w)
		if !(fs.Magnitude(w) > fs.Magnitude(w-dw) && fs.Magnitude(w) > fs.Magnitude(w+dw)) {
			t.Fatalf("case %d: ω = %g is not a local maximum", i, w)
		}
	}
}

func TestKappaDTExactErrors(t *testing.T) {
	c := SSC
	for _, f := range []float64{125, 200, 0, -3, math.NaN()} {
		if _, err := c.KappaDTExact(f); err == nil {
			t.Errorf("KappaDTExact(%g Hz) succeeded", f)
		}
	}
	if _, err := c.KappaDTExact(130); !errors.Is(err, ErrAboveNyquist) {
		t.Errorf("above Nyquist: got %v, want ErrAboveNyquist", err)
	}
	if _, err := KappaBarForTarget(1.2, 0.9, 1); err == nil {
		t.Error("μ̄ > 1 accepted")
	}
	if _, err := KappaBarForTarget(0.9, 0, 1); err == nil {
		t.Error("ρ̄ = 0 accepted")
	}
}

func TestFSNoTargetBelowThreshold(t *testing.T) {
	// With tiny κ̄ the DT response is low-pass: no realized target, and the sweep agrees.
	fs := FS{MuBar: 0.9, RhoBar: 0.98, KappaBar: 1e-6}
	if tg := fs.Target(); tg.OK {
		t.Errorf("κ̄ = 1e-6: realized target %g reported", tg.Omega)
	}
	if _, ok := SweepPeak(fs); ok {
		t.Error("κ̄ = 1e-6: sweep found an interior peak")
	}
}

func TestFSMatchesSimulatedImpulseResponse(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for i := range 20 {
		c, k := randomStableKappa(r)
		fs := c.FS(k)
		l1, l2 := c.SemiImplicitMatrix(EqualGains(k)).Eigenvalues()
		rad := math.Max(cabs(l1), cabs(l2))
		n := int(math.Log(1e-15)/math.Log(rad)) + 64
		if n > 1<<20 {
			continue
		}
		h := simulateNoSpikes(fs, TS{}, impulse(n))
		if h[0] != 0 || h[1] != 1 {
			t.Fatalf("case %d: h[0], h[1] = %g, %g; want 0, 1 (I[k] enters V[k+1])", i, h[0], h[1])
		}
		peak := 0.0
		for _, w := range LinSpace(0, math.Pi, 9) {
			peak = math.Max(peak, fs.Magnitude(w))
		}
		for j := range 16 {
			w := 2 * math.Pi * float64(r.IntN(n/2)) / float64(n)
			got, want := fs.Response(w), dtft(h, w)
			if cabs(got-want) > 1e-9*math.Max(peak, 1) {
				t.Fatalf("case %d bin %d ω=%g: H_d = %v, DFT of impulse response = %v", i, j, w, got, want)
			}
		}
	}
}

func TestFSGroupDelayMatchesFiniteDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for i := range 300 {
		fs := randomFS(r)
		w := 0.01 + r.Float64()*(math.Pi-0.02)
		fd := fdGroupDelay(fs.Response, w, 1e-6)
		if got := fs.GroupDelay(w); math.Abs(got-fd) > 1e-5*math.Max(1, math.Abs(got)) {
			t.Fatalf("case %d ω=%g: analytic %g, finite difference %g", i, w, got, fd)
		}
	}
}

func TestBodeAndUnwrap(t *testing.T) {
	fs := SSC.FS(3825.67)
	grid := LinSpace(0, math.Pi, 400)
	b := BodeOf(fs, grid)
	for i := range grid {
		if relErr(b.Magnitude[i], fs.Magnitude(grid[i])) > 1e-15 {
			t.Fatalf("Bode magnitude differs at %d", i)
		}
		if d := math.Remainder(b.Phase[i]-fs.Phase(grid[i]), 2*math.Pi); math.Abs(d) > 1e-12 {
			t.Fatalf("Bode phase at %d is not the principal phase modulo 2π", i)
		}
		if i > 0 && math.Abs(b.Phase[i]-b.Phase[i-1]) > 0.5 {
			t.Fatalf("unwrapped phase jumps by %g at %d", b.Phase[i]-b.Phase[i-1], i)
		}
	}
	got := UnwrapPhase([]float64{3, -3, 3})
	want := []float64{3, 2*math.Pi - 3, 3}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("UnwrapPhase = %v, want %v", got, want)
		}
	}
}
