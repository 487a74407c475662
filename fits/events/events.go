// Package events computes a dense map y = x·W + b and its weight and bias gradients by visiting only the
// nonzero entries of x: the event-driven form of a spiking network's synapse, whose input is the previous
// layer's spikes (0, or the dropout scale 1/(1 − p)) or a sparse event stream. With a fraction ρ of
// nonzero inputs it does ρ of a dense product's multiply-adds.
//
// Layout: x is row-major [rows, in] (rows = batch·time), W [in, out], b [out], y and its cotangent
// [rows, out]. Work is split over GOMAXPROCS goroutines; the results do not depend on how many (every sum
// runs in a fixed order).
package events

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Shape is the extent of a dense map: Rows input vectors of In features to Out features.
type Shape struct {
	Rows, In, Out int
}

func (s Shape) check(x, w []float32, extra ...[]float32) error {
	if s.Rows <= 0 || s.In <= 0 || s.Out <= 0 {
		return fmt.Errorf("events: shape %+v must be positive", s)
	}
	if len(x) != s.Rows*s.In {
		return fmt.Errorf("events: x has %d values for [%d, %d]", len(x), s.Rows, s.In)
	}
	if len(w) != s.In*s.Out {
		return fmt.Errorf("events: W has %d values for [%d, %d]", len(w), s.In, s.Out)
	}
	for _, a := range extra {
		if len(a) != s.Rows*s.Out {
			return fmt.Errorf("events: array of %d values for [%d, %d]", len(a), s.Rows, s.Out)
		}
	}
	return nil
}

// Density returns the fraction of nonzero entries of x (NaN counts as nonzero), counted over GOMAXPROCS
// goroutines, with AVX2 compares where the CPU has it.
func Density(x []float32) float64 {
	if len(x) == 0 {
		return 0
	}
	const minPerWorker = 1 << 16 // below this a goroutine costs more than it counts
	workers := max(1, min(runtime.GOMAXPROCS(0), len(x)/minPerWorker))
	counts := make([]int, workers)
	split(workers, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			counts[k] = countNonzero(x[k*len(x)/workers : (k+1)*len(x)/workers])
		}
	})
	n := 0
	for _, c := range counts {
		n += c
	}
	return float64(n) / float64(len(x))
}

// countNonzeroScalar returns how many entries of x are not zero (NaN counts), without a branch per entry:
// the input is a spike train, whose zeros and ones a branch predictor cannot guess.
func countNonzeroScalar(x []float32) int {
	n := 0
	for _, v := range x {
		n += nonzero(v)
	}
	return n
}

// nonzero returns 1 if v is not zero (NaN counts) and 0 for ±0, without a branch.
func nonzero(v float32) int {
	u := math.Float32bits(v) &^ (1 << 31) // ±0 → 0
	return int((u | -u) >> 31)            // 1 unless u = 0
}

// split runs work(lo, hi) over [0, n) cut into at most GOMAXPROCS contiguous ranges.
func split(n int, work func(lo, hi int)) {
	splitK(n, func(_, lo, hi int) { work(lo, hi) })
}

// splitK is split that also tells each call its goroutine's number k in [0, splitWorkers(n)); goroutine
// k gets [k·n/workers, (k+1)·n/workers).
func splitK(n int, work func(k, lo, hi int)) {
	workers := splitWorkers(n)
	var wg sync.WaitGroup
	for k := range workers {
		lo, hi := k*n/workers, (k+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(k, lo, hi)
		}()
	}
	wg.Wait()
}

// splitWorkers is how many goroutines split runs for n items: min(GOMAXPROCS, n), at least 1.
func splitWorkers(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }

// rowEvents is one goroutine's buffers for the nonzero entries of a row of x: their positions idx and
// values vals, padded so that the vector code may read a few entries past the last one.
type rowEvents struct {
	idx  []int32
	vals []float32
}

