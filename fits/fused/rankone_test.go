package fused_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/fused"
)

// rankOneInput draws a RankOne input for shape s: X in [0, 1) with most entries exactly 0, as MNIST's
// pixels are, and weights and biases of either sign. It returns the input and the dense current
// [batch, T, N] it stands for, x·w rounded to float32 before the bias is added.
func rankOneInput(rng *rand.Rand, s fused.Shape) (fused.RankOne, []float32) {
	in := fused.RankOne{X: make([]float32, s.Batch*s.Steps), W: make([]float32, s.Neurons), Bias: make([]float32, s.Neurons)}
	for i := range in.X {
		if rng.Float64() < 0.3 {
			in.X[i] = float32(rng.Float64())
		}
	}
	for i := range in.W {
		in.W[i], in.Bias[i] = float32(2.5*rng.NormFloat64()), float32(0.3+0.5*rng.NormFloat64())
	}
	cur := make([]float32, s.Batch*s.Steps*s.Neurons)
	for r, x := range in.X {
		for i, w := range in.W {
			p := x * w
			cur[r*s.Neurons+i] = p + in.Bias[i]
		}
	}
	return in, cur
}

// TestRankOneEqualsDense holds ForwardRankOne and BackwardRankOne to Forward and Backward on the current
// they stand for, to the bit, in every ISA: the spikes, the counts, the selection and the coefficient
// cotangents, and the weights' and biases' gradients to the sums of the dense cotangent of the current
// (over t in float32, then over the batch in float64). The shapes cover the assembly kernels of order 1
// (64 neurons: two pairs of groups), groups of 16 and 8 with a scalar rest (40), and orders 0 and 2; the
// masks none, time-shared and per step (whose counters must continue across batch elements); the output
// cotangent per step and constant over time.
func TestRankOneEqualsDense(t *testing.T) {
	cases := []kernelCase{
		{adapt: true, m: 1, dims: []int{3, 50, 64}},
		{adapt: true, m: 1, dims: []int{3, 30, 40}},
		{adapt: true, m: 0, dims: []int{2, 30, 40}},
		{adapt: true, m: 2, dims: []int{2, 30, 40}, detach: true},
	}
	for ci, k := range cases {
		rng := rand.New(rand.NewPCG(uint64(31+ci), 32))
		c, s, _, cot, _ := k.draw(rng)
		in, cur := rankOneInput(rng, s)
		constant := cot[:s.Batch*s.Neurons]
		shared := make([]float32, s.Batch*s.Neurons)
		for i := range shared {
			if rng.Float64() < 0.75 {
				shared[i] = 1 / 0.75
			}
		}
		for _, drop := range []*fused.Dropout{nil, {Shared: shared}, {Key: dropmask.Key(7, 8, 9), P: 0.25}} {
			for _, isa := range supportedISAs(t) {
				withISA(t, isa, func() {
					wantOut, gotOut := make([]float32, len(cur)), make([]float32, len(cur))
					wantSel, gotSel := make([]uint64, fused.SelectionWords(s)), make([]uint64, fused.SelectionWords(s))
					wantCounts, err1 := fused.ForwardSelect(&c, s, cur, drop, wantOut, wantSel)
					gotCounts, err2 := fused.ForwardRankOne(&c, s, in, drop, gotOut, gotSel)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					if !slices.Equal(wantOut, gotOut) || !slices.Equal(wantCounts, gotCounts) || !slices.Equal(wantSel, gotSel) {
						t.Fatalf("%v, dropout %+v, %v: the rank-one forward differs from the dense one", k, drop, isa)
					}
					for _, co := range [][]float32{cot, constant} {
						cotCur := make([]float32, len(cur))
						wantGrads, err1 := fused.Backward(&c, s, cur, co, drop, cotCur)
						gotGrads, gw, gb, err2 := fused.BackwardRankOne(&c, s, in, co, drop)
						if err1 != nil || err2 != nil {
							t.Fatal(err1, err2)
						}
						if !sameGrads(wantGrads, gotGrads) {
							t.Fatalf("%v, dropout %+v, %v: the rank-one coefficient cotangents differ from the dense ones", k, drop, isa)
						}
						ww, wb := rankOneGradients(s, in.X, cotCur)
						if !slices.Equal(gw, ww) || !slices.Equal(gb, wb) {
							t.Fatalf("%v, dropout %+v, %v: weight gradients %v, want %v; bias gradients %v, want %v", k, drop, isa, gw[:3], ww[:3], gb[:3], wb[:3])
						}
					}
				})
			}
		}
	}
}

