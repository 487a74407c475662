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
				// The same events given row by row (as an input held as bits is), without x.
				var given events.Recorded
				if err := events.Record(s, &given, func(r int, idx []int32, vals []float32) ([]int32, []float32) {
					for i, v := range x[r*s.In : (r+1)*s.In] {
						if v != 0 {
							idx, vals = append(idx, int32(i)), append(vals, v)
						}
					}
					return idx, vals
				}); err != nil {
					t.Fatal(err)
				}
				if given.Shape() != s || given.Events() != want || given.Density() != float64(want)/float64(s.Rows*s.In) {
					t.Errorf("Record: shape %+v, %d events, density %g", given.Shape(), given.Events(), given.Density())
				}
				runtime.GOMAXPROCS(procs[0])
				if err := events.ForwardRecorded(&given, w, b, got); err != nil {
					t.Fatal(err)
				}
				if !sameBits(got, y) {
					t.Error("ForwardRecorded's y differs from Forward's")
				}
				if rgw, rgb, err = events.GradientsRecorded(s, &given, cot); err != nil || !sameBits(rgw, gw) || !sameBits(rgb, gb) {
					t.Errorf("GradientsRecorded of Record's events differs from Gradients (%v)", err)
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

// TestRecordRefuses: Record refuses positions that are out of range, repeated or decreasing, and values
// that do not pair with positions, leaving the recording empty; ForwardRecorded refuses an empty recording
// and arrays of the wrong size.
func TestRecordRefuses(t *testing.T) {
	s := events.Shape{Rows: 4, In: 5, Out: 3}
	for name, row := range map[string]func(r int, idx []int32, vals []float32) ([]int32, []float32){
		"out of range": func(r int, idx []int32, vals []float32) ([]int32, []float32) {
			return append(idx, 5), append(vals, 1)
		},
		"negative": func(r int, idx []int32, vals []float32) ([]int32, []float32) {
			return append(idx, -1), append(vals, 1)
		},
		"repeated": func(r int, idx []int32, vals []float32) ([]int32, []float32) {
			return append(idx, 2, 2), append(vals, 1, 1)
		},
		"decreasing in row 3": func(r int, idx []int32, vals []float32) ([]int32, []float32) {
			if r == 3 {
				return append(idx, 3, 1), append(vals, 1, 1)
			}
			return idx, vals
		},
		"unpaired values": func(r int, idx []int32, vals []float32) ([]int32, []float32) {
			return append(idx, 1), vals
		},
	} {
		var rec events.Recorded
		if err := events.Record(s, &rec, row); err == nil {
			t.Errorf("%s: Record accepted it", name)
		}
		if rec.Shape() != (events.Shape{}) {
			t.Errorf("%s: Record left shape %+v", name, rec.Shape())
		}
		if err := events.ForwardRecorded(&rec, make([]float32, 15), make([]float32, 3), make([]float32, 12)); err == nil {
			t.Errorf("%s: ForwardRecorded accepted an empty recording", name)
		}
	}
	var rec events.Recorded
	if err := events.Record(s, &rec, func(r int, idx []int32, vals []float32) ([]int32, []float32) { return idx, vals }); err != nil {
		t.Fatal(err)
	}
	if err := events.ForwardRecorded(&rec, make([]float32, 15), make([]float32, 3), make([]float32, 11)); err == nil {
		t.Error("ForwardRecorded accepted y of the wrong size")
	}
}
