package events_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/events"
)

// TestRecordedSameBits holds ForwardRecord and GradientsRecorded to Forward and Gradients, to the bit, for
// densities from none to all (a NaN input counts as an event), output sizes on and off the vector width,
// one and three goroutines recording and reading (in every pairing), and a recording reused for a second,
// smaller shape.
func TestRecordedSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var rec events.Recorded
	for _, c := range []struct {
		s       events.Shape
		density float64
	}{
		{events.Shape{Rows: 97, In: 70, Out: 45}, 0.1},
		{events.Shape{Rows: 64, In: 33, Out: 32}, 0},
		{events.Shape{Rows: 50, In: 16, Out: 17}, 1},
		{events.Shape{Rows: 30, In: 129, Out: 64}, 0.3},
	} {
		s := c.s
		x, w, b, cot := sparse(rng, s.Rows, s.In, c.density), normal(rng, s.In*s.Out), normal(rng, s.Out), normal(rng, s.Rows*s.Out)
		if c.density > 0 {
			x[len(x)/2] = float32(math.NaN())
		}
		y, gw, gb := forwardAndGradients(t, s, x, w, b, cot)
		for _, procs := range [][2]int{{1, 1}, {3, 1}, {1, 3}, {3, 3}} {
			t.Run(fmt.Sprintf("%+v/procs=%v", s, procs), func(t *testing.T) {
				prev := runtime.GOMAXPROCS(procs[0])
				defer runtime.GOMAXPROCS(prev)
				got := make([]float32, len(y))
				if err := events.ForwardRecord(s, x, w, b, got, &rec); err != nil {
					t.Fatal(err)
				}
				if !sameBits(got, y) {
					t.Error("ForwardRecord's y differs from Forward's")
				}
				want := 0
				for _, v := range x {
					if v != 0 {
						want++
					}
				}
				if rec.Shape() != s || rec.Events() != want {
					t.Errorf("recorded shape %+v, %d events; want %+v, %d", rec.Shape(), rec.Events(), s, want)
				}
				runtime.GOMAXPROCS(procs[1])
				rgw, rgb, err := events.GradientsRecorded(s, &rec, cot)
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(rgw, gw) || !sameBits(rgb, gb) {
					t.Error("GradientsRecorded differs from Gradients")
				}
			})
		}
	}
	other := events.Shape{Rows: 29, In: 129, Out: 64}
	if _, _, err := events.GradientsRecorded(other, &rec, make([]float32, other.Rows*other.Out)); err == nil {
		t.Error("GradientsRecorded accepted events recorded for another shape")
	}
}

// sameBits reports whether a and b hold the same float32 bits (NaN included).
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(u, v float32) bool { return math.Float32bits(u) == math.Float32bits(v) })
}
