package events_test

import (
	"fmt"

	"github.com/fits-snn/fits/fits/events"
)

// A synapse y = x·W + b on two time bins of four input channels, computed from the nonzero inputs only; then
// the same from the events alone, as a dataset held as spike bits gives them (no dense x), and the weight
// gradient from those events.
func Example() {
	s := events.Shape{Rows: 2, In: 4, Out: 3}
	x := []float32{
		0, 1, 0, 0, // bin 0: channel 1 spiked
		1, 0, 0, 1, // bin 1: channels 0 and 3
	}
	w := []float32{ // [In, Out]
		1, 2, 3,
		4, 5, 6,
		7, 8, 9,
		10, 11, 12,
	}
	b := []float32{0.5, 0.5, 0.5}
	y := make([]float32, s.Rows*s.Out)
	if err := events.Forward(s, x, w, b, y); err != nil {
		panic(err)
	}
	fmt.Println("from x:     ", y)

	spiked := [][]int32{{1}, {0, 3}} // each bin's channels, increasing
	var rec events.Recorded
	if err := events.Record(s, &rec, func(r int, idx []int32, vals []float32) ([]int32, []float32) {
		for _, c := range spiked[r] {
			idx, vals = append(idx, c), append(vals, 1)
		}
		return idx, vals
	}); err != nil {
		panic(err)
	}
	if err := events.ForwardRecorded(&rec, w, b, y); err != nil {
		panic(err)
	}
	fmt.Println("from events:", y, "density", rec.Density())

	cot := []float32{1, 0, 0, 0, 1, 0} // the cotangent of y
	gw, gb, err := events.GradientsRecorded(s, &rec, cot)
	if err != nil {
		panic(err)
	}
	fmt.Println("dW:", gw)
	fmt.Println("db:", gb)
	// Output:
	// from x:      [4.5 5.5 6.5 11.5 13.5 15.5]
	// from events: [4.5 5.5 6.5 11.5 13.5 15.5] density 0.375
	// dW: [0 1 0 1 0 0 0 0 0 0 1 0]
	// db: [1 1 0]
}
