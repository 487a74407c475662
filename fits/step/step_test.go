package step

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/events"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

func testBackend(t testing.TB) compute.Backend { return xlatest.XLA(t) }

// batchOf returns a deterministic batch: inputs in [0, 2) strong enough to make the neurons spike, labels
// cycling over the classes, and the last `padded` examples masked out.
func batchOf(batch, steps int, inputDims []int, classes, padded int) Batch {
	n := batch * steps
	for _, d := range inputDims {
		n *= d
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((i*7919)%13) / 6.5
	}
	labels := make([]int32, batch)
	mask := make([]float32, batch)
	for i := range labels {
		labels[i] = int32(i % max(classes, 1))
		if i < batch-padded {
			mask[i] = 1
		}
	}
	return Batch{
		X:      tensors.FromFlatDataAndDimensions(x, append([]int{batch, steps}, inputDims...)...),
		Labels: tensors.FromFlatDataAndDimensions(labels, batch),
		Mask:   tensors.FromFlatDataAndDimensions(mask, batch),
	}
}

type engineCase struct {
	name  string
	net   model.Net
	steps int
	chunk int
}

func feedForwardNet(kind neuron.Kind, m int, readout model.Readout, dropout float64) model.Net {
	cfg := model.DefaultConfig(kind, m, 5, 3)
	cfg.Readout, cfg.Dropout = readout, dropout
	return cfg.Net(4)
}

// sharedDropout returns net with time-shared dropout masks (model.DropoutShared).
func sharedDropout(net model.Net) model.Net {
	net.DropoutMode = model.DropoutShared
	return net
}

func convNet(kind neuron.Kind, m int, dropout float64) model.Net {
	cfg := model.DefaultConvConfig(kind, m)
	cfg.Channels, cfg.Kernel, cfg.Pool, cfg.Hidden, cfg.Classes, cfg.Dropout = []int{2}, 3, 2, 4, 3, dropout
	net, err := cfg.Net([]int{2, 4, 4})
	if err != nil {
		panic(err)
	}
	return net
}

// TestEnginesMatchUnrolled holds the chunked, stepwise, scan, fused and loop engines to the unrolled oracle: the
// same loss, metrics and gradient of every trainable variable (within float32 rounding) on one training step,
// with padded examples, for every readout, without dropout and with per-step (the default) and time-shared
// dropout, for the feedforward and the conv network; and the same metrics in evaluation.
func TestEnginesMatchUnrolled(t *testing.T) {
	b := testBackend(t)
	cases := []engineCase{
		{"lif/mean", feedForwardNet(neuron.LIF, 0, model.ReadoutMean, 0), 6, 2},
		{"fsts2/mean/dropout-step", feedForwardNet(neuron.FSTS, 2, model.ReadoutMean, 0.5), 6, 3},
		{"fs/li-max/dropout-step", feedForwardNet(neuron.FS, 0, model.ReadoutLIMax, 0.3), 6, 2},
		{"fsts2/mean/dropout-shared", sharedDropout(feedForwardNet(neuron.FSTS, 2, model.ReadoutMean, 0.5)), 6, 3},
		{"adaptlif/li-mean", feedForwardNet(neuron.AdaptLIF, 0, model.ReadoutLIMean, 0), 6, 0},
		{"conv/fsts1/dropout-step", convNet(neuron.FSTS, 1, 0.25), 4, 2},
		{"conv/fsts1/dropout-shared", sharedDropout(convNet(neuron.FSTS, 1, 0.25)), 4, 2},
	}
	if testing.Short() {
		cases = cases[:2]
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { matchUnrolled(t, b, tc, enginesBut(Unrolled)...) })
	}
}

// TestFusedEngineEveryKind holds the fused engine (the host kernel of fits/fused) to the unrolled oracle
// for every registered neuron kind, TS order 3 and the detached reset.
func TestFusedEngineEveryKind(t *testing.T) {
	b := testBackend(t)
	var cases []engineCase
	for _, kind := range neuron.Kinds() {
		m := 0
		if kind == neuron.FSTS {
			m = 3
		}
		cases = append(cases, engineCase{fmt.Sprintf("%s/M=%d", kind, m), feedForwardNet(kind, m, model.ReadoutMean, 0), 7, 0})
	}
	detached := feedForwardNet(neuron.FSTS, 1, model.ReadoutLIMean, 0.2)
	for i := range detached.Blocks {
		detached.Blocks[i].Neuron.DetachReset = true
	}
	cases = append(cases, engineCase{"fsts/M=1/detach-reset", detached, 5, 0})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { matchUnrolled(t, b, tc, Fused) })
	}
}

