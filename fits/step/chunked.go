package step

import (
	"fmt"
	"slices"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/events"
	"github.com/fits-snn/fits/fits/fused"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Chunked runs each block's recurrence K steps per graph call (Options.Chunk, default DefaultChunk(T)),
// called from Go, with each chunk's vector-Jacobian product by autodiff of the unrolled chunk: the default
// on a backend without host-shared memory or While loops.
const Chunked = "chunked"

func init() {
	register(registration{name: Chunked, summary: "the recurrence in chunks of --chunk steps per graph call, autodiff per chunk",
		rank: 0, needs: needsDynamicSlices(Chunked),
		build: func(backend compute.Backend, scope *mlmodel.Scope, net model.Net, opts Options) (Engine, error) {
			return newChunked(Chunked, backend, scope, net, opts.Chunk, recurrence{forward: layerForward, vjp: autodiffVJP})
		}})
}

// chunked runs each block's neuron recurrence K steps per graph call (see the package documentation).
type chunked struct {
	name        string
	backend     compute.Backend
	net         model.Net
	scope       *mlmodel.Scope
	blocks      []*blockExecs
	head, score *mlmodel.Exec // training head (loss, cotangent, readout gradients) and evaluation head
	readout     []string      // the readout's trainable variables, in the head's output order
	chunk       int           // requested chunk length (0: DefaultChunk(T))
	rec         recurrence    // how each block's recurrence runs: what the engines built on this one differ in
	k           int           // the chunk length in use, fixed by the first call's T
	starts      []*tensors.Tensor
	times       timer
	mem         arena
	withDropout bool
	// constCot: the head returns the cotangent of the last block's output as [batch, OutDims...], the same
	// at every time step (fused engine, sum or mean readout or no classifier; timeConstantCotangent).
	constCot bool
	// timeSum: the head reads the last block's output h only through its mean or sum over time (a classifier
	// with the mean or sum readout), so the fused engine hands it that mean or sum as [batch, 1, OutDims...]
	// (fused.ForwardTimeSum) instead of writing h [batch, T, OutDims...]. reduced says whether this step's
	// forward did (not for a last block that is also a rank-one first layer), and steps is its T.
	timeSum, reduced bool
	steps            int
	cotSlots         map[fused.Shape]*hostBuffer // the fused backward's cotangent buffers, one per kernel shape (cotSlot)
}

// recurrence is how a chunked engine runs each block's neuron recurrence, the one part in which the engines
// built on chunked (chunked, stepwise, scan, loop, fused) differ: each engine's file composes one.
type recurrence struct {
	// forward builds the recurrence over a chunk's current cur [batch, K, out...] from state and returns its
	// spikes, final state and, when saves, every step's state [K, states + 1, batch, out...].
	forward func(scope *mlmodel.Scope, cfg neuron.Config, cur *Node, state []*Node) (spikes *Node, final []*Node, saved *Node)
	// vjp builds the chunk's vector-Jacobian product: the cotangents of the starting state, of the current
	// and of the neurons' variables vars, from the spikes' and final state's cotangents (and saved, the
	// steps forward saved, when saves).
	vjp func(scope *mlmodel.Scope, cfg neuron.Config, vars []*mlmodel.Variable, cur *Node, state []*Node, saved, cotSpikes *Node, cotFinal []*Node) []*Node
	// saves: one chunk of T steps whose forward saves every step for the vjp (XLA While loops, the loop
	// engine) instead of the vjp recomputing it.
	saves bool
	// kernel: the recurrence runs on the host kernel of package fits/fused (forward and vjp unused): one
	// call per layer and direction, whatever T is.
	kernel bool
}

// layerForward is the forward of a recurrence written out step by step in the graph (neuron.LayerFrom).
func layerForward(scope *mlmodel.Scope, cfg neuron.Config, cur *Node, state []*Node) (*Node, []*Node, *Node) {
	spikes, final := neuron.LayerFrom(scope, cur, cfg, state)
	return spikes, final, nil
}

// autodiffVJP is the vjp of a recurrence by GoMLX's autodiff of layerForward.
func autodiffVJP(scope *mlmodel.Scope, cfg neuron.Config, vars []*mlmodel.Variable, cur *Node, state []*Node, _, cotSpikes *Node, cotFinal []*Node) []*Node {
	spikes, final := neuron.LayerFrom(scope, cur, cfg, state)
	obj := ReduceAllSum(Mul(spikes, cotSpikes))
	for j := range final {
		obj = Add(obj, ReduceAllSum(Mul(final[j], cotFinal[j])))
	}
	wrt := append(append([]*Node{}, state...), cur)
	for _, v := range vars {
		wrt = append(wrt, v.NodeValue(cur.Graph()))
	}
	return Gradient(obj, wrt...)
}

// timeConstantCotangent reports whether the loss depends on the last block's output h [batch, T, d...]
// only through its sum or mean over time, so that the cotangent of h is the same at every step: the sum
// and mean readouts, and the spike-count loss of a network without a classifier.
func timeConstantCotangent(net model.Net) bool {
	return net.Classes == 0 || net.Readout == model.ReadoutSum || net.Readout == model.ReadoutMean
}

// blockExecs are the compiled pieces of one block.
type blockExecs struct {
	b           model.Block
	states      int                      // neuron.StateComponents
	synapse     *mlmodel.Exec            // h -> current [batch, T, out...]
	synapseVJP  *mlmodel.Exec            // (h, cot current) -> synapse gradients..., cot h (blocks after the first)
	forward     *mlmodel.Exec            // (current, t0, state...) -> (spikes [batch, K, out...], final state...)
	forwardSave *mlmodel.Exec            // loop engine: (current, t0, state...) -> (spikes, final state..., saved [T, states + 1, batch, out...])
	vjp         *mlmodel.Exec            // (current, t0, cot h, [dropout mask [batch, 1 or T, out...]], state..., [saved (loop engine)], cot final..., acc...) -> (cot state..., cot current chunk, acc...)
	join        *mlmodel.Exec            // (example mask, [dropout mask], spike chunks...) -> (h = spikes·mask, rate sum)
	joinEval    *mlmodel.Exec            // (example mask, spike chunks...) -> (spikes, rate sum)
	concat      *mlmodel.Exec            // (chunks...) -> concatenation along time
	masks       map[string]*mlmodel.Exec // (key uint32) -> per-step dropout mask [batch, T, out...], by its dimensions
	synParams   []string                 // the synapse's trainable variables, in synapseVJP's output order
	neurParams  []*mlmodel.Variable      // the neurons' trainable variables, in vjp's accumulator order
	fusedExecs                           // the fused engine's graphs (fused.go)
	eventExecs                           // the fused engine's event-driven dense synapse (events.go)
}

// newChunked returns the engine name that runs each block's recurrence as rec says, chunk steps per call
// (0: DefaultChunk(T)).
func newChunked(name string, backend compute.Backend, scope *mlmodel.Scope, net model.Net, chunk int, rec recurrence) (*chunked, error) {
	e := &chunked{name: name, backend: backend, net: net, scope: scope, chunk: chunk, rec: rec, times: timer{}, withDropout: net.Dropout > 0}
	for i, b := range net.Blocks {
		be, err := e.buildBlock(backend, i, b)
		if err == nil && rec.kernel {
			err = e.buildFused(backend, be)
		}
		if err == nil && rec.kernel && b.Dense {
			err = e.buildEvents(backend, i, be)
		}
		if err != nil {
			e.Close()
			return nil, err
		}
		e.blocks = append(e.blocks, be)
	}
	var err error
	// The fused kernel takes a cotangent that is constant over time as [batch, N], so the head need not
	// write (nor the kernel read) the [batch, T, N] broadcast of it: 205 MB a step at the sMNIST shape.
	e.constCot = rec.kernel && timeConstantCotangent(net)
	e.timeSum = rec.kernel && net.Classes > 0 && (net.Readout == model.ReadoutMean || net.Readout == model.ReadoutSum)
	// (h, labels, mask) -> (lossSum, correct, cot h [batch, T, d...] or [batch, 1, d...] (constCot), readout
	// gradients...).
	e.head, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, h, labels, mask *Node) []*Node {
		scope := e.scope
		neuron.SetTraining(scope, h.Graph(), true)
		lossSum, correct := net.Loss(net.Head(scope, h), h, labels, mask)
		loss := Div(lossSum, MaxScalar(ReduceAllSum(mask), 1))
		vars := TrainableIn(scope, scope.At("%s", model.ReadoutScope).Scope())
		e.readout = names(vars)
		wrt := []*Node{h}
		for _, v := range vars {
			wrt = append(wrt, v.NodeValue(h.Graph()))
		}
		grads := Gradient(loss, wrt...)
		if e.constCot {
			grads[0] = Slice(grads[0], AxisRange(), AxisElem(0)) // every step's is the same
		}
		return append([]*Node{lossSum, correct}, grads...)
	})
	if err != nil {
		e.Close()
		return nil, err
	}
	e.score, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, h, labels, mask *Node) []*Node {
		scope := e.scope
		neuron.SetTraining(scope, h.Graph(), false)
		lossSum, correct := net.Loss(net.Head(scope, h), h, labels, mask)
		return []*Node{lossSum, correct}
	})
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// synapseVars returns the trainable variables of a block's synapse: those of its scope outside its
// neurons' scope.
func synapseVars(scope *mlmodel.Scope, b model.Block) []*mlmodel.Variable {
	bctx := scope.At("%s", b.Scope)
	neur := bctx.At("neuron").Scope()
	var out []*mlmodel.Variable
	for _, v := range TrainableIn(scope, bctx.Scope()) {
		if !inScope(v.Scope(), neur) {
			out = append(out, v)
		}
	}
	return out
}

