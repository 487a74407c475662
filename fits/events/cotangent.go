package events

import (
	"fmt"
	"math/bits"
)

// BitStride is the number of 64-bit words one row of a selection over n entries per row takes: bit i of row
// r is bit i mod 64 of word r·BitStride(n) + i/64 (rows start on a word, so that rows written by different
// goroutines share no word).
func BitStride(n int) int { return (n + 63) / 64 }

// dotLanes is the number of partial sums of a dot product: entry j of the vectors goes to partial j mod 16,
// in increasing j, and the 16 partials are added in a fixed tree (dotScalar). The AVX-512 code holds them in
// one vector, the AVX2 code in two, the scalar code in an array: every ISA gives the same value.
const dotLanes = 16

// SelectedInputCotangent writes the cotangent of the input x of y = x·W + b at the selected entries:
// cotX[r, i] = Σ_j cot[r, j]·W[i, j] where bit i of row r of sel is set (BitStride(In) words a row), and 0
// elsewhere. cot is the cotangent of y [rows, out], W [in, out], cotX [rows, in].
//
// It is the input cotangent of a dense synapse whose input is the spikes of a layer with a surrogate
// gradient of bounded support (the triangle of Algorithm 1's backward): that layer's backward multiplies
// the cotangent of each spike by σ′(ṼM − Vth), which is zero wherever the membrane is farther than the
// surrogate's width from threshold, and by the dropout mask, zero for the dropped entries. Only the other
// entries need the product: with a fraction ρ of them selected it does ρ of a dense product's work. Each
// selected entry is one dot product of length out, summed as dotScalar sums it, in every ISA.
func SelectedInputCotangent(s Shape, cot, w []float32, sel []uint64, cotX []float32) error {
	if err := checkSelected(s, cot, w, sel, cotX); err != nil {
		return err
	}
	split(s.Rows, func(lo, hi int) { selectedRows(s, cot, w, sel, cotX, lo, hi) })
	return nil
}

// checkSelected checks SelectedInputCotangent's arguments: cotX has x's layout [rows, in], cot y's [rows,
// out], sel BitStride(in) words a row.
func checkSelected(s Shape, cot, w []float32, sel []uint64, cotX []float32) error {
	if err := s.check(cotX, w, cot); err != nil {
		return err
	}
	if len(sel) != s.Rows*BitStride(s.In) {
		return fmt.Errorf("events: selection has %d words for %d rows of %d entries", len(sel), s.Rows, s.In)
	}
	return nil
}

// selectedRows is SelectedInputCotangent's work for rows [lo, hi).
func selectedRows(s Shape, cot, w []float32, sel []uint64, cotX []float32, lo, hi int) {
	stride := BitStride(s.In)
	idx := make([]int32, s.In+dotGroup)
	res := make([]float32, s.In+dotGroup)
	for r := lo; r < hi; r++ {
		n := 0
		for k, word := range sel[r*stride : (r+1)*stride] {
			for word != 0 {
				i := k*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if i < s.In {
					idx[n] = int32(i)
					n++
				}
			}
		}
		out := cotX[r*s.In : (r+1)*s.In]
		clear(out)
		if n == 0 {
			continue
		}
		for k := n; k < n+dotGroup; k++ { // pad to whole groups with a valid row; results ignored
			idx[k] = idx[0]
		}
		whole := (n + dotGroup - 1) / dotGroup * dotGroup
		dots(cot[r*s.Out:(r+1)*s.Out], w, idx[:whole], res[:whole])
		for k, i := range idx[:n] {
			out[i] = res[k]
		}
	}
}

// dotGroup is how many dot products the vector code computes together (their partial sums reduced at once).
const dotGroup = 4

// dotsScalar writes res[k] = dot(c, W[idx[k], :]) (W [·, len(c)] row-major), each summed as dotScalar sums.
// The vector code takes len(idx) a multiple of dotGroup.
func dotsScalar(c, w []float32, idx []int32, res []float32) {
	out := len(c)
	for k, i := range idx {
		res[k] = dotScalar(c, w[int(i)*out:(int(i)+1)*out])
	}
}

// dotScalar returns Σ_j a[j]·b[j] (len(a) = len(b)) in the order of the vector code: each product an IEEE
// float32 multiply, added to partial j mod 16 in increasing j; then partials l and l + 8 are added (l < 8),
// then those l and l + 4 (l < 4), then the four as (0 + 1) + (2 + 3).
func dotScalar(a, b []float32) float32 {
	var p [dotLanes]float32
	b = b[:len(a)]
	for j, x := range a {
		p[j%dotLanes] += float32(x * b[j])
	}
	var q [8]float32
	for l := range q {
		q[l] = p[l] + p[l+8]
	}
	var r [4]float32
	for l := range r {
		r[l] = q[l] + q[l+4]
	}
	return (r[0] + r[1]) + (r[2] + r[3])
}
