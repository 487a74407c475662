package step

import (
	"errors"
	"fmt"

	"github.com/fits-snn/fits/fits/events"
	"github.com/fits-snn/fits/fits/fused"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// EventsMaxDensity is the largest fraction of nonzero inputs at which the fused engine computes a dense
// block's synapse event-driven (package fits/events: x·W + b and its weight gradient from the nonzero
// entries of x only) instead of as XLA's dense product. A spiking layer's input is its predecessor's
// spikes, a few percent of them nonzero (1-3 % in the kernel-table benchmark at initialization, 5-20 % in
// trained networks); the kernel table's first-layer input is Bernoulli(0.2) spikes. The value is the
// measured break-even of the row kernels of fits/events against XLA's products on 2 CPU cores; the
// measurements are in docs/performance.md ("Event-driven synapses").
var EventsMaxDensity = 0.3

// eventExecs are what the fused engine needs to run a dense block's synapse event-driven.
type eventExecs struct {
	weights, biases *model.Variable // "dense/weights" [in, out], "dense/biases" [out]
	inputCot        *model.Exec     // (h, cot current) -> cot h, for blocks after the first
	curOut          hostBuffer      // the current, reused across steps
	cotIn           hostBuffer      // the cotangent of h computed at the selected entries, reused across steps
	eventDriven     bool            // this step's synapse ran event-driven
	// The events of the input h that the training forward recorded (recordedFor: that h), which the
	// backward's weight gradient reads instead of compacting h again.
	recorded    events.Recorded
	recordedFor *tensors.Tensor
	// given are the events of the first block's input when the batch gave them (Batch.Events) and the
	// synapse ran on them; the backward's weight gradient reads them.
	given *events.Recorded
	// rankX is the input x [batch, T, 1] of a first block whose kernels computed its current from x
	// themselves in this step (rankOne); nil otherwise.
	rankX *tensors.Tensor
	// consumed says that this step's backward of the block ran with ConsumedCotangents.
	consumed bool
	// filled says that this step's kernels computed the block's current [fillDims...] one batch element
	// at a time from the events of its input, fillFrom (FilledCurrents); the current was not written.
	filled   bool
	fillDims []int
	fillFrom *events.Recorded
}

// FilledCurrents turns on the fused engine's in-cache event-driven synapse: the current of an event-driven
// block is computed by the kernels one batch element at a time from the events of its input (recorded
// without computing the map), in cache, instead of being written as a [batch, T, N] array and read back by
// the forward and the backward. It applies where the backward can consume the cotangent in cache too
// (ConsumedCotangents), and in evaluation. The values are the same to the bit. Set it false to compare.
var FilledCurrents = true

// fillable reports whether block i, whose input has dimensions inDims [batch, T, in...] and this fraction
// of nonzero entries, runs with FilledCurrents in this step (training or not).
func (e *chunked) fillable(i int, be *blockExecs, inDims []int, density float64, training bool) bool {
	if !FilledCurrents || !e.rec.kernel || !e.useEvents(be, inDims, density) {
		return false
	}
	return !training || (ConsumedCotangents && (i == 0 || e.selectable(i-1)))
}

// fillForward prepares block be's current for the kernels from the events of its input h (recorded here
// without computing the map), or from given, the batch's input events, when h is nil.
func (e *chunked) fillForward(be *blockExecs, h *tensors.Tensor, given *events.Recorded, dims []int, training bool) error {
	be.eventDriven, be.filled, be.recordedFor, be.given = true, true, nil, nil
	be.fillDims = append([]int{dims[0], dims[1]}, be.b.OutDims...)
	if h == nil {
		be.given, be.fillFrom = given, given
		return nil
	}
	s := denseShape(be, h.Shape().Dimensions)
	if err := hostViews([]*tensors.Tensor{h}, func(v [][]float32) error { return events.RecordInput(s, v[0], &be.recorded) }); err != nil {
		return err
	}
	be.fillFrom = &be.recorded
	if training {
		be.recordedFor = h
	}
	return nil
}

// RankOneInput turns on the fused engine's rank-one first layer: a first dense block whose input has a
// single feature (sequential MNIST: one pixel a step) hands its input, weights and biases to the kernels
// (fused.RankOne), which compute the current x·W + b per batch element in cache and sum the weights' and
// biases' gradients themselves, instead of a [batch, T, N] current and its cotangent going through memory.
// The forward pass gives the same bits; the gradients of W and b the same sums up to float32 rounding.
// Set it false to compare with the event-driven or XLA synapse.
var RankOneInput = true

// rankOne reports whether block i of a step with dense input x (nil when the batch gave events) runs as a
// rank-one first layer (RankOneInput).
func (e *chunked) rankOne(i int, be *blockExecs, x *tensors.Tensor) bool {
	if !RankOneInput || i != 0 || x == nil || !e.eventCapable(be) {
		return false
	}
	d := x.Shape().Dimensions
	out := be.b.OutDims[0]
	return len(d) == 3 && d[2] == 1 && be.weights.Shape().Size() == out && be.biases.Shape().Size() == out
}

// rankOneViews calls fn with block be's rank-one input (its rankX, weights and biases) as the kernels read
// it, in place where the backend shares host memory.
func rankOneViews(be *blockExecs, fn func(fused.RankOne) error) error {
	return hostViews([]*tensors.Tensor{be.rankX, be.weights.MustValue(), be.biases.MustValue()}, func(v [][]float32) error {
		return fn(fused.RankOne{X: v[0], W: v[1], Bias: v[2]})
	})
}

// buildEvents prepares block i (a model.Block with Dense set) for event-driven synapses.
func (e *chunked) buildEvents(backend compute.Backend, i int, be *blockExecs) error {
	dctx := e.scope.At("%s", be.b.Scope).At("dense")
	be.weights, be.biases = dctx.GetVariable("weights"), dctx.GetVariable("biases")
	if be.weights == nil || be.biases == nil {
		return fmt.Errorf("step: dense block %s has no dense/weights or dense/biases variable", be.b.Scope)
	}
	if i == 0 || be.b.InputCotangent == nil {
		return nil
	}
	var err error
	be.inputCot, err = model.NewExec(backend, e.scope.Store(), func(_ *model.Scope, h, cot *Node) *Node {
		scope := e.scope
		return be.b.InputCotangent(scope.At("%s", be.b.Scope), h, cot)
	})
	return err
}

// denseShape is the event-driven view of block be's synapse on an input of dims [batch, T, in...].
func denseShape(be *blockExecs, d []int) events.Shape {
	s := events.Shape{Rows: d[0] * d[1], In: 1, Out: be.b.OutDims[0]}
	for _, v := range d[2:] {
		s.In *= v
	}
	return s
}

// eventCapable reports whether block be's synapse can run event-driven at all (at some density): the fused
// engine's dense block with a flat output.
func (e *chunked) eventCapable(be *blockExecs) bool {
	return e.rec.kernel && be.b.Dense && be.weights != nil && len(be.b.OutDims) == 1
}

// useEvents reports whether block be's synapse runs event-driven on an input of dims [batch, T, in...]
// with this fraction of nonzero entries.
func (e *chunked) useEvents(be *blockExecs, dims []int, density float64) bool {
	if !e.eventCapable(be) || density > EventsMaxDensity {
		return false
	}
	s := denseShape(be, dims)
	return be.weights.Shape().Size() == s.In*s.Out && be.biases.Shape().Size() == s.Out
}

// synapseForwardGiven is synapseForward of the first block from the events the batch gave (useEvents
// having said yes), without a dense input.
func (e *chunked) synapseForwardGiven(be *blockExecs, dims []int, given *events.Recorded) (*tensors.Tensor, error) {
	be.eventDriven, be.recordedFor, be.given = true, nil, given
	return e.hostOutput(&be.curOut, append([]int{dims[0], dims[1]}, be.b.OutDims...), func(y []float32) error {
		return hostViews([]*tensors.Tensor{be.weights.MustValue(), be.biases.MustValue()}, func(v [][]float32) error {
			return events.ForwardRecorded(given, v[0], v[1], y)
		})
	})
}

// denseInput expands a batch's input events into the dense input [batch, T, in...] they stand for, freed
// with the call's arena: for a first block that does not run event-driven on them.
func (e *chunked) denseInput(in *InputEvents) (*tensors.Tensor, error) {
	x := tensors.FromShape(shapes.Make(dtypes.Float32, in.Dims...))
	e.mem.keep(x)
	return x, tensors.MutableFlatData(x, func(flat []float32) { in.Rec.Expand(flat) })
}

// synapseForward returns block be's current [batch, T, OutDims...] for its input h, event-driven when
// useEvents says so (density is the fraction of nonzero entries of h), else by the block's synapse graph.
// With record (a training step), the event-driven forward records h's events for eventsBackward.
func (e *chunked) synapseForward(be *blockExecs, h *tensors.Tensor, density float64, record bool) (*tensors.Tensor, error) {
	be.eventDriven = e.useEvents(be, h.Shape().Dimensions, density)
	be.recordedFor, be.given = nil, nil
	if !be.eventDriven {
		outs, err := e.times.exec(be.synapse, h)
		if err != nil {
			return nil, err
		}
		e.mem.keep(outs[0])
		return outs[0], nil
	}
	s := denseShape(be, h.Shape().Dimensions)
	dims := append([]int{h.Shape().Dimensions[0], h.Shape().Dimensions[1]}, be.b.OutDims...)
	return e.hostOutput(&be.curOut, dims, func(y []float32) error {
		return hostViews([]*tensors.Tensor{h, be.weights.MustValue(), be.biases.MustValue()}, func(v [][]float32) error {
			if !record {
				return events.Forward(s, v[0], v[1], v[2], y)
			}
			if err := events.ForwardRecord(s, v[0], v[1], v[2], y, &be.recorded); err != nil {
				return err
			}
			be.recordedFor = h
			return nil
		})
	})
}

// SelectedCotangents turns on the fused engine's input cotangent at selected entries: a dense block after
// a fused block computes the cotangent of its input h (the previous block's output) only where the previous
// block's backward reads it (fits/events.SelectedInputCotangent, with the selection fused.ForwardSelect
// writes), instead of as XLA's dense product. The results are the same up to float32 rounding of the sums.
// Set it false to compare with XLA's product.
var SelectedCotangents = true

// selectable reports whether block i's training forward should write its selection: the next block is a
// dense block whose synapse the fused engine can run on the host.
func (e *chunked) selectable(i int) bool {
	if !SelectedCotangents || !e.rec.kernel || i+1 >= len(e.blocks) {
		return false
	}
	next := e.blocks[i+1]
	return next.b.Dense && len(next.b.OutDims) == 1 && next.weights != nil && next.biases != nil
}

// eventsBackward adds the gradients of an event-driven synapse's weights and biases to grads, given its
// input h and the cotangent of its current, and returns the cotangent of h (nil for the first block). When
// prev, the block before, wrote a selection for h's shape in this step's forward, the cotangent of h is
// computed at the selected entries only (SelectedCotangents).
func (e *chunked) eventsBackward(be *blockExecs, i int, h, cotCur *tensors.Tensor, prev *blockExecs, grads map[string]*tensors.Tensor) (*tensors.Tensor, error) {
	var gw, gb []float32
	var err error
	if h == nil { // the first block ran on the events the batch gave
		err = hostViews([]*tensors.Tensor{cotCur}, func(v [][]float32) error {
			gw, gb, err = events.GradientsRecorded(be.given.Shape(), be.given, v[0])
			return err
		})
	} else {
		s := denseShape(be, h.Shape().Dimensions)
		err = hostViews([]*tensors.Tensor{h, cotCur}, func(v [][]float32) error {
			var err error
			if be.recordedFor == h && be.recorded.Shape() == s {
				gw, gb, err = events.GradientsRecorded(s, &be.recorded, v[1])
			} else {
				gw, gb, err = events.Gradients(s, v[0], v[1])
			}
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	grads[be.weights.Path()] = tensors.FromFlatDataAndDimensions(gw, be.weights.Shape().Dimensions...)
	grads[be.biases.Path()] = tensors.FromFlatDataAndDimensions(gb, be.biases.Shape().Dimensions...)
	if i == 0 {
		return nil, nil
	}
	if prev != nil && prev.selShape.Batch > 0 && prev.selShape == kernelShape(h.Shape().Dimensions) {
		return e.hostOutput(&be.cotIn, h.Shape().Dimensions, func(out []float32) error {
			return hostViews([]*tensors.Tensor{cotCur, be.weights.MustValue()}, func(v [][]float32) error {
				return events.SelectedInputCotangent(denseShape(be, h.Shape().Dimensions), v[0], v[1], prev.sel, out)
			})
		})
	}
	if be.inputCot == nil {
		return nil, fmt.Errorf("step: dense block %s has no input cotangent graph", be.b.Scope)
	}
	outs, err := e.times.exec(be.inputCot, h, cotCur)
	if err != nil {
		return nil, err
	}
	e.mem.keep(outs[0])
	return outs[0], nil
}

// hostViews calls fn with the float32 values of ts, read in place where the backend shares host memory.
func hostViews(ts []*tensors.Tensor, fn func([][]float32) error) error {
	views := make([][]float32, len(ts))
	var visit func(k int) error
	visit = func(k int) error {
		if k == len(ts) {
			return fn(views)
		}
		var ferr error
		if err := tensors.ConstFlatData(ts[k], func(flat []float32) {
			views[k] = flat
			ferr = visit(k + 1)
		}); err != nil {
			return err
		}
		return ferr
	}
	return visit(0)
}

// ConsumedCotangents turns on the fused engine's in-cache synapse backward: for an event-driven block whose
// input's events the training forward recorded (and, after the first block, whose predecessor wrote its
// selection), the kernel hands each batch element's cotangent of the current to the synapse's backward
// while it is in cache (fused.BackwardConsume): the weights' and biases' gradients and the selected input
// cotangent are computed from it there, and the [batch, T, N] cotangent of the current is never written
// nor read back. The results are the same sums up to float32 rounding (the weights' gradient is summed per
// worker, then over the workers). Set it false to compare with the separate passes.
var ConsumedCotangents = true

// inputEvents returns the events of block be's input h that this step's forward recorded or was given
// (h nil: the batch's input events), nil when there are none.
func inputEvents(be *blockExecs, h *tensors.Tensor) *events.Recorded {
	switch {
	case h == nil:
		return be.given
	case be.recordedFor == h && be.recorded.Shape() == denseShape(be, h.Shape().Dimensions):
		return &be.recorded
	}
	return nil
}

// consumable reports whether block i (be, its input h, prev the block before or nil) can run its backward
// with ConsumedCotangents in this step.
func (e *chunked) consumable(be *blockExecs, i int, h *tensors.Tensor, prev *blockExecs) bool {
	if !ConsumedCotangents || !be.eventDriven || inputEvents(be, h) == nil {
		return false
	}
	return i == 0 || (prev != nil && prev.selShape.Batch > 0 && prev.selShape == kernelShape(h.Shape().Dimensions))
}

// consumedBackward is fusedBackward followed by eventsBackward for a block that consumable accepts, in one
// pass per batch element: it adds the gradients of the block's neuron variables, weights and biases to
// grads and returns the cotangent of its input h (nil for the first block).
func (e *chunked) consumedBackward(be *blockExecs, i int, cur, h, cot *tensors.Tensor, drop *fused.Dropout, prev *blockExecs, grads map[string]*tensors.Tensor) (*tensors.Tensor, error) {
	s := kernelShape(currentDims(be, cur))
	rec := inputEvents(be, h)
	es := rec.Shape()
	workers := fused.Workers(s.Batch)
	gw := make([][]float32, workers)
	for w := range gw {
		gw[w] = make([]float32, es.In*es.Out)
	}
	gb := make([]float32, s.Batch*es.Out) // per batch element, summed over the batch in order afterwards
	errs := make([]error, workers)
	stride := events.BitStride(es.In)
	rows := events.Shape{Rows: s.Steps, In: es.In, Out: es.Out}
	var g fused.Grads
	run := func(cotX []float32) error {
		return hostViews([]*tensors.Tensor{cot}, func(v [][]float32) error {
			cotOut := v[0]
			return e.withInput(be, cur, func(in fused.Input, weights, _ []float32) (err error) {
				// Each batch element's cotangent of the current, in cache: the weights' and biases'
				// gradients and the selected input cotangent of its rows.
				g, err = fused.BackwardInput(&be.hostCoefs, s, in, cotOut, drop, func(w, b int, c []float32) {
					if errs[w] != nil {
						return
					}
					r0 := b * s.Steps
					if errs[w] = rec.AccumulateRows(r0, r0+s.Steps, c, gw[w], gb[b*es.Out:(b+1)*es.Out]); errs[w] != nil || cotX == nil {
						return
					}
					errs[w] = events.SelectedInputCotangentRows(rows, c, weights, prev.sel[r0*stride:(r0+s.Steps)*stride], cotX[r0*es.In:(r0+s.Steps)*es.In])
				})
				if err != nil {
					return err
				}
				return errors.Join(errs...)
			})
		})
	}
	var cotH *tensors.Tensor
	var err error
	if i > 0 {
		cotH, err = e.hostOutput(&be.cotIn, h.Shape().Dimensions, run)
	} else {
		err = run(nil)
	}
	if err != nil {
		return nil, err
	}
	sumW := make([]float64, es.In*es.Out)
	for _, part := range gw {
		for k, v := range part {
			sumW[k] += float64(v)
		}
	}
	sumB := make([]float64, es.Out)
	for b := range s.Batch {
		for k, v := range gb[b*es.Out : (b+1)*es.Out] {
			sumB[k] += float64(v)
		}
	}
	grads[be.weights.Path()] = tensors.FromFlatDataAndDimensions(toFloat32(sumW), be.weights.Shape().Dimensions...)
	grads[be.biases.Path()] = tensors.FromFlatDataAndDimensions(toFloat32(sumB), be.biases.Shape().Dimensions...)
	return cotH, e.neuronGrads(be, g, grads)
}

// toFloat32 returns xs rounded to float32.
func toFloat32(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}