func (e *chunked) buildBlock(backend compute.Backend, i int, b model.Block) (*blockExecs, error) {
	be := &blockExecs{b: b, states: neuron.StateComponents(b.Neuron)}
	n := be.states
	var err error
	if be.synapse, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, h *Node) *Node {
		scope := e.scope
		return b.Synapse(scope.At("%s", b.Scope), h)
	}); err != nil {
		return nil, err
	}
	if be.synapseVJP, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, h, cot *Node) []*Node {
		scope := e.scope
		bctx := scope.At("%s", b.Scope)
		cur := b.Synapse(bctx, h)
		vars := synapseVars(scope, b)
		be.synParams = names(vars)
		wrt := make([]*Node, 0, len(vars)+1)
		for _, v := range vars {
			wrt = append(wrt, v.NodeValue(h.Graph()))
		}
		wantInput := i > 0 && b.InputCotangent == nil
		if wantInput {
			wrt = append(wrt, h)
		}
		grads := Gradient(ReduceAllSum(Mul(cur, cot)), wrt...)
		if i > 0 && b.InputCotangent != nil {
			grads = append(grads, b.InputCotangent(bctx, h, cot))
		}
		return grads
	}); err != nil {
		return nil, err
	}
	if be.forward, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, in []*Node) []*Node {
		scope := e.scope
		cur := sliceTime(in[0], in[1], e.k)
		spikes, final, _ := e.rec.forward(scope.At("%s", b.Scope).At("neuron"), b.Neuron, cur, in[2:])
		return append([]*Node{spikes}, final...)
	}); err != nil {
		return nil, err
	}
	if e.rec.saves {
		if be.forwardSave, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, in []*Node) []*Node {
			cur := sliceTime(in[0], in[1], e.k)
			spikes, final, saved := e.rec.forward(e.scope.At("%s", b.Scope).At("neuron"), b.Neuron, cur, in[2:])
			return append(append([]*Node{spikes}, final...), saved)
		}); err != nil {
			return nil, err
		}
	}
	nctx := e.scope.At("%s", b.Scope).At("neuron")
	if be.vjp, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, in []*Node) []*Node {
		scope := e.scope
		cur := sliceTime(in[0], in[1], e.k)
		cotSpikes := sliceTime(in[2], in[1], e.k)
		rest := in[3:]
		if e.withDropout {
			drop := rest[0] // time-shared [batch, 1, out...], or per step [batch, T, out...]: the chunk's part
			if drop.Shape().Dimensions[1] != 1 {
				drop = sliceTime(drop, in[1], e.k)
			}
			cotSpikes = Mul(cotSpikes, drop) // h = spikes·mask, so cot spikes = cot h·mask
			rest = rest[1:]
		}
		state, rest := rest[:n], rest[n:]
		var saved *Node // the steps the forward saved; nil: recomputed
		if e.rec.saves {
			saved, rest = rest[0], rest[1:]
		}
		cotFinal, acc := rest[:n], rest[n:]
		grads := e.rec.vjp(scope.At("%s", b.Scope).At("neuron"), b.Neuron, be.neurParams, cur, state, saved, cotSpikes, cotFinal)
		outs := grads[:n+1]
		for j := range be.neurParams {
			outs = append(outs, Add(acc[j], grads[n+1+j]))
		}
		return outs
	}); err != nil {
		return nil, err
	}
	be.neurParams = TrainableIn(e.scope, nctx.Scope())
	join := func(mask, drop *Node, parts []*Node) []*Node {
		s := parts[0]
		if len(parts) > 1 {
			s = Concatenate(parts, 1)
		}
		return []*Node{model.ApplyMask(s, drop), model.RateSum(s, mask)}
	}
	if be.join, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, in []*Node) []*Node {
		if e.withDropout {
			return join(in[0], in[1], in[2:])
		}
		return join(in[0], nil, in[1:])
	}); err != nil {
		return nil, err
	}
	if be.joinEval, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, in []*Node) []*Node {
		return join(in[0], nil, in[1:])
	}); err != nil {
		return nil, err
	}
	be.concat, err = mlmodel.NewExec(backend, e.scope.Store(), func(_ *mlmodel.Scope, parts []*Node) *Node {
		if len(parts) == 1 {
			return Identity(parts[0])
		}
		return Concatenate(parts, 1)
	})
	return be, err
}

