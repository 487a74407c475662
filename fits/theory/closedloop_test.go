package theory

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestClosedLoopMatchesSimulatedAlgorithm1(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	checked := 0
	for i := 0; checked < 20 && i < 200; i++ {
		c, k := randomStableKappa(r)
		ts := randomTS(r, r.IntN(4))
		cl := ClosedLoop{FS: c.FS(k), TS: ts}
		// The closed loop with TS inside can be unstable even when FS alone is not: skip those.
		if _, ok := closedLoopDecays(cl); !ok {
			continue
		}
		n := 1 << 15
		h := simulateNoSpikes(cl.FS, ts, impulse(n))
		if tail := math.Abs(h[n-1]) + math.Abs(h[n-2]); tail > 1e-13 {
			continue // slowly decaying: the finite DFT would not represent H
		}
		checked++
		if h[0] != 0 {
			t.Fatalf("case %d: h[0] = %g, want 0", i, h[0])
		}
		scale := 1.0
		for _, w := range LinSpace(0, math.Pi, 33) {
			scale = math.Max(scale, cl.Magnitude(w))
		}
		for j := range 12 {
			w := 2 * math.Pi * float64(r.IntN(n/2+1)) / float64(n)
			got, want := cl.Response(w), dtft(h, w)
			if cabs(got-want) > 1e-9*scale {
				t.Fatalf("case %d bin %d ω=%g (%+v): H = %v, DFT = %v", i, j, w, cl, got, want)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d stable closed loops checked", checked)
	}
}

// closedLoopDecays reports whether the simulated impulse response decays (a cheap stability test).
func closedLoopDecays(cl ClosedLoop) (float64, bool) {
	h := simulateNoSpikes(cl.FS, cl.TS, impulse(1<<15))
	m := 0.0
	for _, v := range h[len(h)-100:] {
		m = math.Max(m, math.Abs(v))
	}
	return m, m < 1e-12 && !math.IsNaN(m)
}

func TestClosedLoopWithoutTSIsFS(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for i := range 200 {
		fs := randomFS(r)
		w := r.Float64() * math.Pi
		for _, ts := range []TS{{}, {Beta: []float64{0.4}, Lambda: []float64{0}}} {
			cl := ClosedLoop{FS: fs, TS: ts}
			if d := cabs(cl.Response(w) - fs.Response(w)); d > 1e-12*fs.Magnitude(w) {
				t.Fatalf("case %d ω=%g: closed loop %v, H_d %v", i, w, cl.Response(w), fs.Response(w))
			}
			if d := math.Abs(cl.GroupDelay(w) - fs.GroupDelay(w)); d > 1e-9*math.Max(1, math.Abs(fs.GroupDelay(w))) {
				t.Fatalf("case %d ω=%g: group delays %g vs %g", i, w, cl.GroupDelay(w), fs.GroupDelay(w))
			}
		}
	}
}

func TestClosedLoopIsNotCascade(t *testing.T) {
	// With TS inside the loop, H ≠ G·H_d in general (DESIGN.md).
	fs := SSC.FS(3825.67)
	ts := TS{Beta: []float64{0.5}, Lambda: []float64{0.5}}
	cl := ClosedLoop{FS: fs, TS: ts}
	w := 0.25
	if d := cabs(cl.Response(w) - ts.Response(w)*fs.Response(w)); d < 1e-3*cl.Magnitude(w) {
		t.Errorf("closed loop equals the cascade G·H_d at ω=%g (difference %g)", w, d)
	}
}

func TestClosedLoopGroupDelayMatchesFiniteDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for i := range 300 {
		c, k := randomStableKappa(r)
		cl := ClosedLoop{FS: c.FS(k), TS: randomTS(r, 1+r.IntN(3))}
		w := 0.01 + r.Float64()*(math.Pi-0.02)
		got := cl.GroupDelay(w)
		fd := fdGroupDelay(cl.Response, w, 1e-6)
		if math.Abs(got-fd) > 1e-5*math.Max(1, math.Abs(got)) {
			t.Fatalf("case %d ω=%g: analytic %g, finite difference %g", i, w, got, fd)
		}
	}
}
