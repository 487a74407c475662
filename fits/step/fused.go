package step

import (
	"fmt"

	"github.com/fits-snn/fits/fits/fused"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/scan"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Fused is the chunked engine's dense maps and readout with each layer's recurrence run by the host kernel
// of package fits/fused: one call per layer forward and one backward (the hand-derived adjoint, recomputing
// the forward per block of neurons), whatever T is. The default where the backend's memory is the host's.
const Fused = "fused"

func init() {
	register(registration{name: Fused, summary: "each layer's recurrence as one call of the host kernel with the hand-derived adjoint",
		rank: 4,
		needs: func(_ compute.Backend, net model.Net) error {
			for _, b := range net.Blocks {
				if b.Neuron.Order > fused.MaxOrder {
					return &UnsupportedError{Err: fmt.Errorf("step: engine %q runs TS orders up to M = %d, not %d (use --engine=chunked)", Fused, fused.MaxOrder, b.Neuron.Order)}
				}
			}
			return nil
		},
		build: func(backend compute.Backend, scope *mlmodel.Scope, net model.Net, opts Options) (Engine, error) {
			return newChunked(Fused, backend, scope, net, opts.Chunk, recurrence{kernel: true})
		}})
}

// fusedExecs are the graphs and host values of one block of the fused engine: the block's coefficients are
// computed from its variables by a small graph (neuron.LayerCoefficients), the recurrence runs on the host
// (package fits/fused), and the cotangents of the coefficients go back to the variables through the autodiff
// of that small map (scan.VariableGrads).
type fusedExecs struct {
	coefs     *mlmodel.Exec      // () -> EtaDt, GammaDt (with adaptation), Beta..., Lambda... (shape P)
	coefGrads *mlmodel.Exec      // (cotangents in coefs' order...) -> gradients of neurParams
	hostCoefs fused.Coefficients // the coefficients of the current step, set by fusedForward
	adapt     bool               // the layer carries the adaptation current (EtaDt, GammaDt are coefs' first outputs)
	order     int                // TS order M
	pshape    []int              // the coefficients' parameter shape P (neuron.ParamShape)
	hOut      hostBuffer         // the block's output h, reused across steps
	// sel is the selection of the block's output entries whose cotangent its backward reads
	// (fused.ForwardSelect), written by a training step's forward when the next block can use it
	// (selectable); selShape is the shape it was written for, zero when this step wrote none.
	sel      []uint64
	selShape fused.Shape
}

// buildFused defines the block's coefficient graphs (compiled at their first call).
func (e *chunked) buildFused(backend compute.Backend, be *blockExecs) error {
	cfg := be.b.Neuron
	pshape, err := neuron.ParamShape(append([]int{1, 1}, be.b.OutDims...), cfg.ChannelShared)
	if err != nil {
		return err
	}
	be.pshape = pshape
	neuronScope := func(scope *mlmodel.Scope) *mlmodel.Scope { return scope.At("%s", be.b.Scope).At("neuron") }
	list := func(c neuron.Coefficients) []*Node {
		var out []*Node
		if c.EtaDt != nil {
			out = append(out, c.EtaDt, c.GammaDt)
		}
		return append(append(out, c.Beta...), c.Lambda...)
	}
	if be.coefs, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, g *Graph) []*Node {
		scope := e.scope
		c := neuron.LayerCoefficients(neuronScope(scope), g, dtypes.Float32, cfg, pshape)
		be.hostCoefs = fused.Coefficients{
			MuBar: float32(c.MuBar), RhoBar: float32(c.RhoBar), Vth: float32(c.Vth),
			SurrogateWidth: float32(c.Surrogate.Width), SurrogateScale: float32(c.Surrogate.Scale),
			DetachReset: c.DetachReset, StrictSpike: c.StrictSpike,
		}
		be.adapt, be.order = c.EtaDt != nil, len(c.Beta)
		out := list(c)
		if len(out) == 0 { // LIF without TS: no coefficient array; the graph needs an output
			out = []*Node{ScalarZero(g, dtypes.Float32)}
		}
		return out
	}); err != nil {
		return err
	}
	be.coefGrads, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, cots []*Node) []*Node {
		scope := e.scope
		g := cots[0].Graph()
		c := neuron.LayerCoefficients(neuronScope(scope), g, dtypes.Float32, cfg, pshape)
		var cg scan.CoefficientGrads
		var err error
		if cg.EtaDt, cg.GammaDt, cg.Beta, cg.Lambda, err = splitCoefficients(cots, c.EtaDt != nil, len(c.Beta)); err != nil {
			panic(err)
		}
		wrt := make([]*Node, len(be.neurParams))
		for i, v := range be.neurParams {
			wrt[i] = v.NodeValue(g)
		}
		return scan.VariableGrads(c, cg, wrt...)
	})
	return err
}

