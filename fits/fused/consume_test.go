package fused_test

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/fused"
)

// TestBackwardConsume: each batch element's cotangent that BackwardConsume hands over is Backward's for
// that element, to the bit, and so are the coefficient cotangents, in every ISA and with a per-step mask;
// every element is handed over once, worker w the elements [w·B/W, (w+1)·B/W) in increasing order.
func TestBackwardConsume(t *testing.T) {
	k := kernelCase{adapt: true, m: 1, dims: []int{7, 40, 64}}
	c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(51, 52)))
	drop := &fused.Dropout{Key: dropmask.Key(1, 2, 3), P: 0.2}
	for _, isa := range supportedISAs(t) {
		withISA(t, isa, func() {
			want := make([]float32, len(cur))
			wantGrads, err := fused.Backward(&c, s, cur, cot, drop, want)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, len(cur))
			workers := fused.Workers(s.Batch)
			var mu sync.Mutex
			order := make([][]int, workers)
			size := s.Steps * s.Neurons
			gotGrads, err := fused.BackwardConsume(&c, s, cur, cot, drop, func(w, b int, e []float32) {
				mu.Lock()
				defer mu.Unlock()
				order[w] = append(order[w], b)
				copy(got[b*size:(b+1)*size], e)
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) || !sameGrads(gotGrads, wantGrads) {
				t.Fatalf("%v: the cotangents handed over differ from Backward's", isa)
			}
			for w, bs := range order {
				var expect []int
				for b := w * s.Batch / workers; b < (w+1)*s.Batch/workers; b++ {
					expect = append(expect, b)
				}
				if !slices.Equal(bs, expect) {
					t.Fatalf("%v: worker %d of %d ran elements %v, want %v", isa, w, workers, bs, expect)
				}
			}
		})
	}
	if _, err := fused.BackwardConsume(&c, s, cur, cot, nil, nil); err == nil {
		t.Error("BackwardConsume without a consumer accepted")
	}
}