// TestLoopEngineEveryKind holds the loop engine (the recurrence and its adjoint as XLA While loops) to the
// unrolled oracle for every registered neuron kind at every TS order it takes up to 3 (M = 1, 2, 3 for the
// kinds with a TS module, M = 0 for the others), both λ-mix nestings, per-step dropout, every readout and
// the detached reset, on batches with padded examples.
func TestLoopEngineEveryKind(t *testing.T) {
	b := testBackend(t)
	readouts := model.Readouts()
	var cases []engineCase
	i := 0
	for _, kind := range neuron.Kinds() {
		orders := []int{0}
		if kind.CheckOrder(0) != nil {
			orders = []int{1, 2, 3}
		}
		for _, m := range orders {
			net := feedForwardNet(kind, m, readouts[i%len(readouts)], 0.2*float64(i%2))
			i++
			cases = append(cases, engineCase{fmt.Sprintf("%s/M=%d/%s", kind, m, net.Readout), net, 7, 0})
			if m >= 2 {
				paper := feedForwardNet(kind, m, model.ReadoutMean, 0.3)
				for j := range paper.Blocks {
					paper.Blocks[j].Neuron.TSMix = neuron.TSMixPaper
				}
				cases = append(cases, engineCase{fmt.Sprintf("%s/M=%d/paper-nesting", kind, m), paper, 6, 0})
			}
		}
	}
	detached := feedForwardNet(neuron.FSTS, 1, model.ReadoutLIMean, 0.2)
	for i := range detached.Blocks {
		detached.Blocks[i].Neuron.DetachReset = true
	}
	cases = append(cases, engineCase{"fsts/M=1/detach-reset", detached, 5, 0})
	if testing.Short() {
		cases = cases[:3]
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { matchUnrolled(t, b, tc, Loop) })
	}
}

// matchUnrolled compares one training step (loss, metrics, every gradient) and one evaluation of the
// engines names with the unrolled engine's, on a batch of 6 with 2 padded examples.
func matchUnrolled(t *testing.T, b compute.Backend, tc engineCase, names ...string) {
	t.Helper()
	scope := mlmodel.NewStore().RootScope()
	if err := scope.Store().SetRNGStateFromSeed(7); err != nil {
		t.Fatal(err)
	}
	mctx := scope.At("model")
	if err := InitVariables(b, mctx, tc.net); err != nil {
		t.Fatal(err)
	}
	nonzeroBiases(t, mctx)
	batch := batchOf(6, tc.steps, tc.net.InputDims, tc.net.Classes, 2)
	drawMasks(t, b, scope, tc.net, &batch)
	if step := tc.net.StepDropout(); (tc.net.Dropout > 0 && !step) != (batch.Dropout != nil) || step != (batch.StepMasks != nil) {
		t.Fatalf("masks drawn: %d time-shared, per step %v; dropout %g, mode %q", len(batch.Dropout), batch.StepMasks, tc.net.Dropout, tc.net.DropoutMode)
	}
	want, wantGrads, wantEval := run(t, Unrolled, b, mctx, tc.net, batch, 0)
	for _, name := range names {
		got, gotGrads, gotEval := run(t, name, b, mctx, tc.net, batch, tc.chunk)
		compareMetrics(t, name+" step", got, want)
		compareMetrics(t, name+" eval", gotEval, wantEval)
		if len(gotGrads) != len(wantGrads) || len(wantGrads) == 0 {
			t.Fatalf("%s: %d gradients, unrolled %d", name, len(gotGrads), len(wantGrads))
		}
		for v, w := range wantGrads {
			g, ok := gotGrads[v]
			if !ok {
				t.Fatalf("%s: no gradient for %s", name, v)
			}
			if err := close32(g, w, 2e-4, 2e-6); err != nil {
				t.Errorf("%s: gradient of %s: %v", name, v, err)
			}
		}
	}
}

