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

// sparse returns x [rows, in] with a fraction density of nonzero entries, each 1 or the dropout scale 2.5.
func sparse(rng *rand.Rand, rows, in int, density float64) []float32 {
	x := make([]float32, rows*in)
	for i := range x {
		if rng.Float64() < density {
			x[i] = 1
			if rng.IntN(3) == 0 {
				x[i] = 2.5
			}
		}
	}
	return x
}

func normal(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// forwardAndGradients returns Forward's y and Gradients' weight and bias gradients, failing t on an error.
func forwardAndGradients(t *testing.T, s events.Shape, x, w, b, cot []float32) (y, gw, gb []float32) {
	t.Helper()
	y = make([]float32, s.Rows*s.Out)
	if err := events.Forward(s, x, w, b, y); err != nil {
		t.Fatal(err)
	}
	gw, gb, err := events.Gradients(s, x, cot)
	if err != nil {
		t.Fatal(err)
	}
	return y, gw, gb
}

// TestAgainstDense holds Forward and Gradients to a float64 dense product, for output sizes that are and
// are not multiples of the vector width and densities from none to all.
func TestAgainstDense(t *testing.T) {
	for _, tc := range []struct {
		s       events.Shape
		density float64
	}{{events.Shape{Rows: 70, In: 33, Out: 21}, 0.1}, {events.Shape{Rows: 40, In: 16, Out: 64}, 0.5},
		{events.Shape{Rows: 9, In: 5, Out: 8}, 1}, {events.Shape{Rows: 12, In: 7, Out: 3}, 0}} {
		t.Run(fmt.Sprintf("%+v/%g", tc.s, tc.density), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			s := tc.s
			x, w, b := sparse(rng, s.Rows, s.In, tc.density), normal(rng, s.In*s.Out), normal(rng, s.Out)
			cot := normal(rng, s.Rows*s.Out)
			y, gw, gb := forwardAndGradients(t, s, x, w, b, cot)
			for r := range s.Rows {
				for j := range s.Out {
					want := float64(b[j])
					for i := range s.In {
						want += float64(x[r*s.In+i]) * float64(w[i*s.Out+j])
					}
					if d := math.Abs(float64(y[r*s.Out+j]) - want); d > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("y[%d, %d] = %g, want %g", r, j, y[r*s.Out+j], want)
					}
				}
			}
			for i := range s.In {
				for j := range s.Out {
					want := 0.0
					for r := range s.Rows {
						want += float64(x[r*s.In+i]) * float64(cot[r*s.Out+j])
					}
					if d := math.Abs(float64(gw[i*s.Out+j]) - want); d > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("gW[%d, %d] = %g, want %g", i, j, gw[i*s.Out+j], want)
					}
				}
			}
			for j := range s.Out {
				want := 0.0
				for r := range s.Rows {
					want += float64(cot[r*s.Out+j])
				}
				if d := math.Abs(float64(gb[j]) - want); d > 1e-5*(1+math.Abs(want)) {
					t.Fatalf("gb[%d] = %g, want %g", j, gb[j], want)
				}
			}
			if got := events.Density(x); tc.density == 0 && got != 0 || tc.density == 1 && got != 1 {
				t.Errorf("Density = %g for density %g", got, tc.density)
			}
		})
	}
}

// TestReproducible checks that the results do not depend on the number of goroutines.
func TestReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s := events.Shape{Rows: 300, In: 37, Out: 45}
	x, w, b, cot := sparse(rng, s.Rows, s.In, 0.2), normal(rng, s.In*s.Out), normal(rng, s.Out), normal(rng, s.Rows*s.Out)
	run := func(procs int) ([]float32, []float32, []float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return forwardAndGradients(t, s, x, w, b, cot)
	}
	y1, gw1, gb1 := run(1)
	y3, gw3, gb3 := run(3)
	if !slices.Equal(y1, y3) || !slices.Equal(gw1, gw3) || !slices.Equal(gb1, gb3) {
		t.Error("results depend on the number of goroutines")
	}
}

func TestBadInput(t *testing.T) {
	s := events.Shape{Rows: 2, In: 3, Out: 4}
	x, w, b, y := make([]float32, 6), make([]float32, 12), make([]float32, 4), make([]float32, 8)
	for _, tc := range []struct {
		name       string
		s          events.Shape
		x, w, b, y []float32
	}{
		{"zero rows", events.Shape{In: 3, Out: 4}, nil, w, b, nil},
		{"short x", s, x[:5], w, b, y},
		{"short W", s, x, w[:11], b, y},
		{"short b", s, x, w, b[:3], y},
		{"short y", s, x, w, b, y[:7]},
	} {
		if err := events.Forward(tc.s, tc.x, tc.w, tc.b, tc.y); err == nil {
			t.Errorf("%s: Forward accepted it", tc.name)
		}
	}
	if _, _, err := events.Gradients(s, x, y[:7]); err == nil {
		t.Error("Gradients accepted a short cotangent")
	}
}

