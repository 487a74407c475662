package events

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRowKernelsMatchScalar holds the row kernels of every instruction set this build and CPU run (AVX2 and
// AVX-512 with GOEXPERIMENT=simd on amd64) to the scalar code bit for bit: the compaction's positions and values, and every
// output of a row's forward sum and gradient update, for row widths around the vector sizes 8, 16 and 32 and the passes of 4 vectors.
func TestRowKernelsMatchScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, in := range []int{1, 7, 15, 16, 17, 33, 140} {
		for _, out := range []int{1, 5, 8, 9, 31, 32, 33, 64, 71, 128, 135, 256, 300} {
			for _, density := range []float64{0, 0.2, 1} {
				x := make([]float32, in)
				for i := range x {
					if rng.Float64() < density {
						x[i] = []float32{1, 2.5, -0.7}[rng.IntN(3)]
					}
				}
				w, b, c := randomRow(rng, in*out), randomRow(rng, out), randomRow(rng, out)

				got, want := newRowEvents(in), newRowEvents(in)
				n, nWant := compact(x, got), compactScalar(x, want)
				if n != nWant || !slices.Equal(got.idx[:n], want.idx[:n]) || !slices.Equal(got.vals[:n], want.vals[:n]) {
					t.Fatalf("in %d density %g: compact = %d %v %v, want %d %v %v", in, density, n, got.idx[:n], got.vals[:n], nWant, want.idx[:n], want.vals[:n])
				}

				for _, set := range rowKernelSets() {
					y, yWant := make([]float32, out), make([]float32, out)
					set.forward(got.idx[:n], got.vals, w, b, y)
					forwardRowScalar(want.idx[:n], want.vals, w, b, yWant)
					if !sameBits(y, yWant) {
						t.Fatalf("%s, in %d out %d density %g: forward row = %v, want %v", set.name, in, out, density, y, yWant)
					}

					g, gWant := randomRow(rng, in*out), make([]float32, in*out)
					copy(gWant, g)
					set.grad(got.idx[:n], got.vals, c, g)
					gradRowScalar(want.idx[:n], want.vals, c, gWant)
					if !sameBits(g, gWant) {
						t.Fatalf("%s, in %d out %d density %g: gradient row differs from the scalar code", set.name, in, out, density)
					}
				}
			}
		}
	}
}

func randomRow(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}