// layerCoefficients returns the per-step coefficients of the layer whose variables are in scope, for its
// current cur [batch, time, out...].
func layerCoefficients(scope *mlmodel.Scope, cfg neuron.Config, cur *Node) neuron.Coefficients {
	pshape, err := neuron.ParamShape(cur.Shape().Dimensions, cfg.ChannelShared)
	if err != nil {
		panic(err)
	}
	return neuron.LayerCoefficients(scope, cur.Graph(), cur.DType(), cfg, pshape)
}

// sliceTime returns x[:, t0:t0+k, ...] for x [batch, time, ...] and an int32 scalar t0.
func sliceTime(x, t0 *Node, k int) *Node {
	g := x.Graph()
	starts := make([]*Node, x.Rank())
	for i := range starts {
		starts[i] = Const(g, int32(0))
	}
	starts[1] = t0
	dims := x.Shape().Clone().Dimensions
	dims[1] = k
	return DynamicSlice(x, starts, dims)
}

func (e *chunked) Name() string { return e.name }

// prepare fixes the chunk length at the first call and checks T at the later ones.
func (e *chunked) prepare(steps int) error {
	if e.k == 0 {
		e.k = e.chunk
		if e.rec.saves {
			e.k = steps
		}
		if e.k == 0 {
			e.k = DefaultChunk(steps)
		}
		if steps%e.k != 0 {
			k := e.k
			e.k = 0
			return fmt.Errorf("step: chunk %d does not divide T = %d", k, steps)
		}
		for c := range steps / e.k {
			e.starts = append(e.starts, tensors.FromScalar(int32(c*e.k)))
		}
		return nil
	}
	if len(e.starts)*e.k != steps {
		return fmt.Errorf("step: T = %d differs from the first call's %d", steps, len(e.starts)*e.k)
	}
	return nil
}