// eventPad is how many entries past a row's length rowEvents holds: the vector compaction stores whole
// vectors of 16.
const eventPad = 16

func newRowEvents(in int) *rowEvents {
	return &rowEvents{idx: make([]int32, in+eventPad), vals: make([]float32, in+eventPad)}
}

// compactScalar stores the positions and values of the nonzero entries of x in e (in increasing position)
// and returns how many there are, without a branch per entry.
func compactScalar(x []float32, e *rowEvents) int {
	n := 0
	idx, vals := e.idx[:len(x)+1], e.vals[:len(x)+1]
	for i, v := range x {
		idx[n], vals[n] = int32(i), v
		n += nonzero(v)
	}
	return n
}

// forwardRowScalar writes y = b + Σ_k vals[k]·W[idx[k], :] over the events k in order, W being [in, out]
// row-major with out = len(y).
func forwardRowScalar(idx []int32, vals, w, b, y []float32) {
	out := len(y)
	copy(y, b)
	for k, i := range idx {
		axpyScalar(vals[k], w[int(i)*out:(int(i)+1)*out], y, 0)
	}
}

// gradRowScalar adds vals[k]·c to row idx[k] of g ([·, out] row-major, out = len(c)) for the events k in
// order.
func gradRowScalar(idx []int32, vals, c, g []float32) {
	out := len(c)
	for k, i := range idx {
		axpyScalar(vals[k], c, g[int(i)*out:(int(i)+1)*out], 0)
	}
}

// Forward writes y = x·W + b: each row of y starts as b and gets x[r, i]·W[i, :] added for every nonzero
// x[r, i], in increasing i (each an IEEE float32 multiply, then an add: the same values in the vector and
// the scalar code).
func Forward(s Shape, x, w, b, y []float32) error { return ForwardRecord(s, x, w, b, y, nil) }

// Gradients returns the gradients of Σ cot·y with respect to W ([in, out]: Σ over rows of x[r, i]·cot[r, :]
// for the nonzero x[r, i], rows in increasing order) and b ([out]: Σ over rows of cot[r, :], summed in
// blocks of 64 rows, then over the blocks in order), given x and the cotangent cot [rows, out] of y.
func Gradients(s Shape, x, cot []float32) (gw, gb []float32, err error) {
	if err := s.check(x, make([]float32, s.In*s.Out), cot); err != nil {
		return nil, nil, err
	}
	gw = make([]float32, s.In*s.Out)
	// Each goroutine owns a range of W's rows (inputs i) and scans every row of x for them.
	split(s.In, func(lo, hi int) {
		e := newRowEvents(hi - lo)
		g := gw[lo*s.Out : hi*s.Out]
		for r := range s.Rows {
			n := compact(x[r*s.In+lo:r*s.In+hi], e)
			if n > 0 {
				gradRow(e.idx[:n], e.vals, cot[r*s.Out:(r+1)*s.Out], g)
			}
		}
	})
	return gw, biasGradient(s, cot), nil
}

// biasGradient returns Σ over rows of cot[r, :] ([out]), summed in blocks of 64 rows, then over the
// blocks in order.
func biasGradient(s Shape, cot []float32) []float32 {
	const block = 64
	blocks := (s.Rows + block - 1) / block
	partial := make([]float32, blocks*s.Out)
	split(blocks, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			p := partial[k*s.Out : (k+1)*s.Out]
			for r := k * block; r < min((k+1)*block, s.Rows); r++ {
				axpy(1, cot[r*s.Out:(r+1)*s.Out], p)
			}
		}
	})
	gb := make([]float32, s.Out)
	for k := range blocks {
		axpy(1, partial[k*s.Out:(k+1)*s.Out], gb)
	}
	return gb
}

// axpyScalar adds a·x to y for the entries from `from` on.
func axpyScalar(a float32, x, y []float32, from int) {
	y = y[:len(x)]
	for i := from; i < len(x); i++ {
		y[i] += a * x[i]
	}
}