// rankOneGradients sums the dense cotangent of the current cotCur [batch, T, N] as BackwardRankOne
// documents: Σₜ x·Ī and Σₜ Ī in float32 per batch element, then over the batch in float64.
func rankOneGradients(s fused.Shape, x, cotCur []float32) (gw, gb []float32) {
	w, b := make([]float64, s.Neurons), make([]float64, s.Neurons)
	for e := range s.Batch {
		for i := range s.Neurons {
			var sw, sb float32
			for step := range s.Steps {
				c := cotCur[(e*s.Steps+step)*s.Neurons+i]
				p := c * x[e*s.Steps+step]
				sw += p
				sb += c
			}
			w[i] += float64(sw)
			b[i] += float64(sb)
		}
	}
	gw, gb = make([]float32, s.Neurons), make([]float32, s.Neurons)
	for i := range gw {
		gw[i], gb[i] = float32(w[i]), float32(b[i])
	}
	return gw, gb
}

// TestRankOneBadInput: inputs, weights or biases of the wrong length are refused with an error.
func TestRankOneBadInput(t *testing.T) {
	k := kernelCase{adapt: true, m: 1, dims: []int{2, 10, 16}}
	c, s, _, cot, _ := k.draw(rand.New(rand.NewPCG(1, 2)))
	good, _ := rankOneInput(rand.New(rand.NewPCG(3, 4)), s)
	out := make([]float32, s.Batch*s.Steps*s.Neurons)
	for name, in := range map[string]fused.RankOne{
		"short X":    {X: good.X[1:], W: good.W, Bias: good.Bias},
		"long W":     {X: good.X, W: append(slices.Clone(good.W), 1), Bias: good.Bias},
		"short bias": {X: good.X, W: good.W, Bias: good.Bias[1:]},
	} {
		if _, err := fused.ForwardRankOne(&c, s, in, nil, out, nil); err == nil {
			t.Errorf("%s: ForwardRankOne accepted it", name)
		}
		if _, _, _, err := fused.BackwardRankOne(&c, s, in, cot, nil); err == nil {
			t.Errorf("%s: BackwardRankOne accepted it", name)
		}
	}
}

// TestForwardTimeSum holds ForwardTimeSum to Forward: the spike counts, and the sums over time of the
// output h = S·D summed in float32 in the order of t, to the bit, in every ISA, without dropout and with
// time-shared and per-step masks; a sums array of the wrong length is refused.
func TestForwardTimeSum(t *testing.T) {
	for ci, k := range []kernelCase{
		{adapt: true, m: 1, dims: []int{3, 50, 64}},
		{adapt: true, m: 2, dims: []int{2, 30, 40}},
		{adapt: false, m: 0, dims: []int{2, 20, 13}},
	} {
		rng := rand.New(rand.NewPCG(uint64(41+ci), 42))
		c, s, cur, _, _ := k.draw(rng)
		shared := make([]float32, s.Batch*s.Neurons)
		for i := range shared {
			if rng.Float64() < 0.75 {
				shared[i] = 1 / 0.75
			}
		}
		for _, drop := range []*fused.Dropout{nil, {Shared: shared}, {Key: dropmask.Key(7, 8, 9), P: 0.25}} {
			for _, isa := range supportedISAs(t) {
				withISA(t, isa, func() {
					out := make([]float32, len(cur))
					wantCounts, err1 := fused.Forward(&c, s, cur, drop, out)
					got := make([]float32, s.Batch*s.Neurons)
					gotCounts, err2 := fused.ForwardTimeSum(&c, s, cur, drop, got)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					want := make([]float32, s.Batch*s.Neurons)
					for b := range s.Batch {
						for step := range s.Steps {
							for i := range s.Neurons {
								want[b*s.Neurons+i] += out[(b*s.Steps+step)*s.Neurons+i]
							}
						}
					}
					if !slices.Equal(got, want) || !slices.Equal(gotCounts, wantCounts) {
						t.Fatalf("%v, dropout %+v, %v: time sums or counts differ from Forward's", k, drop, isa)
					}
				})
			}
		}
		if _, err := fused.ForwardTimeSum(&c, s, cur, nil, make([]float32, s.Batch*s.Neurons+1)); err == nil {
			t.Errorf("%v: sums of the wrong length accepted", k)
		}
	}
}