// zeroState returns a block's zero neuron state for a batch.
func (e *chunked) zeroState(be *blockExecs, batch int) []*tensors.Tensor {
	z := make([]*tensors.Tensor, be.states)
	dims := append([]int{batch}, be.b.OutDims...)
	for j := range z {
		z[j] = tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
	}
	e.mem.keep(z...)
	return z
}

// forwardPass runs every block forward, with the dropout masks drop (a training step's; the zero value in
// evaluation). It returns each block's input h (x first, then each block's output after dropout), each
// block's current, the starting state of every chunk (when save), and the rate sums.
func (e *chunked) forwardPass(b Batch, drop dropouts, training, save bool) (hs, curs []*tensors.Tensor, saved [][][]*tensors.Tensor, rates []float64, err error) {
	dims := b.inputDims()
	batch, steps := dims[0], dims[1]
	if !e.rec.kernel {
		if err = e.prepare(steps); err != nil {
			return
		}
	}
	hs = []*tensors.Tensor{b.X} // nil when the first block's synapse reads b.Events
	e.reduced, e.steps = false, steps
	saved = make([][][]*tensors.Tensor, len(e.blocks))
	density := 1.0 // the fraction of nonzero entries of the block's input (fused engine)
	var given *events.Recorded
	switch {
	case b.X == nil:
		given, density = &b.Events.Rec, b.Events.Rec.Density()
		if !e.useEvents(e.blocks[0], dims, density) {
			if hs[0], err = e.denseInput(b.Events); err != nil {
				return
			}
			given = nil
		}
	case e.rec.kernel && len(e.blocks) > 0 && e.blocks[0].b.Dense:
		if err = hostViews([]*tensors.Tensor{b.X}, func(v [][]float32) error {
			density = events.Density(v[0])
			return nil
		}); err != nil {
			return
		}
	}
	for i, be := range e.blocks {
		var outs []*tensors.Tensor
		var cur *tensors.Tensor
		be.rankX = nil
		if e.rankOne(i, be, b.X) {
			// The kernels compute the current from x themselves: curs[0] stays nil.
			be.rankX, be.eventDriven = b.X, false
			var h *tensors.Tensor
			var rate float64
			if h, rate, density, err = e.fusedForward(be, nil, b.Mask, drop.host(i), training && e.selectable(i), false); err != nil {
				return
			}
			curs = append(curs, nil)
			hs = append(hs, h)
			rates = append(rates, rate)
			continue
		}
		be.filled = false
		inDims := dims
		if i > 0 || given == nil {
			inDims = hs[i].Shape().Dimensions
		}
		if e.fillable(i, be, inDims, density, training) {
			// The kernels compute the current from the input's events one batch element at a time: curs[i]
			// stays nil.
			var g *events.Recorded
			if i == 0 {
				g = given
			}
			if err = e.fillForward(be, hs[i], g, dims, training); err != nil {
				return
			}
			reduce := e.timeSum && i == len(e.blocks)-1
			var h *tensors.Tensor
			var rate float64
			if h, rate, density, err = e.fusedForward(be, nil, b.Mask, drop.host(i), training && e.selectable(i), reduce); err != nil {
				return
			}
			e.reduced = reduce
			curs = append(curs, nil)
			hs = append(hs, h)
			rates = append(rates, rate)
			continue
		}
		if i == 0 && given != nil {
			cur, err = e.synapseForwardGiven(be, dims, given)
		} else {
			cur, err = e.synapseForward(be, hs[i], density, training)
		}
		if err != nil {
			return
		}
		curs = append(curs, cur)
		if e.rec.kernel {
			// The kernel applies the dropout mask and counts the spikes itself: no join graph.
			var h *tensors.Tensor
			var rate float64
			reduce := e.timeSum && i == len(e.blocks)-1
			if h, rate, density, err = e.fusedForward(be, cur, b.Mask, drop.host(i), training && e.selectable(i), reduce); err != nil {
				return
			}
			e.reduced = reduce
			hs = append(hs, h)
			rates = append(rates, rate)
			continue
		}
		var parts []any
		if parts, saved[i], err = e.chunkForward(be, cur, batch, save); err != nil {
			return
		}
		args := []any{b.Mask}
		exec := be.joinEval
		if training {
			exec = be.join
			if m := drop.graph(i); m != nil {
				args = append(args, m)
			}
		}
		if outs, err = e.times.exec(exec, append(args, parts...)...); err != nil {
			return
		}
		e.mem.keep(outs[0])
		hs = append(hs, outs[0])
		var r []float64
		if r, err = scalars(outs[1:2]); err != nil {
			return
		}
		rates = append(rates, r[0])
	}
	return
}

