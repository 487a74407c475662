package data_test

import (
	"fmt"

	"github.com/fits-snn/fits/data"
)

// NewSet holds inputs [examples, time, features] by what they are: binary spikes as one bit per value, so
// a spike dataset takes 1/32 of its dense float32 size in memory, and ExampleInto expands one example back
// into float32 for a batch, value for value.
func ExampleNewSet() {
	const examples, steps, features = 4, 250, 140 // the SSC shape: 250 bins of 140 channels
	x := make([]float32, examples*steps*features)
	for i := range x {
		if i%7 == 0 {
			x[i] = 1 // a spike
		}
	}
	set := data.NewSet(x, []int32{0, 1, 2, 3}, steps, features)
	fmt.Println("encoding:", set.Encoding())
	fmt.Printf("held in %d bytes; dense float32: %d bytes\n", set.StorageBytes(), set.DenseBytes())

	example := make([]float32, steps*features)
	set.ExampleInto(2, example)
	same := true
	for i, v := range example {
		same = same && v == x[2*steps*features+i]
	}
	fmt.Println("example 2 expanded to float32, same values:", same)
	// Output:
	// encoding: bits
	// held in 17500 bytes; dense float32: 560000 bytes
	// example 2 expanded to float32, same values: true
}
