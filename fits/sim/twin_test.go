package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
)

// sscLayer returns the SSC constants of Appendix B with the graph's default κ fraction 0.99.
func sscLayer(order int) Layer {
	return Layer{TauM: 0.04, TauA: 0.2, Dt: 0.004, Vth: 1, Order: order, KappaFraction: 0.99}
}

// TestTwins runs every registered twin: the paper's five kinds are present, Sample gives exactly the
// variables the twin names, and their Params are valid; an extra or a missing variable is an error.
func TestTwins(t *testing.T) {
	names := TwinNames()
	for _, n := range []string{"lif", "adaptlif", "fs-frozen", "fs", "fsts"} {
		if !slices.Contains(names, n) {
			t.Errorf("no twin %q (have %v)", n, names)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			tw, err := LookupTwin(n)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range []Layer{sscLayer(0), sscLayer(2), {TauM: 0.1, TauA: 0.5, Dt: 0.01, Vth: 1, Order: 1, DTExact: true, KappaFraction: 0.99}} {
				if n == "fsts" && l.Order == 0 {
					continue
				}
				for range 20 {
					v := tw.Sample(rng, l)
					got := make([]string, 0, len(v))
					for name := range v {
						got = append(got, name)
					}
					if want := slices.Sorted(slices.Values(tw.Variables(l))); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
						t.Fatalf("Sample gives %v, Variables %v", got, want)
					}
					p, err := tw.Params(l, v)
					if err != nil {
						t.Fatalf("Params(%v): %v", v, err)
					}
					if err := p.Validate(); err != nil {
						t.Fatal(err)
					}
					if kmax, _ := l.KappaMax(); p.Eta*p.Gamma >= kmax/l.KappaFraction {
						t.Fatalf("κ = ηγ = %g beyond the Jury bound %g", p.Eta*p.Gamma, kmax/l.KappaFraction)
					}
				}
				v := tw.Sample(rng, l)
				v["resonance"] = []float64{1}
				if _, err := tw.Params(l, v); err == nil || !strings.Contains(err.Error(), "resonance") {
					t.Errorf("Params accepted an unknown variable: %v", err)
				}
				for _, name := range tw.Variables(l) {
					v := tw.Sample(rng, l)
					delete(v, name)
					if _, err := tw.Params(l, v); err == nil {
						t.Errorf("Params accepted values without %s", name)
					}
				}
			}
		})
	}
	if _, err := LookupTwin("resonate"); err == nil || !strings.Contains(err.Error(), "fsts") {
		t.Errorf("LookupTwin of an unknown kind: %v, want an error listing the twins", err)
	}
}

func TestRegisterTwinRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		twin Twin
	}{{"fs", fsTwin{}}, {"new", nil}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterTwin(%q) did not panic", tc.name)
				}
			}()
			RegisterTwin(tc.name, tc.twin)
		}()
	}
}

