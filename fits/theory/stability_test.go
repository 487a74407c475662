package theory

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// TestSchurStable builds real polynomials from chosen roots (real ones and conjugate pairs) and checks
// that SchurStable says stable exactly when every root has modulus below 1.
func TestSchurStable(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	stable, unstable := 0, 0
	for i := range 2000 {
		p := []float64{0.5 + r.Float64()} // arbitrary leading coefficient
		inside := true
		for deg := 0; deg < 1+r.IntN(6); {
			rad := 0.95 * r.Float64()
			if r.IntN(4) == 0 {
				rad = 1.05 + r.Float64()
				inside = false
			}
			if r.IntN(2) == 0 {
				root := rad
				if r.IntN(2) == 0 {
					root = -rad
				}
				p = polyMul(p, []float64{1, -root})
				deg++
			} else {
				z := cmplx.Rect(rad, math.Pi*r.Float64())
				p = polyMul(p, []float64{1, -2 * real(z), real(z)*real(z) + imag(z)*imag(z)})
				deg += 2
			}
		}
		if got := SchurStable(p); got != inside {
			t.Fatalf("case %d: %v: SchurStable %v, roots inside the unit circle %v", i, p, got, inside)
		}
		if inside {
			stable++
		} else {
			unstable++
		}
	}
	if stable < 100 || unstable < 100 {
		t.Fatalf("%d stable and %d unstable cases: too few of one kind", stable, unstable)
	}
	for _, tc := range []struct {
		p    []float64
		want bool
	}{{nil, false}, {[]float64{0, 0}, false}, {[]float64{3}, true}, {[]float64{0, 1, -0.5}, true}, {[]float64{1, -1}, false}} {
		if got := SchurStable(tc.p); got != tc.want {
			t.Errorf("SchurStable(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// TestClosedLoopCharacteristic checks P(z) = D(z)·((z − μ̄G(z))(z − ρ̄) + κ̄z) at random complex z, with G
// evaluated by TS.EvalZ and D(z) = Π(z − β_m).
func TestClosedLoopCharacteristic(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for i := range 300 {
		c, k := randomStableKappa(r)
		cl := ClosedLoop{FS: c.FS(k), TS: randomTS(r, r.IntN(5))}
		p := cl.Characteristic()
		if len(p) != cl.TS.M()+3 || p[0] != 1 {
			t.Fatalf("case %d: degree %d, leading %g for M = %d", i, len(p)-1, p[0], cl.TS.M())
		}
		z := cmplx.Rect(0.2+2*r.Float64(), 2*math.Pi*r.Float64())
		g, _ := cl.TS.EvalZ(z)
		d := complex(1, 0)
		for _, b := range cl.TS.Beta {
			d *= z - complex(b, 0)
		}
		want := d * ((z-complex(cl.FS.MuBar, 0)*g)*(z-complex(cl.FS.RhoBar, 0)) + complex(cl.FS.KappaBar, 0)*z)
		var got complex128
		for _, a := range p {
			got = got*z + complex(a, 0)
		}
		if cabs(got-want) > 1e-10*math.Max(1, cabs(want)) {
			t.Fatalf("case %d (%+v) at z = %v: P = %v, want %v", i, cl, z, got, want)
		}
	}
}

// TestClosedLoopStable compares Stable with the simulated impulse response of Algorithm 1 (decaying, or
// growing without bound) and, without TS, with the FS module's Jury test.
func TestClosedLoopStable(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	decays, grows := 0, 0
	for i := range 400 {
		c, k := randomStableKappa(r)
		cl := ClosedLoop{FS: c.FS(k), TS: randomTS(r, r.IntN(4))}
		h := simulateNoSpikes(cl.FS, cl.TS, impulse(1<<14))
		tail := 0.0
		for _, v := range h[len(h)-100:] {
			tail = math.Max(tail, math.Abs(v))
		}
		switch {
		case tail < 1e-12:
			decays++
			if !cl.Stable() {
				t.Errorf("case %d (%+v): the response decays, Stable says no", i, cl)
			}
		case tail > 1e6 || math.IsNaN(tail) || math.IsInf(tail, 0):
			grows++
			if cl.Stable() {
				t.Errorf("case %d (%+v): the response grows, Stable says yes", i, cl)
			}
		}
		if fs := (ClosedLoop{FS: cl.FS}); fs.Stable() != cl.FS.Stable() {
			t.Errorf("case %d: without TS, Stable %v, FS.Stable %v", i, fs.Stable(), cl.FS.Stable())
		}
	}
	if decays < 50 || grows < 10 {
		t.Fatalf("%d decaying and %d growing responses: too few of one kind", decays, grows)
	}
}