// nonzeroBiases sets every variable named "biases" to small nonzero values (they start at zero), so that
// the comparisons exercise how each engine adds them.
func nonzeroBiases(t *testing.T, scope *mlmodel.Scope) {
	t.Helper()
	for v := range scope.Store().IterVariables() {
		if v.Name() != "biases" {
			continue
		}
		vals := make([]float32, v.Shape().Size())
		for i := range vals {
			vals[i] = 0.05 * float32(math.Sin(float64(i)+1))
		}
		if err := v.SetValue(tensors.FromFlatDataAndDimensions(vals, v.Shape().Dimensions...)); err != nil {
			t.Fatal(err)
		}
	}
}

// run returns one training step's metrics and gradients (copied to the host) and an evaluation's metrics.
// drawMasks draws the dropout masks of net's training step into batch (seed 11, step 5), as the
// training loop does, and closes their graphs when t ends.
func drawMasks(t *testing.T, b compute.Backend, scope *mlmodel.Scope, net model.Net, batch *Batch) {
	t.Helper()
	masks, err := NewMasks(b, scope, net, 11)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(masks.Close)
	if err := masks.Draw(batch, 5); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, name string, b compute.Backend, scope *mlmodel.Scope, net model.Net, batch Batch, chunk int) (Metrics, map[string][]float32, Metrics) {
	t.Helper()
	e, err := New(name, b, scope, net, Options{Chunk: chunk})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, grads, err := e.Gradients(batch)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	host := map[string][]float32{}
	for v, g := range grads {
		if host[v], err = tensors.CopyFlatData[float32](g); err != nil {
			t.Fatal(err)
		}
		g.MustFinalizeAll()
	}
	ev, err := e.Evaluate(Batch{X: batch.X, Events: batch.Events, Labels: batch.Labels, Mask: batch.Mask})
	if err != nil {
		t.Fatalf("%s evaluate: %v", name, err)
	}
	if e.Name() != name {
		t.Errorf("engine %q reports name %q", name, e.Name())
	}
	return m, host, ev
}

func compareMetrics(t *testing.T, what string, got, want Metrics) {
	t.Helper()
	if !near(got.LossSum, want.LossSum, 1e-5, 1e-6) || got.Correct != want.Correct || len(got.Rates) != len(want.Rates) {
		t.Fatalf("%s: got %+v, unrolled %+v", what, got, want)
	}
	for i := range got.Rates {
		if !near(got.Rates[i], want.Rates[i], 1e-5, 1e-7) {
			t.Fatalf("%s: rates %v, unrolled %v", what, got.Rates, want.Rates)
		}
	}
}

func near(a, b, rel, abs float64) bool { return math.Abs(a-b) <= abs+rel*math.Abs(b) }

// close32 compares two gradients elementwise: |a−b| ≤ abs + rel·max|b| (relative to the tensor's scale, as
// float32 sums over batch and time round at that scale).
func close32(a, b []float32, rel, abs float64) error {
	if len(a) != len(b) {
		return fmt.Errorf("length %d vs %d", len(a), len(b))
	}
	scale := 0.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i := range a {
		if d := math.Abs(float64(a[i]) - float64(b[i])); d > abs+rel*scale || math.IsNaN(d) {
			return fmt.Errorf("element %d: %g vs %g (scale %g)", i, a[i], b[i], scale)
		}
	}
	return nil
}

func TestDefaultChunk(t *testing.T) {
	for _, tc := range []struct{ steps, want int }{{250, 5}, {100, 5}, {784, 4}, {50, 5}, {28, 4}, {5, 5}, {7, 1}, {29, 1}, {1, 1}} {
		if got := DefaultChunk(tc.steps); got != tc.want {
			t.Errorf("DefaultChunk(%d) = %d, want %d", tc.steps, got, tc.want)
		}
	}
}

// deviceBackend stands for a backend whose buffers live in device memory (CUDA): only its name and
// HasSharedBuffers are consulted by Default.
type deviceBackend struct {
	compute.Backend
	name string
}

func (d deviceBackend) Name() string           { return d.name }
func (d deviceBackend) HasSharedBuffers() bool { return false }

