package events

import "fmt"

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
		rec.s = Shape{}
		workers := splitWorkers(s.Rows)
		if cap(rec.chunks) < workers {
			rec.chunks = make([]recordedChunk, workers)
		}
		rec.chunks = rec.chunks[:workers]
	}
	splitK(s.Rows, func(k, lo, hi int) {
		var c *recordedChunk
		if rec != nil {
			c = &rec.chunks[k]
			c.lo, c.hi = lo, hi
			c.off = append(c.off[:0], 0)
			c.idx, c.vals = c.idx[:0], c.vals[:0]
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
