package events

import (
	"fmt"
	"sync"
)

// Recorded holds the events of a dense map's input x as ForwardRecord found them (the positions and values
// of the nonzero entries of each row, in increasing position), so that GradientsRecorded computes the
// weight gradient from them without reading and compacting x a second time. A training step records in its
// forward pass and reads in its backward; the buffers are reused from one step to the next.
type Recorded struct {
	s      Shape
	chunks []recordedChunk
}

// recordedChunk is the events of rows [lo, hi), written by one goroutine: those of row r are idx and vals
// [off[r-lo], off[r-lo+1]).
type recordedChunk struct {
	lo, hi int
	off    []int32
	idx    []int32
	vals   []float32
}

// Shape returns the shape of the map whose input r holds (the zero Shape before any recording).
func (r *Recorded) Shape() Shape { return r.s }

// Events returns how many events r holds.
func (r *Recorded) Events() int {
	n := 0
	for _, c := range r.chunks {
		n += len(c.idx)
	}
	return n
}

// reset empties rec for rows rows recorded by splitK's goroutines, keeping its buffers.
func (r *Recorded) reset(rows int) {
	r.s = Shape{}
	workers := splitWorkers(rows)
	if cap(r.chunks) < workers {
		r.chunks = make([]recordedChunk, workers)
	}
	r.chunks = r.chunks[:workers]
}

// chunk returns goroutine k's chunk, emptied, for rows [lo, hi).
func (r *Recorded) chunk(k, lo, hi int) *recordedChunk {
	c := &r.chunks[k]
	c.lo, c.hi = lo, hi
	c.off = append(c.off[:0], 0)
	c.idx, c.vals = c.idx[:0], c.vals[:0]
	return c
}

// Density returns the fraction of x's entries that r holds as events (0 before any recording).
func (r *Recorded) Density() float64 {
	if r.s.Rows == 0 {
		return 0
	}
	return float64(r.Events()) / (float64(r.s.Rows) * float64(r.s.In))
}

// Record replaces rec's content with the events of an input x of shape s given row by row instead of as a
// dense x (an input held as spike bits, say): rows(r, idx, vals) appends the positions, increasing and in
// [0, s.In), and the values of the nonzero entries of row r to idx and vals and returns the two slices.
// Each of up to GOMAXPROCS goroutines calls rows for its own range of r, in increasing order. It returns an
// error, and leaves rec empty, when a row's positions are out of range or not increasing.
func Record(s Shape, rec *Recorded, rows func(r int, idx []int32, vals []float32) ([]int32, []float32)) error {
	if s.Rows <= 0 || s.In <= 0 || s.Out <= 0 {
		return fmt.Errorf("events: shape %+v must be positive", s)
	}
	rec.reset(s.Rows)
	bad := make([]int, len(rec.chunks)) // 1 + the first row with bad positions, per goroutine
	splitK(s.Rows, func(k, lo, hi int) {
		c := rec.chunk(k, lo, hi)
		for r := lo; r < hi; r++ {
			first := len(c.idx)
			c.idx, c.vals = rows(r, c.idx, c.vals)
			if len(c.vals) != len(c.idx) || !increasingBelow(c.idx[first:], s.In) {
				bad[k] = r + 1
				return
			}
			c.off = append(c.off, int32(len(c.idx)))
		}
	})
	for _, r := range bad {
		if r > 0 {
			return fmt.Errorf("events: row %d's events are not increasing positions in [0, %d) with one value each", r-1, s.In)
		}
	}
	rec.s = s
	return nil
}

func increasingBelow(idx []int32, n int) bool {
	prev := int32(-1)
	for _, i := range idx {
		if i <= prev {
			return false
		}
		prev = i
	}
	return prev < int32(n)
}

// Expand writes the dense input x [Rows, In] whose events r holds (zero elsewhere).
func (r *Recorded) Expand(x []float32) {
	clear(x)
	for _, c := range r.chunks {
		for row := c.lo; row < c.hi; row++ {
			lo, hi := c.off[row-c.lo], c.off[row-c.lo+1]
			dst := x[row*r.s.In : (row+1)*r.s.In]
			for k, i := range c.idx[lo:hi] {
				dst[i] = c.vals[lo+int32(k)]
			}
		}
	}
}

