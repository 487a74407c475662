package events

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSelectedInputCotangent holds SelectedInputCotangent to its definition in float64: the dot product of
// the cotangent row and W's row at every selected entry, 0 at the others, for shapes around the vector
// widths and selections from none to all; and the vector dot kernels to dotScalar bit for bit.
func TestSelectedInputCotangent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ rows, in, out int }{{1, 1, 1}, {3, 7, 5}, {5, 16, 16}, {4, 65, 17}, {9, 128, 33}, {6, 200, 256}} {
		for _, frac := range []float64{0, 0.15, 1} {
			s := Shape{Rows: tc.rows, In: tc.in, Out: tc.out}
			cot, w := randomRow(rng, s.Rows*s.Out), randomRow(rng, s.In*s.Out)
			stride := BitStride(s.In)
			sel := make([]uint64, s.Rows*stride)
			want := make([]float64, s.Rows*s.In)
			for r := range s.Rows {
				for i := range s.In {
					if rng.Float64() >= frac {
						continue
					}
					sel[r*stride+i/64] |= 1 << (i % 64)
					for j := range s.Out {
						want[r*s.In+i] += float64(cot[r*s.Out+j]) * float64(w[i*s.Out+j])
					}
				}
			}
			got := randomRow(rng, s.Rows*s.In) // overwritten everywhere
			if err := SelectedInputCotangent(s, cot, w, sel, got); err != nil {
				t.Fatal(err)
			}
			for k, v := range got {
				if d := math.Abs(float64(v) - want[k]); d > 1e-5*math.Sqrt(float64(s.Out))*(1+math.Abs(want[k])) || (want[k] == 0 && v != 0) {
					t.Fatalf("%+v, fraction %g: entry %d = %g, want %g", s, frac, k, v, want[k])
				}
			}
		}
	}
	for _, out := range []int{1, 8, 9, 15, 16, 17, 40, 256} {
		c, w := randomRow(rng, out), randomRow(rng, 5*out)
		idx := []int32{4, 0, 2, 3, 1, 1, 1, 1}
		got, want := make([]float32, 8), make([]float32, 8)
		dots(c, w, idx, got)
		dotsScalar(c, w, idx, want)
		if !sameBits(got, want) {
			t.Fatalf("out %d: dots = %v, scalar %v", out, got[:5], want[:5])
		}
	}
}

// TestSelectedInputCotangentRefusesBadSizes checks the size checks.
func TestSelectedInputCotangentRefusesBadSizes(t *testing.T) {
	s := Shape{Rows: 2, In: 3, Out: 4}
	ok := func() ([]float32, []float32, []uint64, []float32) {
		return make([]float32, 8), make([]float32, 12), make([]uint64, 2), make([]float32, 6)
	}
	for name, mutate := range map[string]func(c, w *[]float32, sel *[]uint64, x *[]float32){
		"cot": func(c, _ *[]float32, _ *[]uint64, _ *[]float32) { *c = (*c)[:7] },
		"W":   func(_, w *[]float32, _ *[]uint64, _ *[]float32) { *w = (*w)[:11] },
		"sel": func(_, _ *[]float32, sel *[]uint64, _ *[]float32) { *sel = (*sel)[:1] },
		"x":   func(_, _ *[]float32, _ *[]uint64, x *[]float32) { *x = (*x)[:5] },
	} {
		c, w, sel, x := ok()
		mutate(&c, &w, &sel, &x)
		if err := SelectedInputCotangent(s, c, w, sel, x); err == nil {
			t.Errorf("%s too short: no error", name)
		}
	}
}

// BenchmarkSelectedInputCotangent times the input cotangent of the second block of the released sMNIST
// recipe (B·T = 256·784 rows, W = 256 inputs and outputs) with about a quarter of the entries selected.
func BenchmarkSelectedInputCotangent(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := Shape{Rows: 256 * 784, In: 256, Out: 256}
	cot, w := randomRow(rng, s.Rows*s.Out), randomRow(rng, s.In*s.Out)
	sel := make([]uint64, s.Rows*BitStride(s.In))
	for i := range sel {
		sel[i] = rng.Uint64() & rng.Uint64() // a quarter of the bits on average
	}
	out := make([]float32, s.Rows*s.In)
	for b.Loop() {
		if err := SelectedInputCotangent(s, cot, w, sel, out); err != nil {
			b.Fatal(err)
		}
	}
}
