package theory

import (
	"math"
	"testing"
)

func TestKappaForTarget(t *testing.T) {
	c := SSC
	w := RadPerSecFromHz(20)
	if k, err := c.KappaForTarget(w, false); err != nil || k != KappaStar(c.Mu(), c.Rho(), w) {
		t.Errorf("continuous-time: %g, %v", k, err)
	}
	if k, err := c.KappaForTarget(0, false); err != nil || k != KappaStar(c.Mu(), c.Rho(), 0) {
		t.Errorf("at Ω* = 0: %g, %v", k, err)
	}
	k, err := c.KappaForTarget(w, true)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := c.DTTargetHz(k); !ok || math.Abs(f-20) > 1e-9 {
		t.Errorf("DT-exact: realized target %g Hz (ok %v), want 20 Hz", f, ok)
	}
	if _, err := c.KappaForTarget(0, true); err == nil {
		t.Error("DT-exact at Ω* = 0: no error")
	}
}

func TestMaxTargetHz(t *testing.T) {
	c := SSC
	kmax := KappaMaxSemiImplicit(c.Mu(), c.Rho(), c.Dt)
	if k, err := c.KappaMax(0.5); err != nil || k != 0.5*kmax {
		t.Errorf("KappaMax(0.5) = %g, %v; want %g", k, err, 0.5*kmax)
	}
	for _, frac := range []float64{0, -1, 1.5, math.NaN()} {
		if _, err := c.KappaMax(frac); err == nil {
			t.Errorf("KappaMax(%g): no error", frac)
		}
	}
	if _, err := (Constants{TauM: 0.04, TauA: 0.2}).KappaMax(1); err == nil {
		t.Error("KappaMax with Δt = 0: no error")
	}
	f, err := c.MaxTargetHz(0.99, false)
	if want, _ := c.TargetHz(0.99 * kmax); err != nil || f != want || math.Abs(f-76.8) > 0.05 {
		t.Errorf("MaxTargetHz(0.99) = %g, %v; want %g (76.8 Hz)", f, err, want)
	}
	fd, err := c.MaxTargetHz(0.99, true)
	if want, _ := c.DTTargetHz(0.99 * kmax); err != nil || fd != want {
		t.Errorf("DT MaxTargetHz(0.99) = %g, %v; want %g", fd, err, want)
	}
}