// ForwardRecorded is Forward from the events rec holds (of ForwardRecord or Record) instead of a dense x:
// the same y, to the bit, as Forward of the input the events were taken from, with W [In, Out], b [Out]
// and y [Rows, Out] of rec's shape.
func ForwardRecorded(rec *Recorded, w, b, y []float32) error {
	s := rec.s
	if s.Rows == 0 {
		return fmt.Errorf("events: ForwardRecorded of an empty recording")
	}
	if len(w) != s.In*s.Out || len(b) != s.Out || len(y) != s.Rows*s.Out {
		return fmt.Errorf("events: W, b, y of %d, %d, %d values for shape %+v", len(w), len(b), len(y), s)
	}
	var wg sync.WaitGroup
	for _, c := range rec.chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := c.lo; r < c.hi; r++ {
				lo, hi := c.off[r-c.lo], c.off[r-c.lo+1]
				forwardRow(c.idx[lo:hi], c.vals[lo:hi], w, b, y[r*s.Out:(r+1)*s.Out])
			}
		}()
	}
	wg.Wait()
	return nil
}

// ForwardRecord is Forward, recording the events of x in rec (its earlier content replaced) unless rec is
// nil.
func ForwardRecord(s Shape, x, w, b, y []float32, rec *Recorded) error {
	if err := s.check(x, w, y); err != nil {
		return err
	}
	if len(b) != s.Out {
		return fmt.Errorf("events: b has %d values for %d outputs", len(b), s.Out)
	}
	if rec != nil {
		rec.reset(s.Rows)
	}
	splitK(s.Rows, func(k, lo, hi int) {
		var c *recordedChunk
		if rec != nil {
			c = rec.chunk(k, lo, hi)
		}
		e := newRowEvents(s.In)
		for r := lo; r < hi; r++ {
			n := compact(x[r*s.In:(r+1)*s.In], e)
			forwardRow(e.idx[:n], e.vals, w, b, y[r*s.Out:(r+1)*s.Out])
			if c != nil {
				c.idx, c.vals = append(c.idx, e.idx[:n]...), append(c.vals, e.vals[:n]...)
				c.off = append(c.off, int32(len(c.idx)))
			}
		}
	})
	if rec != nil {
		rec.s = s
	}
	return nil
}

// GradientsRecorded is Gradients from the events rec recorded of x: the same values, to the bit, without
// reading x. rec must hold the events of an input of shape s.
func GradientsRecorded(s Shape, rec *Recorded, cot []float32) (gw, gb []float32, err error) {
	if rec.s != s {
		return nil, nil, fmt.Errorf("events: recorded events of shape %+v, not %+v", rec.s, s)
	}
	if len(cot) != s.Rows*s.Out {
		return nil, nil, fmt.Errorf("events: cot has %d values for %d rows of %d", len(cot), s.Rows, s.Out)
	}
	gw = make([]float32, s.In*s.Out)
	// Each goroutine owns a range of W's rows (inputs i) and visits every row's events in that range, in
	// increasing row and position, as Gradients does.
	split(s.In, func(lo, hi int) {
		for _, c := range rec.chunks {
			for r := c.lo; r < c.hi; r++ {
				idx := c.idx[c.off[r-c.lo]:c.off[r-c.lo+1]]
				vals := c.vals[c.off[r-c.lo]:c.off[r-c.lo+1]]
				a := 0
				for a < len(idx) && int(idx[a]) < lo {
					a++
				}
				z := a
				for z < len(idx) && int(idx[z]) < hi {
					z++
				}
				if z > a {
					gradRow(idx[a:z], vals[a:], cot[r*s.Out:(r+1)*s.Out], gw)
				}
			}
		}
	})
	return gw, biasGradient(s, cot), nil
}