// dropouts are a training step's dropout masks as the engine reads them, one per block: tensors applied by
// the graphs ([batch, 1, OutDims...] time-shared or [batch, T, OutDims...] per step), or, for the fused
// engine, the kernel's descriptors. The zero value is no dropout.
type dropouts struct {
	graphs []*tensors.Tensor
	hosts  []*fused.Dropout
}

func (d dropouts) graph(i int) *tensors.Tensor {
	if i < len(d.graphs) {
		return d.graphs[i]
	}
	return nil
}

func (d dropouts) host(i int) *fused.Dropout {
	if i < len(d.hosts) {
		return d.hosts[i]
	}
	return nil
}

// dropout returns the dropout masks of training batch b: none without dropout; for the fused engine the
// kernel's descriptors (the time-shared masks copied to the host, or the key of each block's per-step mask,
// which the kernel regenerates); for the other engines the mask tensors: per-step ones drawn on the device
// from their keys (deviceStepMasks, freed with the call's arena), time-shared ones the batch's.
func (e *chunked) dropout(b Batch) (dropouts, error) {
	var d dropouts
	if !e.withDropout {
		return d, nil
	}
	if !e.rec.kernel && e.net.StepDropout() {
		masks, err := e.deviceStepMasks(b)
		e.mem.keep(masks...)
		d.graphs = masks
		return d, err
	}
	if !e.rec.kernel {
		masks, owned, err := graphMasks(e.net, b)
		if owned {
			e.mem.keep(masks...)
		}
		d.graphs = masks
		return d, err
	}
	d.hosts = make([]*fused.Dropout, len(e.blocks))
	for i := range d.hosts {
		if e.net.StepDropout() {
			d.hosts[i] = &fused.Dropout{Key: b.StepMasks.Key(i), P: e.net.Dropout}
			continue
		}
		shared, err := tensors.CopyFlatData[float32](b.Dropout[i])
		if err != nil {
			return d, err
		}
		d.hosts[i] = &fused.Dropout{Shared: shared}
	}
	return d, nil
}