func TestDefault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend compute.Backend
		want    string
	}{
		{"no backend", nil, Chunked},
		{"XLA CPU (host memory)", testBackend(t), Fused},
		{"XLA on a device (CUDA)", deviceBackend{name: "xla"}, Loop},
		{"another backend on a device", deviceBackend{name: "other"}, Chunked},
	} {
		if got := Default(tc.backend); got != tc.want {
			t.Errorf("%s: Default = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	b := testBackend(t)
	net := feedForwardNet(neuron.LIF, 0, model.ReadoutMean, 0)
	if _, err := New("nosuch", b, mlmodel.NewStore().RootScope(), net, Options{}); err == nil {
		t.Error("unknown engine accepted")
	}
	if _, err := New(Chunked, b, mlmodel.NewStore().RootScope(), net, Options{Chunk: -1}); err == nil {
		t.Error("negative chunk accepted")
	}
	var unsupported *UnsupportedError
	for _, tb := range xlatest.Backends(t) {
		if tb.Name != "xla:cpu" {
			// The engines that need dynamic slices are refused before anything is built (GoMLX's "op
			// DynamicSlice not implemented" panic reached the user).
			for _, name := range []string{Loop, Chunked, Stepwise, Scan} {
				if _, err := New(name, tb.Backend, mlmodel.NewStore().RootScope(), net, Options{}); !errors.As(err, &unsupported) {
					t.Errorf("%s engine on %s, which has no dynamic slice: %v, want an UnsupportedError", name, tb.Name, err)
				}
			}
		}
	}
	m9 := feedForwardNet(neuron.FSTS, 9, model.ReadoutMean, 0)
	if _, err := New(Fused, b, mlmodel.NewStore().RootScope(), m9, Options{}); !errors.As(err, &unsupported) || !strings.Contains(err.Error(), "up to M = 8") {
		t.Errorf("fused engine with M = 9: %v, want an UnsupportedError naming the limit", err)
	}
	bad := net
	bad.Blocks = nil
	if _, err := New(Chunked, b, mlmodel.NewStore().RootScope(), bad, Options{}); err == nil {
		t.Error("network without blocks accepted")
	}
}

// TestFusedEventDrivenSynapse holds the fused engine to the unrolled oracle with every dense synapse
// computed event-driven (EventsMaxDensity above 1: even the dense first-layer input), with its current
// computed from events in cache (FilledCurrents) and its backward consuming the kernel's cotangent in cache
// (ConsumedCotangents), with neither, and with no synapse event-driven,
// for the feedforward network with dropout and the conv network (whose classifier block is dense), and
// checks that the event-driven and consumed paths ran where they were asked to.
func TestFusedEventDrivenSynapse(t *testing.T) {
	b := testBackend(t)
	saved := EventsMaxDensity
	defer func() { EventsMaxDensity = saved }()
	cases := []engineCase{
		{"fsts2/dropout-step", feedForwardNet(neuron.FSTS, 2, model.ReadoutMean, 0.5), 6, 0},
		{"fsts2/dropout-shared", sharedDropout(feedForwardNet(neuron.FSTS, 2, model.ReadoutMean, 0.5)), 6, 0},
		{"conv/fs", convNet(neuron.FS, 0, 0.25), 4, 0},
	}
	savedConsumed, savedFilled := ConsumedCotangents, FilledCurrents
	defer func() { ConsumedCotangents, FilledCurrents = savedConsumed, savedFilled }()
	for _, run := range []struct {
		threshold        float64
		consumed, filled bool
	}{{1.5, true, true}, {1.5, true, false}, {1.5, false, false}, {-1, true, true}} {
		threshold := run.threshold
		EventsMaxDensity, ConsumedCotangents, FilledCurrents = threshold, run.consumed, run.filled
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/max-density=%g/consumed=%v/filled=%v", tc.name, threshold, run.consumed, run.filled), func(t *testing.T) {
				matchUnrolled(t, b, tc, Fused)
				scope := mlmodel.NewStore().RootScope()
				mctx := scope.At("model")
				if err := InitVariables(b, mctx, tc.net); err != nil {
					t.Fatal(err)
				}
				e, err := New(Fused, b, mctx, tc.net, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				batch := batchOf(6, tc.steps, tc.net.InputDims, tc.net.Classes, 2)
				drawMasks(t, b, scope, tc.net, &batch)
				// A training step's event-driven forward records its input's events for the backward
				// (matchUnrolled held its gradients to the oracle); an evaluation records none.
				if _, _, err := e.Gradients(batch); err != nil {
					t.Fatal(err)
				}
				for i, be := range e.(*chunked).blocks {
					if recorded := be.recordedFor != nil; recorded != be.eventDriven {
						t.Errorf("block %d (%s): event-driven %v, events recorded %v", i, tc.net.Blocks[i].Scope, be.eventDriven, recorded)
					}
					// Every event-driven block's backward consumes its cotangent in cache: the first
					// needs no input cotangent, the others' predecessors wrote their selections.
					if want := run.consumed && be.eventDriven; be.consumed != want {
						t.Errorf("block %d (%s): backward consumed in cache %v, want %v", i, tc.net.Blocks[i].Scope, be.consumed, want)
					}
					if want := run.filled && be.eventDriven; be.filled != want {
						t.Errorf("block %d (%s): current computed from events in cache %v, want %v", i, tc.net.Blocks[i].Scope, be.filled, want)
					}
				}
				if _, err := e.Evaluate(Batch{X: batch.X, Labels: batch.Labels, Mask: batch.Mask}); err != nil {
					t.Fatal(err)
				}
				for i, be := range e.(*chunked).blocks {
					if want := threshold > 1 && tc.net.Blocks[i].Dense; be.eventDriven != want {
						t.Errorf("block %d (%s): event-driven %v, want %v", i, tc.net.Blocks[i].Scope, be.eventDriven, want)
					}
					if be.recordedFor != nil {
						t.Errorf("block %d (%s): an evaluation left events recorded", i, tc.net.Blocks[i].Scope)
					}
				}
			})
		}
	}
}