// fusedForward runs the block's recurrence over cur [batch, T, OutDims...] with the host kernel and returns
// the block's output h = spikes·D [batch, T, OutDims...] (D the block's dropout mask, which drop describes:
// time-shared, or per step and regenerated by the kernel; nil for none), the rate sum model.RateSum computes
// (Σ over the examples of mask ([batch]) times the example's mean firing rate, spikes per neuron per step)
// and the fraction of spikes among all entries of the output, padded examples included (an upper bound of
// h's fraction of nonzero entries).
//
// With selecting set it also writes the block's selection (fused.ForwardSelect) to be.sel. A nil cur is
// the current of a rank-one first layer (be.rankX; fused.RankOne). With reduce (chunked.timeSum) h is
// instead [batch, 1, OutDims...]: its mean over time for the mean readout, its sum for the sum readout.
func (e *chunked) fusedForward(be *blockExecs, cur, mask *tensors.Tensor, drop *fused.Dropout, selecting, reduce bool) (h *tensors.Tensor, rate, density float64, err error) {
	outs, err := e.times.exec(be.coefs)
	if err != nil {
		return nil, 0, 0, err
	}
	c := be.hostCoefs
	host := make([][]float32, len(outs))
	for i, t := range outs {
		if host[i], err = tensors.CopyFlatData[float32](t); err != nil {
			return nil, 0, 0, err
		}
		t.MustFinalizeAll()
	}
	if c.EtaDt, c.GammaDt, c.Beta, c.Lambda, err = splitCoefficients(host, be.adapt, be.order); err != nil {
		return nil, 0, 0, err
	}
	be.hostCoefs = c
	dims := currentDims(be, cur)
	s := kernelShape(dims)
	examples, err := tensors.CopyFlatData[float32](mask)
	if err != nil {
		return nil, 0, 0, err
	}
	var counts []int
	var sel []uint64
	be.selShape = fused.Shape{}
	if selecting {
		if n := fused.SelectionWords(s); cap(be.sel) >= n {
			be.sel = be.sel[:n]
		} else {
			be.sel = make([]uint64, n)
		}
		sel = be.sel
	}
	outDims := dims
	if reduce {
		outDims = append([]int{dims[0], 1}, dims[2:]...)
	}
	h, err = e.hostOutput(&be.hOut, outDims, func(out []float32) error {
		return e.withInput(be, cur, func(in fused.Input, _, _ []float32) (err error) {
			o := fused.Output{H: out, Selection: sel}
			if reduce {
				o = fused.Output{TimeSum: out}
			}
			if counts, err = fused.ForwardInput(&be.hostCoefs, s, in, drop, o); err != nil {
				return err
			}
			if reduce && e.net.Readout == model.ReadoutMean {
				scale := float32(1 / float64(s.Steps)) // the factor of graph.ReduceMean (MulScalar by 1/T)
				for i := range out {
					out[i] *= scale
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, 0, 0, err
	}
	if selecting {
		be.selShape = s
	}
	total := 0
	for b, n := range counts {
		rate += float64(examples[b]) * float64(n) / float64(s.Steps*s.Neurons)
		total += n
	}
	return h, rate, float64(total) / float64(s.Batch*s.Steps*s.Neurons), nil
}

// meanCotangent returns the cotangent of every step of the last block's output under the mean readout,
// given cot [batch, OutDims...], the head's cotangent of its time mean (chunked.reduced): cot times the
// factor 1/T of graph.ReduceMean, which is what the head's autodiff gives for each step of h.
func (e *chunked) meanCotangent(cot *tensors.Tensor) (*tensors.Tensor, error) {
	vals, err := tensors.CopyFlatData[float32](cot)
	if err != nil {
		return nil, err
	}
	scale := float32(1 / float64(e.steps))
	for i := range vals {
		vals[i] *= scale
	}
	t := tensors.FromFlatDataAndDimensions(vals, cot.Shape().Dimensions...)
	e.mem.keep(t)
	return t, nil
}

// currentDims are the dimensions [batch, T, OutDims...] of block be's current cur, or, for nil, of the
// current the kernels compute: from its rank-one input be.rankX [batch, T, 1], or from its input's events
// (be.filled).
func currentDims(be *blockExecs, cur *tensors.Tensor) []int {
	if cur != nil {
		return cur.Shape().Dimensions
	}
	if be.filled {
		return be.fillDims
	}
	x := be.rankX.Shape().Dimensions
	return append([]int{x[0], x[1]}, be.b.OutDims...)
}

// withInput calls fn with block be's current as the kernels read it (fused.Input) and, for a dense block,
// its synapse's weights [in, out] and biases [out] (nil otherwise), all in place where the backend shares
// host memory: the current cur, or, for nil, the rank-one input (be.rankX) or the current from the events of
// the block's input (be.filled: the synapse's rows, one batch element at a time). Each tensor is viewed
// once (a view holds the tensor's lock).
func (e *chunked) withInput(be *blockExecs, cur *tensors.Tensor, fn func(in fused.Input, w, bias []float32) error) error {
	switch {
	case cur != nil && be.weights == nil:
		return hostViews([]*tensors.Tensor{cur}, func(v [][]float32) error { return fn(fused.Input{Current: v[0]}, nil, nil) })
	case cur != nil:
		return hostViews([]*tensors.Tensor{cur, be.weights.MustValue(), be.biases.MustValue()}, func(v [][]float32) error {
			return fn(fused.Input{Current: v[0]}, v[1], v[2])
		})
	case be.filled:
		steps := be.fillDims[1]
		return hostViews([]*tensors.Tensor{be.weights.MustValue(), be.biases.MustValue()}, func(v [][]float32) error {
			return fn(fused.Input{Fill: func(b int, dst []float32) error {
				return be.fillFrom.ForwardRows(b*steps, (b+1)*steps, v[0], v[1], dst)
			}}, v[0], v[1])
		})
	}
	return rankOneViews(be, func(in fused.RankOne) error { return fn(fused.Input{RankOne: &in}, in.W, in.Bias) })
}

// kernelShape is the kernel's view of a tensor [batch, T, d1, …, dn].
func kernelShape(dims []int) fused.Shape {
	s := fused.Shape{Batch: dims[0], Steps: dims[1], Neurons: 1}
	for _, d := range dims[2:] {
		s.Neurons *= d
	}
	return s
}

// hostBuffer is a float32 tensor in memory that the host and the device share (XLA CPU), written by the
// host kernel and read by the next graph call. The engine keeps one per block and role across steps and
// overwrites it, so that the operating system's page faults of fresh buffers of this size are paid once,
// not every step (measured: docs/performance-notes.md).
type hostBuffer struct {
	t    *tensors.Tensor
	flat []float32
}

func (h *hostBuffer) free() {
	if h.t != nil {
		_ = h.t.FinalizeAll()
	}
	*h = hostBuffer{}
}

// hostOutput returns a float32 tensor of dims on the engine's device whose values fill writes. Where the
// backend shares host memory with its device (XLA CPU), fill writes into the device buffer itself, the
// buffer kept in slot and reused by the next step; elsewhere into a new local tensor that the next graph
// call transfers, freed after the step.
func (e *chunked) hostOutput(slot *hostBuffer, dims []int, fill func([]float32) error) (*tensors.Tensor, error) {
	shape := shapes.Make(dtypes.Float32, dims...)
	if !e.backend.HasSharedBuffers() {
		t := tensors.FromShape(shape)
		e.mem.keep(t)
		var ferr error
		if err := tensors.MutableFlatData(t, func(flat []float32) { ferr = fill(flat) }); err != nil {
			return nil, err
		}
		return t, ferr
	}
	if slot.t == nil || !slot.t.Shape().Equal(shape) {
		slot.free()
		buf, flat, err := e.backend.NewSharedBuffer(0, shape)
		if err != nil {
			return nil, err
		}
		t, err := tensors.FromBuffer(buf)
		if err != nil {
			_ = buf.Finalize()
			return nil, err
		}
		*slot = hostBuffer{t: t, flat: flat.([]float32)}
	}
	return slot.t, fill(slot.flat)
}

// cotSlot is the buffer that fusedBackward writes the cotangent of a current of kernel shape s into. Blocks
// of one shape share it: a block's cotangent is read by its synapse's backward, which gives the cotangent of
// the previous block's output, before the previous block's backward overwrites it. One [B, T, W] float32
// array less per layer (16 MB at the SHD recipe's shape).
func (e *chunked) cotSlot(s fused.Shape) *hostBuffer {
	if e.cotSlots[s] == nil {
		if e.cotSlots == nil {
			e.cotSlots = map[fused.Shape]*hostBuffer{}
		}
		e.cotSlots[s] = &hostBuffer{}
	}
	return e.cotSlots[s]
}

// fusedBackward adds the gradients of the block's neuron variables to grads and returns the cotangent of
// its current, given cur, the block's current (fusedForward's input), cot, the cotangent of the block's
// output h = spikes·D [batch, T, OutDims...], and drop, the description of the dropout mask D that
// fusedForward applied (nil without dropout). For a rank-one first layer (nil cur) it adds the gradients
// of the synapse's weights and biases too and returns no cotangent.
func (e *chunked) fusedBackward(be *blockExecs, cur, cot *tensors.Tensor, drop *fused.Dropout, grads map[string]*tensors.Tensor) (*tensors.Tensor, error) {
	dims := currentDims(be, cur)
	s := kernelShape(dims)
	var g fused.Grads
	var cotCur *tensors.Tensor
	var err error
	if cur == nil {
		var gw, gb []float32
		err = hostViews([]*tensors.Tensor{cot}, func(c [][]float32) error {
			return rankOneViews(be, func(in fused.RankOne) (err error) {
				g, gw, gb, err = fused.BackwardRankOne(&be.hostCoefs, s, in, c[0], drop)
				return err
			})
		})
		if err == nil {
			grads[be.weights.Path()] = tensors.FromFlatDataAndDimensions(gw, be.weights.Shape().Dimensions...)
			grads[be.biases.Path()] = tensors.FromFlatDataAndDimensions(gb, be.biases.Shape().Dimensions...)
		}
	} else {
		cotCur, err = e.hostOutput(e.cotSlot(s), dims, func(out []float32) error {
			return hostViews([]*tensors.Tensor{cur, cot}, func(v [][]float32) (err error) {
				g, err = fused.Backward(&be.hostCoefs, s, v[0], v[1], drop, out)
				return err
			})
		})
	}
	if err != nil {
		return nil, err
	}
	return cotCur, e.neuronGrads(be, g, grads)
}

// neuronGrads adds the gradients of block be's neuron variables to grads, given the kernel's cotangents of
// the block's coefficients.
func (e *chunked) neuronGrads(be *blockExecs, g fused.Grads, grads map[string]*tensors.Tensor) error {
	var cots []any
	add := func(v []float64) {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		t := tensors.FromFlatDataAndDimensions(f, be.pshape...)
		e.mem.keep(t)
		cots = append(cots, t)
	}
	if g.EtaDt != nil {
		add(g.EtaDt)
		add(g.GammaDt)
	}
	for _, v := range g.Beta {
		add(v)
	}
	for _, v := range g.Lambda {
		add(v)
	}
	if len(be.neurParams) > 0 {
		if len(cots) == 0 {
			return fmt.Errorf("step: block %s has trainable neuron variables but no coefficient", be.b.Scope)
		}
		outs, err := e.times.exec(be.coefGrads, cots...)
		if err != nil {
			return err
		}
		for j, v := range be.neurParams {
			grads[v.Path()] = outs[j]
		}
	}
	return nil
}

// splitCoefficients splits xs, a block's coefficients (or their cotangents) in the order of the coefs graph
// (EtaDt, GammaDt when adapt, then Beta 1..M, then Lambda 1..M), into those parts.
func splitCoefficients[T any](xs []T, adapt bool, m int) (eta, gamma T, beta, lambda []T, err error) {
	k := 0
	if adapt {
		k = 2
	}
	if len(xs) < k+2*m {
		return eta, gamma, nil, nil, fmt.Errorf("step: %d coefficient arrays for TS order %d", len(xs), m)
	}
	if adapt {
		eta, gamma = xs[0], xs[1]
	}
	if m > 0 {
		beta, lambda = xs[k:k+m], xs[k+m:k+2*m]
	}
	return eta, gamma, beta, lambda, nil
}
