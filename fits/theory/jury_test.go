package theory

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestJuryPaperNumbers(t *testing.T) {
	// Appendix A.2: at τm = 0.04 s, τa = 0.2 s, Δt = 4 ms the bounds imply 13.8 Hz (explicit) and
	// 77.2 Hz (semi-implicit).
	j := SSC.Jury()
	if j.KappaMaxExplicit != 7375 || math.Abs(j.KappaMaxSemiImplicit-235125) > 1e-9 {
		t.Errorf("κ bounds = %g, %g; want 7375, 235125", j.KappaMaxExplicit, j.KappaMaxSemiImplicit)
	}
	if math.Round(j.FStarMaxExplicitHz*10)/10 != 13.8 {
		t.Errorf("explicit limit %g Hz, paper 13.8", j.FStarMaxExplicitHz)
	}
	if math.Round(j.FStarMaxSemiImplicitHz*10)/10 != 77.2 {
		t.Errorf("semi-implicit limit %g Hz, paper 77.2", j.FStarMaxSemiImplicitHz)
	}
}

func TestJuryBoundsAreStabilityBoundaries(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for i := range 200 {
		c := randomConstants(r)
		j := c.Jury()
		for _, tc := range []struct {
			name  string
			bound float64
			mat   func(eta, gamma float64) Mat2
		}{
			{"explicit", j.KappaMaxExplicit, c.ExplicitMatrix},
			{"semi-implicit", j.KappaMaxSemiImplicit, c.SemiImplicitMatrix},
		} {
			if !(tc.bound > 0) {
				continue
			}
			below, above := tc.mat(EqualGains(tc.bound*(1-1e-6))), tc.mat(EqualGains(tc.bound*(1+1e-6)))
			if !below.JuryStable() || below.SpectralRadius() >= 1 {
				t.Fatalf("case %d %s: just below the bound: Jury %v, radius %g", i, tc.name, below.JuryStable(), below.SpectralRadius())
			}
			if above.JuryStable() || above.SpectralRadius() <= 1 {
				t.Fatalf("case %d %s: just above the bound: Jury %v, radius %g", i, tc.name, above.JuryStable(), above.SpectralRadius())
			}
		}
		// The semi-implicit bound is the FS module's own stability bound.
		if !c.FS(j.KappaMaxSemiImplicit*(1-1e-6)).Stable() || c.FS(j.KappaMaxSemiImplicit*(1+1e-6)).Stable() {
			t.Fatalf("case %d: FS.Stable disagrees with the semi-implicit Jury bound", i)
		}
	}
}

func TestSemiImplicitMatrixMatchesTransferFunction(t *testing.T) {
	// The characteristic polynomial of the semi-implicit matrix is the denominator of H_d:
	// z² − (μ̄ + ρ̄ − κ̄)z + μ̄ρ̄, independent of how κ splits into η and γ.
	c := SSC
	for _, k := range []float64{10, 3825, 98571} {
		for _, split := range []float64{0.1, 1, 7} {
			eta := math.Sqrt(k) * split
			m := c.SemiImplicitMatrix(eta, k/eta)
			fs := c.FS(k)
			if math.Abs(m.Trace()-(fs.MuBar+fs.RhoBar-fs.KappaBar)) > 1e-14 || math.Abs(m.Det()-fs.MuBar*fs.RhoBar) > 1e-14 {
				t.Errorf("κ=%g η=%g: T=%g D=%g", k, eta, m.Trace(), m.Det())
			}
			e := c.ExplicitMatrix(eta, k/eta)
			if math.Abs(e.Det()-(fs.MuBar*fs.RhoBar+fs.KappaBar)) > 1e-14 {
				t.Errorf("explicit det %g, want μ̄ρ̄ + κΔt²", e.Det())
			}
			l1, l2 := m.Eigenvalues()
			for _, l := range []complex128{l1, l2} {
				if q := l*l - complex(m.Trace(), 0)*l + complex(m.Det(), 0); cabs(q) > 1e-14 {
					t.Errorf("eigenvalue %v residual %v", l, q)
				}
			}
		}
	}
}

func TestTrajectories(t *testing.T) {
	// Between the two bounds (e.g. f* = 20 Hz at the SSC constants) the explicit scheme diverges and
	// the semi-implicit one converges (Appendix A.2, phase-plane figure).
	c := SSC
	k, _ := c.KappaForTargetHz(20)
	eta, gamma := EqualGains(k)
	ve, ae := c.ExplicitMatrix(eta, gamma).Trajectory(1, 0, 400)
	vs, as := c.SemiImplicitMatrix(eta, gamma).Trajectory(1, 0, 400)
	if len(ve) != 401 || ve[0] != 1 || ae[0] != 0 {
		t.Fatalf("trajectory has length %d and starts at (%g, %g)", len(ve), ve[0], ae[0])
	}
	if n := math.Hypot(ve[400], ae[400]); !(n > 10) {
		t.Errorf("explicit trajectory did not diverge: |state| = %g", n)
	}
	if n := math.Hypot(vs[400], as[400]); !(n < 1e-3) {
		t.Errorf("semi-implicit trajectory did not converge: |state| = %g", n)
	}
	// Each step is the matrix applied to the previous state.
	m := c.SemiImplicitMatrix(eta, gamma)
	v, a := m.Apply(vs[10], as[10])
	if v != vs[11] || a != as[11] {
		t.Error("Trajectory step differs from Apply")
	}
	if v, _ := m.Trajectory(1, 2, -5); len(v) != 1 {
		t.Errorf("negative steps gave %d points, want 1", len(v))
	}
}
