package mnist

// Sequences returns the images as float32 sequences in [0, 1], flat with shape [N, T, F] of the
// layout. Both layouts read pixels in raster order, so the flat slices are equal; only the shape
// differs.
func (s *Set) Sequences(l Layout) (x []float32, shape [3]int) {
	T, F := l.Shape()
	x = make([]float32, len(s.Images))
	for i, p := range s.Images {
		x[i] = float32(p) / 255
	}
	return x, [3]int{s.Len(), T, F}
}
