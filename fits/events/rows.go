package events

import "fmt"

// AccumulateRows adds the gradients that rows [r0, r1) of the map whose input rec recorded contribute, on
// the calling goroutine: Σ x[r, i]·cot[r − r0, :] to gw [In, Out] (for every event of those rows, rows in
// increasing order) and Σ cot[r − r0, :] to gb [Out] (rows in increasing order). cot holds those rows'
// cotangents only, [r1 − r0, Out]. It is GradientsRecorded for a part of the rows, for a caller that has
// each part's cotangent at hand (in cache) and sums the parts itself.
func (rec *Recorded) AccumulateRows(r0, r1 int, cot, gw, gb []float32) error {
	s := rec.s
	if r0 < 0 || r1 > s.Rows || r0 > r1 {
		return fmt.Errorf("events: rows [%d, %d) of a recording of %d", r0, r1, s.Rows)
	}
	if len(cot) != (r1-r0)*s.Out || len(gw) != s.In*s.Out || len(gb) != s.Out {
		return fmt.Errorf("events: cot, gw, gb of %d, %d, %d values for rows [%d, %d) of shape %+v", len(cot), len(gw), len(gb), r0, r1, s)
	}
	for _, c := range rec.chunks {
		for r := max(r0, c.lo); r < min(r1, c.hi); r++ {
			lo, hi := c.off[r-c.lo], c.off[r-c.lo+1]
			row := cot[(r-r0)*s.Out : (r-r0+1)*s.Out]
			if hi > lo {
				gradRow(c.idx[lo:hi], c.vals[lo:hi], row, gw)
			}
			axpy(1, row, gb)
		}
	}
	return nil
}

// SelectedInputCotangentRows is SelectedInputCotangent on the calling goroutine (for a caller that runs
// its own goroutines, one part of the rows each): the same values, for the s.Rows rows that cot, sel and
// cotX hold.
func SelectedInputCotangentRows(s Shape, cot, w []float32, sel []uint64, cotX []float32) error {
	if err := checkSelected(s, cot, w, sel, cotX); err != nil {
		return err
	}
	selectedRows(s, cot, w, sel, cotX, 0, s.Rows)
	return nil
}

// ForwardRows writes rows [r0, r1) of ForwardRecorded's y to y [r1 − r0, Out] (the same values, to the
// bit), on the calling goroutine: for a caller that needs one part of y at a time (one batch element's
// current, in cache) rather than the whole of it in memory.
func (rec *Recorded) ForwardRows(r0, r1 int, w, b, y []float32) error {
	s := rec.s
	if r0 < 0 || r1 > s.Rows || r0 > r1 {
		return fmt.Errorf("events: rows [%d, %d) of a recording of %d", r0, r1, s.Rows)
	}
	if len(w) != s.In*s.Out || len(b) != s.Out || len(y) != (r1-r0)*s.Out {
		return fmt.Errorf("events: W, b, y of %d, %d, %d values for rows [%d, %d) of shape %+v", len(w), len(b), len(y), r0, r1, s)
	}
	for _, c := range rec.chunks {
		for r := max(r0, c.lo); r < min(r1, c.hi); r++ {
			lo, hi := c.off[r-c.lo], c.off[r-c.lo+1]
			forwardRow(c.idx[lo:hi], c.vals[lo:hi], w, b, y[(r-r0)*s.Out:(r-r0+1)*s.Out])
		}
	}
	return nil
}

// RecordInput replaces rec's content with the events of x [Rows, In] (the nonzero entries of each row), as
// ForwardRecord records them, without computing the map.
func RecordInput(s Shape, x []float32, rec *Recorded) error {
	if s.Rows <= 0 || s.In <= 0 || s.Out <= 0 {
		return fmt.Errorf("events: shape %+v must be positive", s)
	}
	if len(x) != s.Rows*s.In {
		return fmt.Errorf("events: x has %d values for %d rows of %d", len(x), s.Rows, s.In)
	}
	rec.reset(s.Rows)
	splitK(s.Rows, func(k, lo, hi int) {
		c := rec.chunk(k, lo, hi)
		e := newRowEvents(s.In)
		for r := lo; r < hi; r++ {
			n := compact(x[r*s.In:(r+1)*s.In], e)
			c.idx, c.vals = append(c.idx, e.idx[:n]...), append(c.vals, e.vals[:n]...)
			c.off = append(c.off, int32(len(c.idx)))
		}
	})
	rec.s = s
	return nil
}
