package fused_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/fused"
)

// TestSelectionIsWhatBackwardReads holds ForwardSelect's selection to its promise, for every ISA: the same
// bits in every ISA, a nonempty selection that is not everything, and Backward on the output cotangent
// zeroed at every entry outside the selection gives the same cotangents, to the bit, as on the whole
// cotangent; with no dropout, a time-shared mask and a per-step mask, at widths around the vector sizes.
func TestSelectionIsWhatBackwardReads(t *testing.T) {
	var first []uint64
	for _, isa := range supportedISAs(t) {
		t.Run(isa.String(), func(t *testing.T) {
			useISA(t, isa)
			var all []uint64
			for _, k := range []kernelCase{
				{adapt: true, m: 1, dims: []int{3, 50, 70}},
				{adapt: true, m: 1, dims: []int{2, 30, 96}, drop: true},
				{adapt: true, m: 2, dims: []int{2, 40, 9}, drop: true},
				{adapt: false, m: 0, dims: []int{2, 30, 130}, detach: true},
			} {
				for _, perStep := range []bool{false, true} {
					c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(5, 6)))
					for i := range cur {
						cur[i] *= 3 // enough drive that a fair share of entries spike and some sit far from threshold
					}
					var drop *fused.Dropout
					switch {
					case k.drop:
						drop = &fused.Dropout{Shared: make([]float32, s.Batch*s.Neurons)}
						for i := range drop.Shared {
							drop.Shared[i] = float32(2 * (i % 3 % 2))
						}
					case perStep:
						drop = &fused.Dropout{Key: dropmask.Key(1, 2, 3), P: 0.3}
					}
					sel := make([]uint64, fused.SelectionWords(s))
					out := make([]float32, len(cur))
					if _, err := fused.ForwardSelect(&c, s, cur, drop, out, sel); err != nil {
						t.Fatal(err)
					}
					all = append(all, sel...)
					stride := (s.Neurons + 63) / 64
					masked := slices.Clone(cot)
					on := 0
					for r := range s.Batch * s.Steps {
						for i := range s.Neurons {
							if sel[r*stride+i/64]>>(i%64)&1 == 0 {
								masked[r*s.Neurons+i] = 0
							} else {
								on++
							}
						}
					}
					if on == 0 || on == len(cot) {
						t.Fatalf("%v per-step %v: %d of %d entries selected", k, perStep, on, len(cot))
					}
					want, got := make([]float32, len(cur)), make([]float32, len(cur))
					gw, err := fused.Backward(&c, s, cur, cot, drop, want)
					if err != nil {
						t.Fatal(err)
					}
					gg, err := fused.Backward(&c, s, cur, masked, drop, got)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) || !sameGrads(gg, gw) {
						t.Fatalf("%v per-step %v: Backward on the selected cotangent differs", k, perStep)
					}
				}
			}
			if first == nil {
				first = all
			} else if !slices.Equal(all, first) {
				t.Fatalf("%v: the selection differs from the first ISA's", isa)
			}
		})
	}
}

func sameGrads(a, b fused.Grads) bool {
	eq := func(x, y [][]float64) bool {
		return slices.EqualFunc(x, y, func(u, v []float64) bool { return slices.Equal(u, v) })
	}
	return slices.Equal(a.EtaDt, b.EtaDt) && slices.Equal(a.GammaDt, b.GammaDt) && eq(a.Beta, b.Beta) && eq(a.Lambda, b.Lambda)
}

// TestBackwardSameInEveryISA holds Backward to the same bits in every ISA for surrogate widths that are and
// are not a power of two (the vector code multiplies by 1/width only where that is exact), every TS order
// the vector code treats apart (M = 0, 1 and 2), with and without adaptation and a per-step dropout mask,
// at 40 neurons (two groups of 16 and one of 8 with AVX-512).
func TestBackwardSameInEveryISA(t *testing.T) {
	for _, width := range []float32{0.5, 0.7} {
		for _, k := range []kernelCase{
			{adapt: true, m: 1, dims: []int{2, 30, 40}},
			{adapt: false, m: 1, dims: []int{2, 30, 40}, detach: true},
			{adapt: true, m: 0, dims: []int{2, 30, 40}},
			{adapt: true, m: 2, dims: []int{2, 30, 40}},
		} {
			c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(11, 12)))
			c.SurrogateWidth = width
			drop := &fused.Dropout{Key: dropmask.Key(4, 5, 6), P: 0.25}
			var first []float32
			var firstGrads fused.Grads
			for _, isa := range supportedISAs(t) {
				got := make([]float32, len(cur))
				var g fused.Grads
				var err error
				withISA(t, isa, func() { g, err = fused.Backward(&c, s, cur, cot, drop, got) })
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first, firstGrads = got, g
				} else if !slices.Equal(got, first) || !sameGrads(g, firstGrads) {
					t.Fatalf("width %g, %v: %v differs from the scalar code", width, k, isa)
				}
			}
		}
	}
}

// TestBackwardTimeConstantCotangent: an output cotangent given as [batch, N] (the same at every step, as
// the sum and mean readouts give it) yields the bits of the same cotangent broadcast to [batch, T, N], in
// every ISA, with and without dropout, and a cotangent of any other length is refused.
func TestBackwardTimeConstantCotangent(t *testing.T) {
	for _, k := range []kernelCase{
		{adapt: true, m: 1, dims: []int{3, 30, 40}},
		{adapt: true, m: 0, dims: []int{2, 17, 33}},
		{adapt: true, m: 2, dims: []int{2, 30, 40}},
	} {
		c, s, cur, _, _ := k.draw(rand.New(rand.NewPCG(21, 22)))
		r := rand.New(rand.NewPCG(23, 24))
		constant := make([]float32, s.Batch*s.Neurons)
		for i := range constant {
			constant[i] = float32(r.NormFloat64())
		}
		broadcast := make([]float32, s.Batch*s.Steps*s.Neurons)
		for b := range s.Batch {
			for step := range s.Steps {
				copy(broadcast[(b*s.Steps+step)*s.Neurons:], constant[b*s.Neurons:(b+1)*s.Neurons])
			}
		}
		for _, drop := range []*fused.Dropout{nil, {Key: dropmask.Key(4, 5, 6), P: 0.25}} {
			for _, isa := range supportedISAs(t) {
				want, got := make([]float32, len(cur)), make([]float32, len(cur))
				var wantGrads, gotGrads fused.Grads
				var err1, err2 error
				withISA(t, isa, func() {
					wantGrads, err1 = fused.Backward(&c, s, cur, broadcast, drop, want)
					gotGrads, err2 = fused.Backward(&c, s, cur, constant, drop, got)
				})
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !slices.Equal(got, want) || !sameGrads(gotGrads, wantGrads) {
					t.Errorf("%v, %v, dropout %v: the [batch, N] cotangent differs from its broadcast", k, isa, drop != nil)
				}
			}
		}
		if _, err := fused.Backward(&c, s, cur, constant[1:], nil, make([]float32, len(cur))); err == nil {
			t.Errorf("%v: a cotangent of %d values accepted", k, len(constant)-1)
		}
	}
}
