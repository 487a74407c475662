package step

import (
	"fmt"

	"github.com/fits-snn/fits/fits/fused"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/scan"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// fusedExecs are the graphs and host values of one block of the fused engine: the block's coefficients are
// computed from its variables by a small graph (neuron.LayerCoefficients), the recurrence runs on the host
// (package fits/fused), and the cotangents of the coefficients go back to the variables through the autodiff
// of that small map (scan.VariableGrads).
type fusedExecs struct {
	coefs     *context.Exec      // () -> EtaDt, GammaDt (with adaptation), Beta..., Lambda... (shape P)
	coefGrads *context.Exec      // (cotangents in coefs' order...) -> gradients of neurParams
	hostCoefs fused.Coefficients // the coefficients of the current step, set by fusedForward
	adapt     bool               // the layer carries the adaptation current (EtaDt, GammaDt are coefs' first outputs)
	order     int                // TS order M
	pshape    []int              // the coefficients' parameter shape P (neuron.ParamShape)
	hOut      hostBuffer         // the block's output h, reused across steps
	cotOut    hostBuffer         // the cotangent of the block's current, reused across steps
}

// buildFused defines the block's coefficient graphs (compiled at their first call).
func (e *chunked) buildFused(backend backends.Backend, be *blockExecs) error {
	cfg := be.b.Neuron
	pshape, err := neuron.ParamShape(append([]int{1, 1}, be.b.OutDims...), cfg.ChannelShared)
	if err != nil {
		return err
	}
	be.pshape = pshape
	scope := func(ctx *context.Context) *context.Context { return ctx.In(be.b.Scope).In("neuron") }
	list := func(c neuron.Coefficients) []*Node {
		var out []*Node
		if c.EtaDt != nil {
			out = append(out, c.EtaDt, c.GammaDt)
		}
		return append(append(out, c.Beta...), c.Lambda...)
	}
	if be.coefs, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, g *Graph) []*Node {
		c := neuron.LayerCoefficients(scope(ctx), g, dtypes.Float32, cfg, pshape)
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
	be.coefGrads, err = context.NewExec(backend, e.ctx, func(ctx *context.Context, cots []*Node) []*Node {
		g := cots[0].Graph()
		c := neuron.LayerCoefficients(scope(ctx), g, dtypes.Float32, cfg, pshape)
		var cg scan.CoefficientGrads
		var err error
		if cg.EtaDt, cg.GammaDt, cg.Beta, cg.Lambda, err = splitCoefficients(cots, c.EtaDt != nil, len(c.Beta)); err != nil {
			panic(err)
		}
		wrt := make([]*Node, len(be.neurParams))
		for i, v := range be.neurParams {
			wrt[i] = v.ValueGraph(g)
		}
		return scan.VariableGrads(c, cg, wrt...)
	})
	return err
}

// fusedForward runs the block's recurrence over cur [batch, T, OutDims...] with the host kernel and returns
// the block's output h = spikes·drop [batch, T, OutDims...] (drop [batch, 1, OutDims...] is the block's
// dropout mask, nil for none), the rate sum model.RateSum computes (Σ over the examples of mask ([batch])
// times the example's mean firing rate, spikes per neuron per step) and the fraction of spikes among all
// entries of the output, padded examples included (an upper bound of h's fraction of nonzero entries).
func (e *chunked) fusedForward(be *blockExecs, cur, mask, drop *tensors.Tensor) (h *tensors.Tensor, rate, density float64, err error) {
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
	dims := cur.Shape().Dimensions
	s := kernelShape(dims)
	examples, err := tensors.CopyFlatData[float32](mask)
	if err != nil {
		return nil, 0, 0, err
	}
	var dropout []float32
	if drop != nil {
		if dropout, err = tensors.CopyFlatData[float32](drop); err != nil {
			return nil, 0, 0, err
		}
	}
	var counts []int
	h, err = e.hostOutput(&be.hOut, dims, func(out []float32) error {
		return hostViews([]*tensors.Tensor{cur}, func(v [][]float32) (err error) {
			counts, err = fused.Forward(&be.hostCoefs, s, v[0], dropout, out)
			return err
		})
	})
	if err != nil {
		return nil, 0, 0, err
	}
	total := 0
	for b, n := range counts {
		rate += float64(examples[b]) * float64(n) / float64(s.Steps*s.Neurons)
		total += n
	}
	return h, rate, float64(total) / float64(s.Batch*s.Steps*s.Neurons), nil
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
// overwrites it: allocating fresh buffers of this size every step costs the operating system's page
// faults on every page (about 0.1 s per step at W = 512).
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
		t, err := tensors.FromBuffer(e.backend, buf)
		if err != nil {
			_ = e.backend.BufferFinalize(buf)
			return nil, err
		}
		*slot = hostBuffer{t: t, flat: flat.([]float32)}
	}
	return slot.t, fill(slot.flat)
}

// fusedBackward adds the gradients of the block's neuron variables to grads and returns the cotangent of
// its current, given cur, the block's current (fusedForward's input), cot, the cotangent of the block's
// output h = spikes·dropout [batch, T, OutDims...], and the block's dropout mask drop [batch, 1,
// OutDims...] (nil without dropout).
func (e *chunked) fusedBackward(be *blockExecs, cur, cot, drop *tensors.Tensor, grads map[string]*tensors.Tensor) (*tensors.Tensor, error) {
	dims := cur.Shape().Dimensions
	s := kernelShape(dims)
	var mask []float32
	if drop != nil {
		var err error
		if mask, err = tensors.CopyFlatData[float32](drop); err != nil {
			return nil, err
		}
	}
	var g fused.Grads
	cotCur, err := e.hostOutput(&be.cotOut, dims, func(out []float32) error {
		return hostViews([]*tensors.Tensor{cur, cot}, func(v [][]float32) (err error) {
			g, err = fused.Backward(&be.hostCoefs, s, v[0], v[1], mask, out)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
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
			return nil, fmt.Errorf("step: block %s has trainable neuron variables but no coefficient", be.b.Scope)
		}
		outs, err := e.times.exec(be.coefGrads, cots...)
		if err != nil {
			return nil, err
		}
		for j, v := range be.neurParams {
			grads[v.ScopeAndName()] = outs[j]
		}
	}
	return cotCur, nil
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