// enginesBut returns the registered engines (Names) without those named: the engine-equality tests cover
// every engine a file registers.
func enginesBut(names ...string) []string {
	return slices.DeleteFunc(Names(), func(n string) bool { return slices.Contains(names, n) })
}

// TestRegistry: Names lists every engine once, in its rank's order (the default on a backend without
// host-shared memory first), New and CheckSupported refuse an unknown name listing the valid ones.
func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{Chunked, Stepwise, Unrolled, Scan, Fused, Loop}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	b := testBackend(t)
	net := feedForwardNet(neuron.FSTS, 1, model.ReadoutMean, 0)
	if _, err := New("warp", b, mlmodel.NewStore().RootScope(), net, Options{}); err == nil || !strings.Contains(err.Error(), "valid: chunked, stepwise") {
		t.Errorf("New(warp): %v", err)
	}
	if err := CheckSupported("warp", b, net); err == nil {
		t.Error("CheckSupported(warp) accepted an unknown engine")
	}
}

// withInputEvents returns batch with its input given as events (Batch.Events) instead of X: what a caller
// holding spikes as bits passes to an engine that AcceptsInputEvents.
func withInputEvents(t *testing.T, net model.Net, batch Batch) Batch {
	t.Helper()
	dims := batch.X.Shape().Dimensions
	x, err := tensors.CopyFlatData[float32](batch.X)
	if err != nil {
		t.Fatal(err)
	}
	in := len(x) / (dims[0] * dims[1])
	ev := &InputEvents{Dims: dims}
	s := events.Shape{Rows: dims[0] * dims[1], In: in, Out: net.Blocks[0].OutDims[0]}
	if err := events.Record(s, &ev.Rec, func(r int, idx []int32, vals []float32) ([]int32, []float32) {
		for i, v := range x[r*in : (r+1)*in] {
			if v != 0 {
				idx, vals = append(idx, int32(i)), append(vals, v)
			}
		}
		return idx, vals
	}); err != nil {
		t.Fatal(err)
	}
	return Batch{Events: ev, Labels: batch.Labels, Mask: batch.Mask, Dropout: batch.Dropout, StepMasks: batch.StepMasks}
}

