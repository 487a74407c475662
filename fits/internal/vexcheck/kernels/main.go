// Command kernels links the host kernels of fits/fused and fits/events into one program, for the tests that
// disassemble them (package vexcheck). Run, it calls each once on a small layer and reports errors only.
package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/fits-snn/fits/fits/events"
	"github.com/fits-snn/fits/fits/fused"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kernels:", err)
		os.Exit(1)
	}
}

func run() error {
	const batch, steps, neurons = 2, 5, 40
	s := fused.Shape{Batch: batch, Steps: steps, Neurons: neurons}
	fill := func(n int, v float32) []float32 { return slices.Repeat([]float32{v}, n) }
	coef := func(v float32) []float32 { return fill(neurons, v) }
	c := fused.Coefficients{MuBar: 0.9, RhoBar: 0.98, Vth: 1, SurrogateWidth: 1, SurrogateScale: 0.3,
		EtaDt: coef(0.1), GammaDt: coef(0.1), Beta: [][]float32{coef(0.5)}, Lambda: [][]float32{coef(0.5)}}
	cur, out, cot := make([]float32, s.Batch*s.Steps*s.Neurons), make([]float32, s.Batch*s.Steps*s.Neurons), make([]float32, s.Batch*s.Steps*s.Neurons)
	for i := range cur {
		cur[i], cot[i] = float32(i%7)*0.3, 1
	}
	for _, drop := range []*fused.Dropout{nil, {Shared: fill(batch*neurons, 2)}, {Key: 1, P: 0.5}} {
		if _, err := fused.Forward(&c, s, cur, drop, out); err != nil {
			return err
		}
		if _, err := fused.Backward(&c, s, cur, cot, drop, out); err != nil {
			return err
		}
	}
	es := events.Shape{Rows: batch * steps, In: neurons, Out: 12}
	w, b, y := make([]float32, es.In*es.Out), make([]float32, es.Out), make([]float32, es.Rows*es.Out)
	if err := events.Forward(es, cur, w, b, y); err != nil {
		return err
	}
	if d := events.Density(cur); d <= 0 || d > 1 {
		return fmt.Errorf("density %g of a current with nonzero entries", d)
	}
	if _, _, err := events.Gradients(es, cur, y); err != nil {
		return err
	}
	sel := slices.Repeat([]uint64{0x5555555555555555}, es.Rows*events.BitStride(es.In))
	return events.SelectedInputCotangent(es, y, w, sel, cur)
}
