package nb

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/sim"
	"github.com/fits-snn/fits/fits/theory"
)

// near reports |a − b| ≤ tol·max(1, |b|) (panel data keep 3–4 significant digits).
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func checkCurve(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(want[i]) && !near(got[i], want[i], tol)) {
			t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

// panelSizeOK fails t on err, the error of making g, and checks that g's HTML is at most max bytes and
// holds a read-out.
func panelSizeOK(t *testing.T, g *GridPanel, err error, max int) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	h, err := g.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if len(h) > max {
		t.Errorf("panel HTML is %d bytes, over %d", len(h), max)
	}
	if !strings.Contains(h, `data-role="readout"`) {
		t.Error("no read-out")
	}
}

func TestDiscretizationPanel(t *testing.T) {
	g, err := DiscretizationPanel(DefaultDiscretizationPanelConfig())
	panelSizeOK(t, g, err, 2_500_000)
	c := theory.SSC
	// Δt = 4 ms, τm = 40 ms, τa = 200 ms, f* = 20 Hz: both inverses.
	for exact := range 2 {
		at := []int{2, 2, 1, 3, exact}
		kappa, err := c.KappaForTargetHz(20)
		if exact == 1 {
			kappa, err = c.KappaDTExact(20)
		}
		if err != nil {
			t.Fatal(err)
		}
		eta, gamma := theory.EqualGains(kappa)
		vs, as := c.SemiImplicitMatrix(eta, gamma).Trajectory(1, 0, discSteps)
		d, _ := g.Series("phase", "semi", at...)
		checkCurve(t, "semi-implicit V", d.X, vs, 1e-3)
		checkCurve(t, "semi-implicit a", d.Y, as, 1e-3)
		ve, _ := c.ExplicitMatrix(eta, gamma).Trajectory(1, 0, discSteps)
		d, _ = g.Series("phase", "explicit", at...)
		checkCurve(t, "explicit V", d.X, ve, 1e-3)
		if !d.Alt { // 20 Hz is above the explicit limit, 13.8 Hz
			t.Error("explicit trajectory at 20 Hz not drawn as unstable")
		}
		fdt, ok := c.DTTargetHz(kappa)
		cur, _ := g.Series("target", "current", at...)
		if !ok || len(cur.Y) != 1 || !near(cur.X[0], 20, 1e-9) || !near(cur.Y[0], fdt, 1e-3) {
			t.Errorf("exact=%d: current point %v, %v; want (20, %g)", exact, cur.X, cur.Y, fdt)
		}
		if exact == 1 && math.Abs(fdt-20) > 1e-6 {
			t.Errorf("DT-exact κ realizes %g Hz", fdt)
		}
		if exact == 0 && !(fdt-20 > 0.5) {
			t.Errorf("CT inverse gap %g Hz, want the paper's ≈ 0.9 Hz", fdt-20)
		}
		kb, _ := g.Series("stab", "kb", at...)
		if !near(kb.X[0], c.KappaBar(kappa), 1e-3) {
			t.Errorf("κΔt² marker %v, want %g", kb.X, c.KappaBar(kappa))
		}
		fr, _ := g.Frame(at...)
		if !strings.Contains(fr.Readout, "f*_DT") || !strings.Contains(fr.Readout, "gap") {
			t.Errorf("read-out %q", fr.Readout)
		}
	}
	// The shaded stable ranges end at the Jury bounds (Appendix A.2: 13.8 and 77.2 Hz at SSC).
	j := c.Jury()
	be, _ := g.Series("stab", "bandE", 2, 2, 1, 3, 0)
	bs, _ := g.Series("stab", "bandS", 2, 2, 1, 3, 0)
	if !near(be.X[1], c.KappaBar(j.KappaMaxExplicit), 1e-3) || !near(bs.X[1], c.KappaBar(j.KappaMaxSemiImplicit), 1e-3) {
		t.Errorf("stable bands end at %g, %g", be.X[1], bs.X[1])
	}
	lim, _ := g.Series("target", "limits", 2, 2, 1, 3, 0)
	if math.Abs(lim.X[0]-13.8) > 0.05 || math.Abs(lim.X[1]-77.2) > 0.05 {
		t.Errorf("Jury limits %v Hz, want 13.8 and 77.2", lim.X)
	}
	// The spectral radius on the grid is the update matrix's.
	rs, _ := g.Series("stab", "semi", 2, 2, 1, 3, 0)
	eta, gamma := theory.EqualGains(c.KappaFromBar(rs.X[60]))
	if want := c.SemiImplicitMatrix(eta, gamma).SpectralRadius(); !near(rs.Y[60], want, 1e-3) {
		t.Errorf("semi-implicit radius %g, want %g", rs.Y[60], want)
	}
}

