package fused_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestInputForms: a current given by Fill gives Current's spikes, selection, time sums, cotangents and
// coefficient cotangents to the bit; a Fill error stops the call and is returned; inputs with no form or
// two, and outputs with both or neither of H and TimeSum, are refused.
func TestInputForms(t *testing.T) {
	k := kernelCase{adapt: true, m: 1, dims: []int{5, 30, 48}}
	c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(61, 62)))
	size := s.Steps * s.Neurons
	fill := fused.Input{Fill: func(b int, dst []float32) error {
		copy(dst, cur[b*size:(b+1)*size])
		return nil
	}}
	dense := fused.Input{Current: cur}
	drop := &fused.Dropout{Key: dropmask.Key(3, 2, 1), P: 0.2}
	for _, isa := range supportedISAs(t) {
		withISA(t, isa, func() {
			var hs, sums [2][]float32
			var selWords [2][]uint64
			var cots [2][]float32
			var grads [2]fused.Grads
			for j, in := range []fused.Input{dense, fill} {
				hs[j], sums[j] = make([]float32, len(cur)), make([]float32, s.Batch*s.Neurons)
				selWords[j] = make([]uint64, fused.SelectionWords(s))
				if _, err := fused.ForwardInput(&c, s, in, drop, fused.Output{H: hs[j], Selection: selWords[j]}); err != nil {
					t.Fatal(err)
				}
				if _, err := fused.ForwardInput(&c, s, in, drop, fused.Output{TimeSum: sums[j]}); err != nil {
					t.Fatal(err)
				}
				cots[j] = make([]float32, len(cur))
				var err error
				grads[j], err = fused.BackwardInput(&c, s, in, cot, drop, func(_, b int, e []float32) { copy(cots[j][b*size:(b+1)*size], e) })
				if err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(hs[0], hs[1]) || !slices.Equal(selWords[0], selWords[1]) || !slices.Equal(sums[0], sums[1]) ||
				!slices.Equal(cots[0], cots[1]) || !sameGrads(grads[0], grads[1]) {
				t.Fatalf("%v: a current by Fill gives other results than the same current given whole", isa)
			}
		})
	}
	failing := fused.Input{Fill: func(b int, dst []float32) error {
		if b == 3 {
			return errors.New("no current for element 3")
		}
		return nil
	}}
	if _, err := fused.ForwardInput(&c, s, failing, nil, fused.Output{H: make([]float32, len(cur))}); err == nil || !strings.Contains(err.Error(), "element 3") {
		t.Errorf("forward: Fill's error not returned (%v)", err)
	}
	if _, err := fused.BackwardInput(&c, s, failing, cot, nil, func(int, int, []float32) {}); err == nil || !strings.Contains(err.Error(), "element 3") {
		t.Errorf("backward: Fill's error not returned (%v)", err)
	}
	h := make([]float32, len(cur))
	for name, in := range map[string]fused.Input{"none": {}, "two": {Current: cur, Fill: fill.Fill}} {
		if _, err := fused.ForwardInput(&c, s, in, nil, fused.Output{H: h}); err == nil {
			t.Errorf("input %s accepted", name)
		}
	}
	for name, out := range map[string]fused.Output{"neither": {}, "both": {H: h, TimeSum: make([]float32, s.Batch*s.Neurons)},
		"selection without H": {TimeSum: make([]float32, s.Batch*s.Neurons), Selection: make([]uint64, fused.SelectionWords(s))}} {
		if _, err := fused.ForwardInput(&c, s, dense, nil, out); err == nil {
			t.Errorf("output %s accepted", name)
		}
	}
}