// TestFusedInputEvents holds the fused engine on a batch given as events (no X) to the same batch given as
// X, to the bit: metrics, every gradient and the evaluation, with the first block's synapse event-driven
// and (max density -1) expanded back to a dense input, with per-step, time-shared and no dropout. The
// unrolled engine, which reads X only, refuses such a batch, and AcceptsInputEvents says which take it.
func TestFusedInputEvents(t *testing.T) {
	b := testBackend(t)
	saved := EventsMaxDensity
	defer func() { EventsMaxDensity = saved }()
	nets := map[string]model.Net{
		"dropout-step":   feedForwardNet(neuron.FSTS, 1, model.ReadoutMean, 0.5),
		"dropout-shared": sharedDropout(feedForwardNet(neuron.FSTS, 2, model.ReadoutSum, 0.5)),
		"no-dropout":     feedForwardNet(neuron.FS, 0, model.ReadoutMean, 0),
	}
	for _, threshold := range []float64{0.3, -1} {
		EventsMaxDensity = threshold
		for name, net := range nets {
			t.Run(fmt.Sprintf("%s/max-density=%g", name, threshold), func(t *testing.T) {
				scope := mlmodel.NewStore().RootScope()
				mctx := scope.At("model")
				if err := InitVariables(b, mctx, net); err != nil {
					t.Fatal(err)
				}
				nonzeroBiases(t, mctx)
				dense := batchOf(6, 5, net.InputDims, net.Classes, 2)
				x, _ := tensors.CopyFlatData[float32](dense.X)
				for i := range x {
					if (i*31)%7 != 0 { // about one input in seven nonzero, as spikes
						x[i] = 0
					}
				}
				dense.X = tensors.FromFlatDataAndDimensions(x, dense.X.Shape().Dimensions...)
				drawMasks(t, b, scope, net, &dense)
				given := withInputEvents(t, net, dense)
				m, grads, ev := run(t, Fused, b, mctx, net, dense, 0)
				gm, ggrads, gev := run(t, Fused, b, mctx, net, given, 0)
				if !reflect.DeepEqual(gm, m) || !reflect.DeepEqual(gev, ev) {
					t.Errorf("metrics from events %+v, %+v; from X %+v, %+v", gm, gev, m, ev)
				}
				if !reflect.DeepEqual(ggrads, grads) {
					t.Error("gradients from events differ from those from X")
				}
				e, err := New(Fused, b, mctx, net, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				u, err := New(Unrolled, b, mctx, net, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer u.Close()
				if !AcceptsInputEvents(e) || AcceptsInputEvents(u) {
					t.Errorf("AcceptsInputEvents: fused %v, unrolled %v", AcceptsInputEvents(e), AcceptsInputEvents(u))
				}
				if _, _, err := u.Gradients(given); err == nil {
					t.Error("the unrolled engine took a batch without X")
				}
			})
		}
	}
}

// TestFusedRankOneInput holds the fused engine with a rank-one first layer (one input feature, as
// sequential MNIST has; RankOneInput) to the unrolled oracle, without dropout and with per-step and
// time-shared dropout, at a width that runs the order-1 assembly kernels and the groups after them (40),
// checks that the first block ran as rank one (and the others did not), that the head got the last block's
// time mean (chunked.timeSum), and that turning RankOneInput off gives the same step through the
// event-driven synapse.
func TestFusedRankOneInput(t *testing.T) {
	b := testBackend(t)
	oneInput := func(kind neuron.Kind, m int, dropout float64) model.Net {
		cfg := model.DefaultConfig(kind, m, 40, 3)
		cfg.Readout, cfg.Dropout = model.ReadoutMean, dropout
		return cfg.Net(1)
	}
	cases := []engineCase{
		{"fsts1", oneInput(neuron.FSTS, 1, 0), 9, 0},
		{"fsts1/dropout-step", oneInput(neuron.FSTS, 1, 0.3), 9, 0},
		{"fsts2/dropout-shared", sharedDropout(oneInput(neuron.FSTS, 2, 0.3)), 7, 0},
	}
	for _, rankOne := range []bool{true, false} {
		saved := RankOneInput
		RankOneInput = rankOne
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/rank-one=%v", tc.name, rankOne), func(t *testing.T) {
				matchUnrolled(t, b, tc, Fused)
				scope := mlmodel.NewStore().RootScope()
				mctx := scope.At("model")
				if err := InitVariables(b, mctx, tc.net); err != nil {
					t.Fatal(err)
				}
				e, err := New(Fused, b, mctx, tc.net, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				batch := batchOf(6, tc.steps, tc.net.InputDims, tc.net.Classes, 2)
				drawMasks(t, b, scope, tc.net, &batch)
				if _, _, err := e.Gradients(batch); err != nil {
					t.Fatal(err)
				}
				for i, be := range e.(*chunked).blocks {
					if want := rankOne && i == 0; (be.rankX != nil) != want {
						t.Errorf("block %d (%s): rank-one %v, want %v", i, tc.net.Blocks[i].Scope, be.rankX != nil, want)
					}
				}
				if !e.(*chunked).reduced {
					t.Error("the mean readout's head got the last block's whole output, not its time mean")
				}
			})
		}
		RankOneInput = saved
	}
}