// BenchmarkDense times Forward and Gradients at the second layer of the kernel table at W = 512 (rows =
// 128·250, in = out = 512) for several input densities. XLA CPU runs the same dense products in about 95
// (forward) and 100 ms (weight gradient) on 2 cores, whatever the density.
func BenchmarkDense(b *testing.B) {
	s := events.Shape{Rows: 128 * 250, In: 512, Out: 512}
	rng := rand.New(rand.NewPCG(1, 2))
	w, bias, cot := normal(rng, s.In*s.Out), normal(rng, s.Out), normal(rng, s.Rows*s.Out)
	y := make([]float32, s.Rows*s.Out)
	for _, density := range []float64{0.02, 0.1, 0.25, 0.5} {
		benchForwardGradients(b, fmt.Sprintf("density=%g", density), s, sparse(rng, s.Rows, s.In, density), w, bias, cot, y)
	}
}

// TestDensity counts nonzero entries exactly: lengths around the 8-lane vectors, −0 (zero), NaN and the
// dropout scale (nonzero), and an input long enough to be split over goroutines.
func TestDensity(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	long := make([]float32, 1<<18+3)
	want := 0
	for i := range long {
		if i%5 == 0 || i%7 == 3 {
			long[i] = 1
			want++
		}
	}
	for _, tc := range []struct {
		name string
		x    []float32
		want float64
	}{
		{"empty", nil, 0},
		{"one zero", []float32{0}, 0},
		{"minus zero", []float32{negZero, 0, negZero}, 0},
		{"NaN counts", []float32{nan, 0, 0, 0}, 0.25},
		{"7 entries", []float32{1, 0, 0, 2, 0, 0, -3}, 3.0 / 7},
		{"8 entries", []float32{1, 0, 0, 0, 0, 0, 0, 1.4285715}, 0.25},
		{"17 entries", []float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1e-45}, 1.0 / 17},
		{"split over goroutines", long, float64(want) / float64(len(long))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, procs := range []int{1, 2, 3} {
				prev := runtime.GOMAXPROCS(procs)
				got := events.Density(tc.x)
				runtime.GOMAXPROCS(prev)
				if got != tc.want {
					t.Errorf("GOMAXPROCS %d: Density = %v, want %v", procs, got, tc.want)
				}
			}
		})
	}
}

// BenchmarkDensity counts the nonzero entries of the kernel table's first-layer input (Bernoulli(0.2)
// spikes, [128, 250, 140]).
//
//	go test ./fits/events -run '^$' -bench Density
func BenchmarkDensity(b *testing.B) {
	x := sparse(rand.New(rand.NewPCG(1, 2)), 128*250, 140, 0.2)
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		events.Density(x)
	}
}

// BenchmarkFirstLayer times Forward and Gradients on the kernel table's first layer: [128·250, 140]
// Bernoulli(0.2) input spikes to W outputs.
//
//	go test ./fits/events -run '^$' -bench FirstLayer
func BenchmarkFirstLayer(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, width := range []int{64, 128, 512} {
		s := events.Shape{Rows: 128 * 250, In: 140, Out: width}
		w, bias, cot := normal(rng, s.In*s.Out), normal(rng, s.Out), normal(rng, s.Rows*s.Out)
		x, y := sparse(rng, s.Rows, s.In, 0.2), make([]float32, s.Rows*s.Out)
		benchForwardGradients(b, fmt.Sprintf("W=%d", width), s, x, w, bias, cot, y)
	}
}

// benchForwardGradients times Forward (into y) and Gradients (of cot) of shape s on x, as the
// sub-benchmarks forward/name and gradients/name.
func benchForwardGradients(b *testing.B, name string, s events.Shape, x, w, bias, cot, y []float32) {
	b.Run("forward/"+name, func(b *testing.B) {
		for b.Loop() {
			if err := events.Forward(s, x, w, bias, y); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gradients/"+name, func(b *testing.B) {
		for b.Loop() {
			if _, _, err := events.Gradients(s, x, cot); err != nil {
				b.Fatal(err)
			}
		}
	})
}
