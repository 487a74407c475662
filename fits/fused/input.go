package fused

import "fmt"

// Input is a layer's input current as the kernels read it, in one of three forms (exactly one field set).
// The kernels run one batch element at a time; the last two forms compute that element's current [T, N]
// into a buffer that stays in the CPU's cache instead of reading a [batch, T, N] array from memory.
type Input struct {
	// Current is the current [batch, T, N].
	Current []float32
	// RankOne is the current of a synapse with one input feature, x·W + b.
	RankOne *RankOne
	// Fill writes batch element b's current [T, N] to dst: a current the caller computes one element at a
	// time (a dense synapse from the events of its input, say). The kernels' goroutines call it for
	// different elements at once; an error stops the call.
	Fill func(b int, dst []float32) error
}

// Output is what ForwardInput writes: the output h = S·D [batch, T, N] and, when Selection is not nil,
// the selection ForwardSelect describes; or, with TimeSum set instead of H, only h's sum over time [batch,
// N] (as ForwardTimeSum).
type Output struct {
	H         []float32
	Selection []uint64
	TimeSum   []float32
}

// check validates in for shape s.
func (in Input) check(s Shape) error {
	set := 0
	for _, ok := range []bool{in.Current != nil, in.RankOne != nil, in.Fill != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("fused: an input needs exactly one of Current, RankOne and Fill (%d set)", set)
	}
	switch {
	case in.Current != nil:
		return s.check(in.Current)
	case in.RankOne != nil:
		return in.RankOne.check(s)
	}
	return nil
}

// check validates out for shape s.
func (out Output) check(s Shape) error {
	if (out.H == nil) == (out.TimeSum == nil) {
		return fmt.Errorf("fused: an output needs exactly one of H and TimeSum")
	}
	if out.TimeSum != nil {
		if out.Selection != nil {
			return fmt.Errorf("fused: a selection needs the output H")
		}
		if len(out.TimeSum) != s.Batch*s.Neurons {
			return fmt.Errorf("fused: time sums of %d values for [%d, %d]", len(out.TimeSum), s.Batch, s.Neurons)
		}
		return nil
	}
	return s.check(out.H)
}

// ForwardInput runs the layer over in as ForwardSelect and ForwardTimeSum do, writing what out asks for,
// and returns the number of spikes of each batch element.
func ForwardInput(c *Coefficients, s Shape, in Input, dropout *Dropout, out Output) ([]int, error) {
	if err := in.check(s); err != nil {
		return nil, err
	}
	if err := out.check(s); err != nil {
		return nil, err
	}
	return forward(c, s, in, dropout, out)
}

// BackwardInput is BackwardConsume with the current given as in: each batch element's cotangent of the
// current [T, N] goes to consume while it is in cache (for a RankOne input, BackwardRankOne sums the
// synapse's gradients itself).
func BackwardInput(c *Coefficients, s Shape, in Input, cotOut []float32, dropout *Dropout, consume func(worker, b int, cot []float32)) (Grads, error) {
	if err := in.check(s); err != nil {
		return Grads{}, err
	}
	if consume == nil {
		return Grads{}, fmt.Errorf("fused: BackwardInput without a consumer")
	}
	g, _, err := backward(c, s, in, cotOut, dropout, nil, consume)
	return g, err
}

// scratch returns the buffers of the workers of a call on shape s: one element's current [T, N] each
// where the kernels compute it (RankOne, Fill), none for a Current.
func (in Input) scratch(s Shape) [][]float32 {
	if in.Current != nil {
		return make([][]float32, workers(s.Batch))
	}
	return elementBuffers(s)
}

// elementBuffers returns one buffer of a batch element's [T, N] values for each worker of a call on s.
func elementBuffers(s Shape) [][]float32 {
	bufs := make([][]float32, workers(s.Batch))
	for w := range bufs {
		bufs[w] = make([]float32, s.Steps*s.Neurons)
	}
	return bufs
}

// element returns the current [T, N] of batch element b: its part of Current, or buf computed. A Fill's
// error goes to *err (left as it is otherwise).
func (in Input) element(isa ISA, s Shape, b int, buf []float32, err *error) []float32 {
	switch {
	case in.Current != nil:
		size := s.Steps * s.Neurons
		return in.Current[b*size : (b+1)*size]
	case in.RankOne != nil:
		in.RankOne.fill(isa, s, b, buf)
	default:
		if e := in.Fill(b, buf); e != nil {
			*err = fmt.Errorf("fused: the current of batch element %d: %w", b, e)
		}
	}
	return buf
}