// deviceStepMasks draws the per-step dropout masks of training batch b on the device, one [batch, T,
// OutDims...] tensor per block, each from its fits/dropmask key (dropmask.MaskGraph: the values
// StepMasks.Tensors draws on the host), so only a scalar per block goes from the host to the device.
func (e *chunked) deviceStepMasks(b Batch) ([]*tensors.Tensor, error) {
	d := b.inputDims()
	masks := make([]*tensors.Tensor, 0, len(e.blocks))
	for i, be := range e.blocks {
		dims := append([]int{d[0], d[1]}, be.b.OutDims...)
		name := fmt.Sprint(dims)
		exec := be.masks[name]
		if exec == nil {
			var err error
			if exec, err = mlmodel.NewExec(e.backend, e.scope.Store(), func(_ *mlmodel.Scope, key *Node) *Node {
				return dropmask.MaskGraph(key, e.net.Dropout, dims...)
			}); err != nil {
				return masks, err
			}
			if be.masks == nil {
				be.masks = map[string]*mlmodel.Exec{}
			}
			be.masks[name] = exec
		}
		outs, err := e.times.exec(exec, tensors.FromScalar(b.StepMasks.Key(i)))
		if err != nil {
			return masks, err
		}
		masks = append(masks, outs[0])
	}
	return masks, nil
}