func TestTSPanel(t *testing.T) {
	cfg := DefaultTSPanelConfig()
	g, err := TSPanel(cfg)
	panelSizeOK(t, g, err, 2_000_000)
	c := cfg.Constants
	kappa, _ := c.KappaForTargetHz(cfg.FStar)
	for _, tc := range []struct {
		at      []int
		nesting theory.Nesting
		m       int
	}{{[]int{1, 2, 1, 0, 0, 0}, theory.OfficialNesting, 1}, {[]int{2, 2, 0, 0, 2, 0}, theory.OfficialNesting, 2}, {[]int{2, 2, 0, 0, 2, 1}, theory.PaperNesting, 2}} {
		beta := [2]float64{cfg.Beta[tc.at[1]], cfg.Beta[tc.at[3]]}
		lambda := [2]float64{cfg.Lambda[tc.at[2]], cfg.Lambda[tc.at[4]]}
		ts := theory.TS{Beta: beta[:tc.m], Lambda: lambda[:tc.m], Nesting: tc.nesting}
		cl := theory.ClosedLoop{FS: c.FS(kappa), TS: ts}
		d, _ := g.Series("delay", "ts", tc.at...)
		dcl, _ := g.Series("delay", "cl", tc.at...)
		want, wantCL := make([]float64, len(d.X)), make([]float64, len(d.X))
		for i, f := range d.X {
			w := c.RadPerSampleFromHz(f)
			want[i], wantCL[i] = ts.GroupDelay(w), cl.GroupDelay(w)
		}
		checkCurve(t, "TS delay", d.Y, want, 2e-3)
		checkCurve(t, "closed-loop delay", dcl.Y, wantCL, 2e-3)
		// The step response is fits/sim's.
		p, err := sim.Config{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt, FStar: cfg.FStar, Beta: ts.Beta, Lambda: ts.Lambda, Vth: 1e300, Nesting: tc.nesting}.Params()
		if err != nil {
			t.Fatal(err)
		}
		ones := make([]float64, cfg.StepT)
		for k := range ones {
			ones[k] = 1
		}
		tr, _ := sim.Run(p, ones)
		st, _ := g.Series("step", "cl", tc.at...)
		checkCurve(t, "step response", st.Y, tr.VPre, 2e-3)
		// Shaded: the TS delay is negative there (Proposition 1's condition for M = 1).
		bands, _ := g.Series("delay", "neg", tc.at...)
		if tc.m == 1 && len(bands.X) == 0 {
			t.Errorf("%v: no negative-delay band (λ ≤ 0.3, β = 0.5)", tc.at)
		}
		for i := 0; i+1 < len(bands.X); i += 2 {
			mid := c.RadPerSampleFromHz((bands.X[i] + bands.X[i+1]) / 2)
			if ts.GroupDelay(mid) >= 0 || (tc.m == 1 && !theory.NegativeDelay(beta[0], lambda[0], mid)) {
				t.Errorf("%v: band [%g, %g] Hz is not a negative-delay region", tc.at, bands.X[i], bands.X[i+1])
			}
		}
	}
	// The two nestings differ for M = 2 and coincide for M = 1.
	a, _ := g.Series("mag", "cl", 2, 2, 0, 0, 2, 0)
	b, _ := g.Series("mag", "cl", 2, 2, 0, 0, 2, 1)
	if equalFloats(a.Y, b.Y) {
		t.Error("M = 2: the nestings give the same closed loop")
	}
	a, _ = g.Series("mag", "cl", 1, 2, 0, 0, 2, 0)
	b, _ = g.Series("mag", "cl", 1, 2, 0, 0, 2, 1)
	if !equalFloats(a.Y, b.Y) {
		t.Error("M = 1: the nestings differ")
	}
	// λ ≥ 1/2 with one stage: no negative delay (Proposition 1).
	if bands, _ := g.Series("delay", "neg", 1, 2, 3, 0, 0, 0); len(bands.X) != 0 {
		t.Errorf("λ = 0.9: negative band %v", bands.X)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPolePanel(t *testing.T) {
	g, err := PolePanel(DefaultPolePanelConfig())
	panelSizeOK(t, g, err, 500_000)
	// The paper's example μ = 4, ρ = 1, κ = 2: real poles −2, −3, yet Ω* = √(√24 − 1) ≈ 1.98 rad/s.
	at, err := g.Set(map[string]float64{"mu": 4, "rho": 1, "kappa": 2})
	if err != nil {
		t.Fatal(err)
	}
	poles, _ := g.Series("splane", "poles", at...)
	if len(poles.X) != 2 || !near(math.Min(poles.X[0], poles.X[1]), -3, 1e-6) || !near(math.Max(poles.X[0], poles.X[1]), -2, 1e-6) || poles.Y[0] != 0 || poles.Y[1] != 0 {
		t.Errorf("poles %v + j%v, want −2 and −3", poles.X, poles.Y)
	}
	peak, _ := g.Series("splane", "peak", at...)
	ws := math.Sqrt(math.Sqrt(24) - 1)
	if len(peak.Y) != 2 || !near(peak.Y[0], ws, 1e-3) {
		t.Errorf("peak %v, want ±%g", peak.Y, ws)
	}
	if pole, _ := g.Series("mag", "pole", at...); len(pole.X) != 0 {
		t.Errorf("pole frequency %v marked for real poles", pole.X)
	}
	sep, _ := g.Series("freqs", "sep", at...)
	if len(sep.X) != 2 || !near(sep.X[0], theory.KappaThreshold(4, 1), 1e-3) || !near(sep.X[1], 2.25, 1e-6) {
		t.Errorf("separation band %v", sep.X)
	}
	// A complex pair: μ = 1, ρ = 0.5, κ = 64; the drawn poles are theory's.
	at, _ = g.Set(map[string]float64{"mu": 1, "rho": 0.5, "kappa": 64})
	ct := theory.CT{Mu: 1, Rho: 0.5, Kappa: 64}
	p1, _ := ct.Poles()
	poles, _ = g.Series("splane", "poles", at...)
	if !near(poles.X[0], real(p1), 1e-3) || !near(poles.Y[0], imag(p1), 1e-3) {
		t.Errorf("poles %v, %v; want %v", poles.X, poles.Y, p1)
	}
	mag, _ := g.Series("mag", "h", at...)
	wStar, _ := ct.Target()
	for i, w := range mag.X {
		if want := round(db(ct.Magnitude(w)/ct.Magnitude(wStar)), 2); !near(mag.Y[i], want, 2e-3) {
			t.Fatalf("|H| at %g rad/s: %g dB, want %g", w, mag.Y[i], want)
		}
	}
}

func TestPlaygroundPanel(t *testing.T) {
	cfg := DefaultPlaygroundConfig()
	g, err := PlaygroundPanel(cfg)
	panelSizeOK(t, g, err, 4_500_000)
	c := cfg.Constants
	for _, set := range []map[string]float64{{"input": 0, "amp": 2, "fstar": 5, "m": 0}, {"input": 3, "amp": 4, "fstar": 20, "m": 2, "beta": 0.5, "lambda": 0.2, "nesting": 1},
		{"input": 1, "amp": 4, "fstar": 2.5, "m": 1, "beta": -0.5, "lambda": 0.8}} {
		at, err := g.Set(set)
		if err != nil {
			t.Fatal(err)
		}
		fstar, m, nesting := cfg.FStar[at[2]], at[3], theory.Nesting(at[6])
		u, _, err := PlaygroundInput(at[0], c.Dt, cfg.Steps)
		if err != nil {
			t.Fatal(err)
		}
		gain, _ := PlaygroundGain(c, fstar)
		in := make([]float64, len(u))
		for k := range u {
			in[k] = cfg.Amp[at[1]] * u[k] / gain
		}
		b, l := make([]float64, m), make([]float64, m)
		for i := range b {
			b[i], l[i] = cfg.Beta[at[4]], cfg.Lambda[at[5]]
		}
		p, err := sim.Config{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt, FStar: fstar, Beta: b, Lambda: l, Vth: 1, Nesting: nesting}.Params()
		if err != nil {
			t.Fatal(err)
		}
		tr, err := sim.RunStates(p, in)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := g.Series("voltage", "v", at...)
		checkCurve(t, "voltage", v.Y, tr.VPre, 6e-3)
		s, _ := g.Series("spikes", "s", at...)
		n := 0
		for k, x := range tr.Spikes {
			if x == 1 {
				if n >= len(s.X) || !near(s.X[n], float64(k+1)*c.Dt, 1e-3) {
					t.Fatalf("%v: spike %d at step %d not drawn (%v)", at, n, k, s.X)
				}
				n++
			}
		}
		if n != len(s.X) {
			t.Errorf("%v: %d spikes drawn, %d simulated", at, len(s.X), n)
		}
		// |H| is drawn in dB re the FS module's peak gain (the drive's scale), not re its own peak.
		kappa, _ := c.KappaForTargetHz(fstar)
		cl := theory.ClosedLoop{FS: c.FS(kappa), TS: theory.TS{Beta: b, Lambda: l, Nesting: nesting}}
		h, _ := g.Series("spectrum", "h", at...)
		grid := theory.LogSpace(0.5, c.NyquistHz()*0.999, 90) // the data keep 3 digits of f: use the exact grid
		for i, f := range grid {
			if want := db(cl.Magnitude(c.RadPerSampleFromHz(f)) / gain); !near(h.Y[i], want, 2e-2) {
				t.Fatalf("%v: |H| at %g Hz = %g dB, want %g", at, f, h.Y[i], want)
			}
		}
	}
	// The neuron fires where f* sits: a = 2 on the chirp, no TS, f* = 10 Hz and 20 Hz: the first spike
	// comes while the chirp is within 25 % above f*.
	for _, fi := range []int{4, 6} {
		at, _ := g.Set(map[string]float64{"input": 0, "amp": 2, "fstar": cfg.FStar[fi], "m": 0})
		s, _ := g.Series("spikes", "s", at...)
		if len(s.X) == 0 {
			t.Fatalf("f* = %g Hz: no spike on the chirp", cfg.FStar[fi])
		}
		f := PlaygroundChirpHz(s.X[0]-c.Dt, float64(cfg.Steps)*c.Dt)
		if f < cfg.FStar[fi] || f > 1.25*cfg.FStar[fi] {
			t.Errorf("f* = %g Hz: first spike with the chirp at %.1f Hz", cfg.FStar[fi], f)
		}
	}
}

func TestPlaygroundInputs(t *testing.T) {
	for kind := range PlaygroundInputs {
		u, label, err := PlaygroundInput(kind, 0.004, 250)
		if err != nil || len(u) != 250 || label == "" {
			t.Fatalf("kind %d: %d values, %q, %v", kind, len(u), label, err)
		}
		// Every input reaches as far as the chirp with the FS module alone at the reference target.
		reach, err := playgroundReach(theory.SSC, u)
		if err != nil {
			t.Fatal(err)
		}
		chirp, _, _ := PlaygroundInput(0, 0.004, 250)
		if want, _ := playgroundReach(theory.SSC, chirp); math.Abs(reach-want) > 1e-9 || !(want > 0.8 && want < 1) {
			t.Errorf("kind %d: reaches %g, the chirp %g (want just below the threshold)", kind, reach, want)
		}
	}
	if _, _, err := PlaygroundInput(4, 0.004, 10); err == nil {
		t.Error("unknown input accepted")
	}
	// The chirp spectrum peaks inside 0.5–60 Hz, the two tones' at 6 or 25 Hz.
	f := theory.LogSpace(0.5, 120, 200)
	u, _, _ := PlaygroundInput(1, 0.004, 250)
	sp := Spectrum(u, 0.004, f, -40)
	best := 0
	for i := range sp {
		if sp[i] > sp[best] {
			best = i
		}
	}
	if math.Abs(f[best]-6) > 0.5 && math.Abs(f[best]-25) > 1 {
		t.Errorf("two tones' spectrum peaks at %g Hz", f[best])
	}
	if PlaygroundChirpHz(0, 1) != 0.5 || math.Abs(PlaygroundChirpHz(1, 1)-60) > 1e-9 {
		t.Error("chirp does not sweep 0.5–60 Hz")
	}
	if tm, ok := PlaygroundChirpTime(10, 1); !ok || math.Abs(PlaygroundChirpHz(tm, 1)-10) > 1e-9 {
		t.Errorf("the chirp passes 10 Hz at %g s", tm)
	}
	// Per log-frequency band the logarithmic chirp is flat over its range: within 6 dB from 1 to 50 Hz
	// (a Hann-windowed spectrum per Hz would fall by 35 dB and more at 40–50 Hz).
	u, _, _ = PlaygroundInput(0, 0.004, 250)
	flat := Spectrum(u, 0.004, theory.LogSpace(1, 50, 40), -60)
	if lo := slices.Min(flat); lo < -6 {
		t.Errorf("chirp spectrum falls to %g dB inside its range", lo)
	}
}