// TestTargetTwins holds the FS twins to the paper's coordinates: Ω* = 2π·12 Hz gives the η = γ = √κ* of
// Config (Eq. 5); a target above the stable limit acts as the limit; the DT-exact target maps through
// Theorem 2; the TS variables map through tanh and the logistic function.
func TestTargetTwins(t *testing.T) {
	l := sscLayer(0)
	want, err := Config{TauM: 0.04, TauA: 0.2, Dt: 0.004, FStar: 12, Vth: 1}.Params()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"fs", "fs-frozen"} {
		tw, _ := LookupTwin(n)
		p, err := tw.Params(l, Vars{"omega_star": {theory.RadPerSecFromHz(12)}})
		if err != nil || !near(p.Eta, want.Eta) || !near(p.Gamma, want.Gamma) || p.Order() != 0 {
			t.Errorf("%s at 12 Hz: %+v, %v; want η = γ = %g", n, p, err, want.Eta)
		}
	}
	fs, _ := LookupTwin("fs")
	fmax, err := l.MaxTargetHz()
	if err != nil || fmax < 76 || fmax > 77.2 {
		t.Fatalf("MaxTargetHz = %g, %v; want 76.8 Hz", fmax, err)
	}
	clip := l
	clip.ForwardClip = true
	atMax, _ := fs.Params(clip, Vars{"omega_star": {theory.RadPerSecFromHz(fmax)}})
	above, _ := fs.Params(clip, Vars{"omega_star": {theory.RadPerSecFromHz(200)}})
	if above.Eta != atMax.Eta || !near(above.Eta*above.Gamma, 0.99*theory.KappaMaxSemiImplicit(25, 5, 0.004)) {
		t.Errorf("200 Hz gives η = %g, the limit %g Hz gives %g", above.Eta, fmax, atMax.Eta)
	}
	ratio := l
	ratio.EtaGammaRatio = 4
	if p, _ := fs.Params(ratio, Vars{"omega_star": {theory.RadPerSecFromHz(12)}}); !near(p.Eta, 2*want.Eta) || !near(p.Gamma, want.Gamma/2) {
		t.Errorf("ratio 4: η = %g, γ = %g", p.Eta, p.Gamma)
	}

	dt := l
	dt.DTExact = true
	p, err := fs.Params(dt, Vars{"omega_star_dt": {theory.RadPerSecFromHz(12)}})
	if err != nil {
		t.Fatal(err)
	}
	k := dt.Constants()
	if f, ok := k.DTTargetHz(p.Eta * p.Gamma); !ok || math.Abs(f-12) > 1e-9 {
		t.Errorf("DT-exact 12 Hz: realized DT target %g Hz (ok=%v)", f, ok)
	}
	if _, err := fs.Params(dt, Vars{"omega_star": {1}}); err == nil {
		t.Error("a DT-exact layer accepted the continuous-time variable")
	}

	fsts, _ := LookupTwin("fsts")
	l2 := sscLayer(2)
	p, err = fsts.Params(l2, Vars{"omega_star": {theory.RadPerSecFromHz(12)}, "beta_hat": {0.5, -1}, "lambda_hat": {-3, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(p.Beta[0], math.Tanh(0.5)) || !near(p.Beta[1], math.Tanh(-1)) || !near(p.Lambda[0], 1/(1+math.Exp(3))) || p.Lambda[1] != 0.5 || !near(p.Eta, want.Eta) {
		t.Errorf("fsts params %+v", p)
	}
	if _, err := fsts.Params(l2, Vars{"omega_star": {70}, "beta_hat": {0.5}, "lambda_hat": {0.5}}); err == nil {
		t.Error("fsts accepted one TS value per variable for M = 2")
	}
	// Without the forward clip a target above the limit maps through Eq. 5 as it is.
	if p, _ := fs.Params(l, Vars{"omega_star": {theory.RadPerSecFromHz(200)}}); !near(p.Eta*p.Gamma, theory.KappaStarHz(25, 5, 200)) {
		t.Errorf("200 Hz unclipped: κ = %g, want %g", p.Eta*p.Gamma, theory.KappaStarHz(25, 5, 200))
	}
	// The log coordinate: ln(f*/Hz).
	lg := l
	lg.LogTargetHz = true
	if p, err := fs.Params(lg, Vars{"log_target_hz": {math.Log(12)}}); err != nil || !near(p.Eta, want.Eta) {
		t.Errorf("log coordinate at 12 Hz: %+v, %v; want η = %g", p, err, want.Eta)
	}
	if _, err := fs.Params(lg, Vars{"omega_star": {1}}); err == nil {
		t.Error("a log-coordinate layer accepted omega_star")
	}
	bad := clip
	bad.KappaFraction = 0
	if _, err := fs.Params(bad, Vars{"omega_star": {70}}); err == nil || !strings.Contains(err.Error(), "kappa fraction") {
		t.Errorf("κ fraction 0: %v", err)
	}
}

func TestCouplingTwins(t *testing.T) {
	l := sscLayer(0)
	lif, _ := LookupTwin("lif")
	if p, err := lif.Params(l, Vars{}); err != nil || p.Eta != 0 || p.Gamma != 0 || p.Mu != 25 || p.Rho != 5 {
		t.Errorf("lif: %+v, %v", p, err)
	}
	al, _ := LookupTwin("adaptlif")
	k0 := theory.KappaStar(25, 5, 0)
	if p, err := al.Params(l, Vars{}); err != nil || !near(p.Eta, math.Sqrt(k0)) || p.Gamma != p.Eta {
		t.Errorf("adaptlif (fixed κ_CT(0) = %g): %+v, %v", k0, p, err)
	}
	if _, err := al.Params(l, Vars{"eta": {3}, "gamma": {7}}); err == nil {
		t.Error("the fixed adaptive LIF accepted variables")
	}
	l.AdaptLIFLearnable = true
	if p, err := al.Params(l, Vars{"eta": {3}, "gamma": {7}}); err != nil || p.Eta != 3 || p.Gamma != 7 {
		t.Errorf("adaptlif: %+v, %v", p, err)
	}
	if _, err := al.Params(l, Vars{"eta": {-1}, "gamma": {7}}); err == nil {
		t.Error("adaptlif accepted η < 0")
	}
	if _, err := al.Params(l, Vars{"eta": {math.NaN()}, "gamma": {7}}); err == nil {
		t.Error("adaptlif accepted η = NaN")
	}
}