// chunkForward runs a block's recurrence over its current chunk by chunk from the zero state and returns
// the spikes of each chunk and, when save, the state each chunk starts from.
func (e *chunked) chunkForward(be *blockExecs, cur *tensors.Tensor, batch int, save bool) (parts []any, saved [][]*tensors.Tensor, err error) {
	chunks := len(e.starts)
	state := e.zeroState(be, batch)
	parts = make([]any, chunks)
	if save {
		saved = make([][]*tensors.Tensor, chunks)
	}
	for c := range chunks {
		var outs []*tensors.Tensor
		exec := be.forward
		if e.rec.saves && save {
			exec = be.forwardSave
		}
		if outs, err = e.times.exec(exec, append([]any{cur, e.starts[c]}, asAny(state)...)...); err != nil {
			return
		}
		e.mem.keep(outs...)
		if save {
			saved[c] = state
		}
		if exec == be.forwardSave {
			// The loop engine's saved steps travel with the chunk's starting state to its VJP.
			saved[c] = append(slices.Clone(state), outs[len(outs)-1])
			outs = outs[:len(outs)-1]
		}
		parts[c] = outs[0]
		state = outs[1:]
	}
	return parts, saved, nil
}

func (e *chunked) Gradients(b Batch) (m Metrics, grads map[string]*tensors.Tensor, err error) {
	if err = checkBatch(e.net, b, true); err != nil {
		return
	}
	defer e.mem.free()
	drop, err := e.dropout(b)
	if err != nil {
		return
	}
	hs, curs, saved, rates, err := e.forwardPass(b, drop, true, true)
	if err != nil {
		return
	}
	outs, err := e.times.exec(e.head, hs[len(hs)-1], labelsOf(b), b.Mask)
	if err != nil {
		return
	}
	vals, err := scalars(outs[:2])
	if err != nil {
		return
	}
	m = Metrics{LossSum: vals[0], Correct: vals[1], Rates: rates}
	grads = map[string]*tensors.Tensor{}
	defer func() {
		if err != nil {
			for _, t := range grads {
				_ = t.FinalizeAll()
			}
			grads = nil
		}
	}()
	cot := outs[2]
	e.mem.keep(cot)
	if e.reduced && e.net.Readout == model.ReadoutMean {
		if cot, err = e.meanCotangent(cot); err != nil {
			return
		}
	}
	for j, name := range e.readout {
		grads[name] = outs[3+j]
	}
	batch := b.inputDims()[0]
	for i := len(e.blocks) - 1; i >= 0; i-- {
		be := e.blocks[i]
		if e.rec.kernel {
			var prev *blockExecs
			if i > 0 {
				prev = e.blocks[i-1]
			}
			be.consumed = (curs[i] != nil || be.filled) && e.consumable(be, i, hs[i], prev)
			if be.filled && !be.consumed {
				err = fmt.Errorf("step: block %s computed its current from events but cannot consume its cotangent", be.b.Scope)
				return
			}
			if be.consumed {
				if cot, err = e.consumedBackward(be, i, curs[i], hs[i], cot, drop.host(i), prev, grads); err != nil {
					return
				}
				continue
			}
			var cotCur *tensors.Tensor
			if cotCur, err = e.fusedBackward(be, curs[i], cot, drop.host(i), grads); err != nil {
				return
			}
			if be.rankX != nil {
				continue // a rank-one first layer: fusedBackward gave its synapse's gradients
			}
			if be.eventDriven {
				cot, err = e.eventsBackward(be, i, hs[i], cotCur, prev, grads)
			} else {
				cot, err = e.synapseBackward(be, i, hs[i], cotCur, grads)
			}
			if err != nil {
				return
			}
			continue
		}
		acc := make([]*tensors.Tensor, len(be.neurParams))
		for j, v := range be.neurParams {
			acc[j] = tensors.FromShape(v.Shape())
		}
		cotState := e.zeroState(be, batch)
		cotParts := make([]any, len(e.starts))
		for c := len(e.starts) - 1; c >= 0; c-- {
			args := []any{curs[i], e.starts[c], cot}
			if m := drop.graph(i); m != nil {
				args = append(args, m)
			}
			args = append(args, asAny(saved[i][c])...)
			args = append(args, asAny(cotState)...)
			args = append(args, asAny(acc)...)
			var outs []*tensors.Tensor
			if outs, err = e.times.exec(be.vjp, args...); err != nil {
				return
			}
			for _, t := range acc {
				_ = t.FinalizeAll()
			}
			n := be.states
			cotState, cotParts[c], acc = outs[:n], outs[n], outs[n+1:]
			e.mem.keep(outs[:n+1]...)
		}
		for j, v := range be.neurParams {
			grads[v.Path()] = acc[j]
		}
		var outs []*tensors.Tensor
		if outs, err = e.times.exec(be.concat, cotParts...); err != nil {
			return
		}
		e.mem.keep(outs[0])
		if cot, err = e.synapseBackward(be, i, hs[i], outs[0], grads); err != nil {
			return
		}
	}
	return m, grads, nil
}

// synapseBackward adds the gradients of block i's synapse variables to grads, given the block's input h and
// the cotangent of its current, and returns the cotangent of h (nil for the first block).
func (e *chunked) synapseBackward(be *blockExecs, i int, h, cotCur *tensors.Tensor, grads map[string]*tensors.Tensor) (*tensors.Tensor, error) {
	outs, err := e.times.exec(be.synapseVJP, h, cotCur)
	if err != nil {
		return nil, err
	}
	for j, name := range be.synParams {
		grads[name] = outs[j]
	}
	if i == 0 {
		return nil, nil
	}
	cot := outs[len(be.synParams)]
	e.mem.keep(cot)
	return cot, nil
}

func (e *chunked) Evaluate(b Batch) (Metrics, error) {
	if err := checkBatch(e.net, b, false); err != nil {
		return Metrics{}, err
	}
	defer e.mem.free()
	hs, _, _, rates, err := e.forwardPass(b, dropouts{}, false, false)
	if err != nil {
		return Metrics{}, err
	}
	outs, err := e.times.exec(e.score, hs[len(hs)-1], labelsOf(b), b.Mask)
	if err != nil {
		return Metrics{}, err
	}
	vals, err := scalars(outs)
	if err != nil {
		return Metrics{}, err
	}
	return Metrics{LossSum: vals[0], Correct: vals[1], Rates: rates}, nil
}

func (e *chunked) CompileSeconds() float64 { return e.times.compileSeconds() }

// Execs returns the engine's compiled graphs.
func (e *chunked) execs() []*mlmodel.Exec {
	var out []*mlmodel.Exec
	for _, x := range []*mlmodel.Exec{e.head, e.score} {
		if x != nil {
			out = append(out, x)
		}
	}
	for _, be := range e.blocks {
		out = append(out, be.synapse, be.synapseVJP, be.forward, be.forwardSave, be.vjp, be.join, be.joinEval, be.concat)
		for _, x := range be.masks {
			out = append(out, x)
		}
	}
	return out
}

func (e *chunked) Close() {
	e.mem.free()
	for _, be := range e.blocks {
		be.hOut.free()
		be.curOut.free()
		be.cotIn.free()
	}
	for _, slot := range e.cotSlots {
		slot.free()
	}
	for _, x := range e.execs() {
		if x != nil {
			x.Finalize()
		}
	}
}
