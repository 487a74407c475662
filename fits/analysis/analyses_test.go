package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	_ "github.com/fits-snn/fits/data/dvs"   // registers "dvsgesture", the name of the convolutional runs
	_ "github.com/fits-snn/fits/data/synth" // registers "synthetic", the dataset of the feedforward runs
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/fits/train"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
)

// trainedSeed is trainedRun for another seed of the same configuration (the same group).
func trainedSeed(t *testing.T, model string, m int, seed int64) string {
	t.Helper()
	cfg := tinyConfig(model, m)
	cfg.Seed = seed
	return trainedWith(t, fmt.Sprintf("%s-m%d-s%d", model, m, seed), cfg, nil)
}

// analyzeSeeds loads two seeds of the tiny FSTS M = 1 run (trainedRun, trainedSeed) and runs analyze on
// them: the runs and the report.
func analyzeSeeds[R any](t *testing.T, analyze func([]*Run) (R, error)) ([]*Run, R) {
	t.Helper()
	d1, _ := trainedRun(t, "fsts", 1)
	d2 := trainedSeed(t, "fsts", 1, 2)
	rs, err := LoadRuns([]string{d1, d2}, Options{Backend: testBackend(t)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analyze(rs)
	if err != nil {
		t.Fatal(err)
	}
	return rs, rep
}

// trainedWith trains (once per test binary) the run cfg under the given name, on ds when not nil.
func trainedWith(t *testing.T, name string, cfg train.Config, ds *data.Dataset) string {
	dir, _ := trainOnce(t, name, cfg, ds)
	return dir
}

// convDataset is a tiny event-frame task for the convolutional network: 6 bins of 20 ms of 2×16×16
// event counts, 3 classes (a blob in a class-dependent quadrant), 20 training and 6 test examples.
func convDataset() *data.Dataset {
	const T, H, W = 6, 16, 16
	rng := rand.New(rand.NewPCG(7, 8))
	mk := func(n int) *data.Set {
		in, labels := make([]float32, n*T*2*H*W), make([]int32, n)
		for i := range n {
			c := i % 3
			labels[i] = int32(c)
			for k := range T {
				for e := 0; e < 20; e++ {
					y, x := 4*c+rng.IntN(4), 4*c+rng.IntN(4)
					in[((i*T+k)*2+rng.IntN(2))*H*W+y*W+x]++
				}
			}
		}
		s := data.NewSet(in, labels, T, 2*H*W)
		s.FeatureShape = []int{2, H, W}
		return s
	}
	return &data.Dataset{Name: "dvsgesture", Classes: 3, Dt: 0.02, Train: mk(20), Test: mk(6)}
}

// convRun trains the convolutional FS+TS (M = 1) network one epoch with a learning rate so small that
// every neuron parameter stays within 1e-4 (relative) of its initial value, under val-split.
func convRun(t *testing.T) (string, *data.Dataset) {
	t.Helper()
	ds := convDataset()
	cfg := train.DefaultConfig()
	cfg.Dataset, cfg.Model, cfg.M, cfg.Width, cfg.Batch, cfg.Epochs, cfg.LR = "dvsgesture", "fsts", 1, 5, 8, 1, 1e-6
	cfg.Protocol = train.ValSplit
	return trainedWith(t, "conv-fsts-m1", cfg, ds), ds
}

func TestLayoutFeedForward(t *testing.T) {
	dir, _ := trainedRun(t, "fsts", 1)
	r := load(t, dir)
	lay, err := r.Layout()
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := r.Dataset()
	if lay.Convolutional || lay.T != 24 || lay.Dt != 0.004 || !slices.Equal(lay.Input, []int{ds.Train.F}) || len(lay.Blocks) != 3 {
		t.Fatalf("layout %+v", lay)
	}
	want := []Block{
		{Name: "hidden_0", Kind: Dense, In: []int{ds.Train.F}, Out: []int{6}},
		{Name: "hidden_1", Kind: Dense, In: []int{6}, Out: []int{6}},
		{Name: "readout", Kind: Dense, In: []int{6}, Out: []int{ds.Classes}},
	}
	for i, b := range lay.Blocks {
		if b.Name != want[i].Name || b.Kind != want[i].Kind || !slices.Equal(b.In, want[i].In) || !slices.Equal(b.Out, want[i].Out) ||
			(b.Neuron == nil) != (i == 2) {
			t.Errorf("block %d: %+v, want %+v", i, b, want[i])
		}
	}
	if n := len(lay.Spiking()); n != 2 {
		t.Errorf("%d spiking blocks", n)
	}
}

// TestLayersConv checks the layers of the convolutional network against its checkpoint and its forward
// pass: per-channel parameters in the convolutional blocks, per-unit ones in the fully connected block,
// the DVS constants (targets still at their initial values after a negligible training step) and the
// spiking units of each layer.
func TestLayersConv(t *testing.T) {
	dir, ds := convRun(t)
	r, err := Load(dir, Options{Backend: testBackend(t), Dataset: ds})
	if err != nil {
		t.Fatal(err)
	}
	layers, err := r.Layers()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name           string
		neurons, units int
		shared         bool
	}{{"conv_0", 16, 4 * 4 * 16, true}, {"conv_1", 32, 1 * 1 * 32, true}, {"fc", 5, 5, false}}
	if len(layers) != len(want) {
		t.Fatalf("%d layers, want %d", len(layers), len(want))
	}
	a, err := r.Spikes(SplitTest, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range layers {
		w := want[i]
		if l.Name != w.name || l.Index != i || l.Neurons != w.neurons || l.Units != w.units || l.Neuron.ChannelShared != w.shared ||
			l.Scope != "/model/"+w.name+"/neuron" {
			t.Errorf("layer %d: %s, %d parameter sets, %d units, shared %v, scope %s; want %+v", i, l.Name, l.Neurons, l.Units, l.Neuron.ChannelShared, l.Scope, w)
		}
		if l.Neuron.Dt != 0.02 || l.Neuron.FMinHz != 0.5 || l.Neuron.FMaxHz != 5 {
			t.Errorf("layer %s: constants %+v, want DVS's (dt 20 ms, f* in [0.5, 5] Hz)", l.Name, l.Neuron)
		}
		if len(a.Hidden[i][0][0]) != l.Units {
			t.Errorf("layer %s: %d units, the forward pass gives %d", l.Name, l.Units, len(a.Hidden[i][0][0]))
		}
		if len(l.TargetHz) != l.Neurons || !equal(l.TargetHz, l.InitialHz, 1e-4) {
			t.Errorf("layer %s: f* %v, want about the initial %v", l.Name, l.TargetHz, l.InitialHz)
		}
		if len(l.Beta) != 1 || len(l.Beta[0]) != l.Neurons || math.Abs(l.Lambda[0][0]-1/(1+math.Exp(3))) > 1e-4 {
			t.Errorf("layer %s: beta %v, lambda %v", l.Name, l.Beta, l.Lambda)
		}
	}
}

// TestLayoutDetectsDTExact builds a layer with the DT-exact parameterization in a store and checks
// that the layout marks it.
func TestLayoutDetectsDTExact(t *testing.T) {
	dir, _ := trainedRun(t, "fs-frozen", 0)
	r := load(t, dir)
	ds, _ := r.Dataset()
	cfg := r.Config
	cfg.Model = "fs"
	for _, dt := range []bool{false, true} {
		lay, err := layoutOf(cfg, ds, r.Context)
		if err != nil {
			t.Fatal(err)
		}
		scope := model.NewStore().RootScope()
		if dt {
			n := *lay.Blocks[0].Neuron
			n.DTExact = true
			freshLayer(t, scope.At("%s", train.ModelScope).At("hidden_0").At("neuron"), n, []int{1, 2, 6})
			if lay, err = layoutOf(cfg, ds, scope); err != nil {
				t.Fatal(err)
			}
		}
		if lay.Blocks[0].Neuron.DTExact != dt || lay.Blocks[1].Neuron.DTExact {
			t.Errorf("DT-exact layer %v: layout says %v, %v", dt, lay.Blocks[0].Neuron.DTExact, lay.Blocks[1].Neuron.DTExact)
		}
	}
}

// freshLayer builds a neuron layer of configuration cfg on an input of dimensions dims in scope's scope,
// which creates and initializes its variables.
func freshLayer(t *testing.T, scope *model.Scope, cfg neuron.Config, dims []int) {
	t.Helper()
	e, err := model.NewExec(testBackend(t), scope.Store(), func(_ *model.Scope, x *graph.Node) *graph.Node {
		return neuron.Layer(scope, x, cfg)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Call(tensors.FromFlatDataAndDimensions(make([]float32, size(dims)), dims...)); err != nil {
		t.Fatal(err)
	}
}

// variable32 returns the float32 values of a variable of scope.
func variable32(t *testing.T, ms *model.Scope, scope, name string) []float32 {
	t.Helper()
	v := ms.Store().GetVariable(model.JoinPath(scope, name))
	if v == nil {
		t.Fatalf("no variable %s in %s", name, scope)
	}
	tt, err := v.Value()
	if err != nil {
		t.Fatal(err)
	}
	out, err := tensors.CopyFlatData[float32](tt)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lazyContext loads the checkpoint of dir as train.EvaluateWith does (variables read on first use).
func lazyContext(t *testing.T, dir string) *model.Scope {
	t.Helper()
	scope := model.NewStore().RootScope()
	if _, err := checkpoint.Load(scope.Store()).Dir(dir).Done(); err != nil {
		t.Fatal(err)
	}
	return scope
}

// TestResetAndShuffleTargets checks on a trained feedforward run and on the convolutional run that reset
// restores exactly the values neuron.Layer initializes the target variable with (compared bit for bit
// with a freshly built layer), and that shuffle is a permutation within each layer: the same multiset
// of values per layer, each value moved to the place the returned permutation says.
func TestResetAndShuffleTargets(t *testing.T) {
	ffDir, _ := trainedRun(t, "fsts", 1)
	convDir, convDS := convRun(t)
	for _, tc := range []struct {
		name, dir string
		ds        *data.Dataset
	}{{"feedforward", ffDir, nil}, {"conv", convDir, convDS}} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(tc.dir, Options{Backend: testBackend(t), Dataset: tc.ds})
			if err != nil {
				t.Fatal(err)
			}
			layers, err := r.Layers()
			if err != nil {
				t.Fatal(err)
			}

			scope := lazyContext(t, tc.dir)
			if err := ResetTargets(scope, layers); err != nil {
				t.Fatal(err)
			}
			for _, l := range layers {
				dims := []int{1, 2, l.Neurons}
				if l.Neuron.ChannelShared {
					dims = []int{1, 2, 1, 1, l.Neurons}
				}
				fresh := model.NewStore().RootScope()
				freshLayer(t, fresh.At("fresh"), l.Neuron, dims)
				want := variable32(t, fresh, "/fresh", neuron.TargetVariable(l.Neuron))
				got := variable32(t, scope, l.Scope, neuron.TargetVariable(l.Neuron))
				if !slices.Equal(got, want) {
					t.Errorf("layer %s: reset gives %v, a fresh layer %v", l.Name, got, want)
				}
				if trained := variable32(t, lazyContext(t, tc.dir), l.Scope, neuron.TargetVariable(l.Neuron)); tc.name == "feedforward" && slices.Equal(trained, want) {
					t.Errorf("layer %s: the trained targets equal the initial ones: the test is vacuous", l.Name)
				}
				f, err := neuron.TargetFrequenciesHz(scope.At("%s", train.ModelScope).At("%s", l.Name).At("neuron"), l.Neuron)
				if err != nil {
					t.Fatal(err)
				}
				if !equal(f, l.InitialHz, 1e-6) {
					t.Errorf("layer %s: f* after reset %v, initial %v", l.Name, f, l.InitialHz)
				}
			}

			scope = lazyContext(t, tc.dir)
			before := map[string][]float32{}
			for _, l := range layers {
				before[l.Name] = slices.Clone(variable32(t, lazyContext(t, tc.dir), l.Scope, neuron.TargetVariable(l.Neuron)))
			}
			perms, err := ShuffleTargets(scope, layers, 3)
			if err != nil {
				t.Fatal(err)
			}
			moved := false
			for li, l := range layers {
				old, got := before[l.Name], variable32(t, scope, l.Scope, neuron.TargetVariable(l.Neuron))
				perm := perms[li]
				if !slices.Equal(perm, ShufflePermutation(3, li, len(old))) {
					t.Errorf("layer %s: permutation %v is not ShufflePermutation's", l.Name, perm)
				}
				sortedPerm := slices.Sorted(slices.Values(perm))
				for i, j := range sortedPerm {
					if i != j {
						t.Fatalf("layer %s: %v is not a permutation", l.Name, perm)
					}
				}
				for i, j := range perm {
					if got[i] != old[j] {
						t.Errorf("layer %s: value %d is %g, want the former value %d, %g", l.Name, i, got[i], j, old[j])
					}
					moved = moved || i != j
				}
				if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(old))) {
					t.Errorf("layer %s: shuffle changed the layer's values: %v, before %v", l.Name, got, old)
				}
			}
			if !moved {
				t.Error("every permutation is the identity: the test is vacuous")
			}
		})
	}
}

// TestPerturb evaluates the reset and shuffle perturbations end to end: the unperturbed accuracy is
// the one the run recorded, the changes are paired differences, the group aggregates are over checkpoints, and on a
// run with frozen targets the reset leaves the accuracy exactly unchanged (its targets are the initial
// values bit for bit).
func TestPerturb(t *testing.T) {
	d1, _ := trainedRun(t, "fsts", 1)
	d2 := trainedSeed(t, "fsts", 1, 2)
	frozen, _ := trainedRun(t, "fs-frozen", 0)
	rs, err := LoadRuns([]string{d1, d2, frozen}, Options{Backend: testBackend(t)})
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	rep, err := Perturb(rs, PerturbOptions{Seed: 5, Progress: func(done, total int, what string) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 2 || len(rep.Groups[0].Runs) != 2 || len(rep.Groups[1].Runs) != 1 || calls != 10 {
		t.Fatalf("%d groups, %d progress calls", len(rep.Groups), calls)
	}
	for _, g := range rep.Groups {
		var full, dReset []float64
		for _, p := range g.Runs {
			// The unperturbed evaluation of the latest checkpoint is the test accuracy the run recorded
			// after its last epoch.
			res, err := train.ReadResult(p.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if p.Full.TestAcc != res.FinalTestAcc || p.Epoch != len(res.Epochs) {
				t.Errorf("%s: full accuracy %g at epoch %d, the run recorded %g after epoch %d", p.Dir, p.Full.TestAcc, p.Epoch, res.FinalTestAcc, len(res.Epochs))
			}
			if p.DeltaReset != p.Reset.TestAcc-p.Full.TestAcc || p.DeltaShuffle != p.Shuffle.TestAcc-p.Full.TestAcc || len(p.Permutations) != 2 {
				t.Errorf("%s: %+v", p.Dir, p)
			}
			full, dReset = append(full, p.Full.TestAcc), append(dReset, p.DeltaReset)
			t.Logf("%s: full %.3f, reset %.3f, shuffle %.3f", g.Key, p.Full.TestAcc, p.Reset.TestAcc, p.Shuffle.TestAcc)
		}
		if m, s := MeanStd(full); g.Full.Mean != m || g.Full.Std != s {
			t.Errorf("%s: full %+v, want %g ± %g", g.Key, g.Full, m, s)
		}
		if m, _ := MeanStd(dReset); g.DeltaReset.Mean != m {
			t.Errorf("%s: reset change %+v, want mean %g", g.Key, g.DeltaReset, m)
		}
	}
	if p := rep.Groups[1].Runs[0]; p.Reset.TestAcc != p.Full.TestAcc || p.DeltaReset != 0 {
		t.Errorf("frozen targets: reset changed the accuracy from %g to %g", p.Full.TestAcc, p.Reset.TestAcc)
	}
	if tab := rep.Summary(); len(tab.Rows) != 2 || len(tab.Rows[0]) != len(tab.Header) {
		t.Errorf("summary table %v", tab)
	}

	lif, _ := trainedRun(t, "lif", 0)
	rl, err := LoadRuns([]string{lif}, Options{Backend: testBackend(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Perturb(rl, PerturbOptions{}); err == nil || !strings.Contains(err.Error(), "no target frequency") {
		t.Errorf("LIF run: error %v", err)
	}
}

func TestTargetShifts(t *testing.T) {
	rs, rep := analyzeSeeds(t, func(rs []*Run) (*ShiftReport, error) { return TargetShifts(rs, ShiftOptions{Bins: 7}) })
	if len(rep.Groups) != 1 || len(rep.Groups[0].Runs) != 2 || len(rep.Groups[0].Layers) != 2 {
		t.Fatalf("report %+v", rep)
	}
	g := rep.Groups[0]
	var pooled []float64
	for ri, r := range rs {
		layers, err := r.Layers()
		if err != nil {
			t.Fatal(err)
		}
		for li, l := range layers {
			ls := g.Runs[ri].Layers[li]
			for i := range l.TargetHz {
				if ls.DeltaHz[i] != l.TargetHz[i]-l.InitialHz[i] || ls.LogRatio[i] != math.Log2(l.TargetHz[i]/l.InitialHz[i]) {
					t.Errorf("run %d layer %d neuron %d: shift %g, log ratio %g", ri, li, i, ls.DeltaHz[i], ls.LogRatio[i])
				}
			}
			if li == 1 {
				pooled = append(pooled, ls.DeltaHz...)
			}
		}
	}
	l := g.Layers[1]
	if want := Summarize(pooled); l.Delta != want || l.Delta.N != 12 {
		t.Errorf("pooled summary %+v, want %+v", l.Delta, want)
	}
	h := l.Histogram
	total := h.Below + h.Above
	for _, c := range h.Counts {
		total += c
	}
	if len(h.Counts) != 7 || total != 12 || h.Lo != l.Delta.Min || h.Hi != l.Delta.Max || h.Below+h.Above != 0 {
		t.Errorf("histogram %+v of %+v", h, l.Delta)
	}
	if m, s := MeanStd([]float64{g.Runs[0].Layers[1].Delta.Mean, g.Runs[1].Layers[1].Delta.Mean}); math.Abs(l.SeedMean.Mean-m) > 1e-12 || math.Abs(l.SeedMean.Std-s) > 1e-12 {
		t.Errorf("across seeds %+v, want %g ± %g", l.SeedMean, m, s)
	}
	if n := len(rep.Long().Rows); n != 24 {
		t.Errorf("%d long rows, want 24", n)
	}
}

func TestTSParams(t *testing.T) {
	rs, rep := analyzeSeeds(t, func(rs []*Run) (*TSParamReport, error) { return TSParams(rs, TSParamOptions{Bins: 10}) })
	g := rep.Groups[0]
	layers, _ := rs[0].Layers()
	if s := g.Runs[0].Layers[1].Stages[0]; !equal(s.Beta, layers[1].Beta[0], 0) || !equal(s.Lambda, layers[1].Lambda[0], 0) {
		t.Errorf("stage values %v %v, want %v %v", s.Beta, s.Lambda, layers[1].Beta[0], layers[1].Lambda[0])
	}
	p := g.Pooled[0].Stages[0]
	if p.BetaSummary.N != 12 || p.LambdaSummary.N != 12 || p.Beta != nil || p.BetaHist.Lo != -1 || p.BetaHist.Hi != 1 || p.LambdaHist.Lo != 0 {
		t.Errorf("pooled stage %+v", p)
	}
	n := 0
	for _, c := range p.LambdaHist.Counts {
		n += c
	}
	if n != 12 {
		t.Errorf("lambda histogram counts %d values, want 12", n)
	}
	frozen, _ := trainedRun(t, "fs-frozen", 0)
	rf, _ := LoadRuns([]string{frozen}, Options{Backend: testBackend(t)})
	if _, err := TSParams(rf, TSParamOptions{}); err == nil {
		t.Error("a run without TS module: want an error")
	}
}

// TestDelayShifts compares the pooled curves with the group delays computed directly from fits/theory
// for every neuron, and checks that on the convolutional run, whose TS coefficients did not move, the
// shifts against the initialization vanish.
func TestDelayShifts(t *testing.T) {
	rs, rep := analyzeSeeds(t, func(rs []*Run) (*DelayReport, error) { return DelayShifts(rs, DelayOptions{Points: 9}) })
	g := rep.Groups[0]
	if rep.Reference != DelayVsIdentity || len(g.FrequencyHz) != 9 || g.FrequencyHz[0] != 0 || g.FrequencyHz[8] != 125 || len(g.Layers) != 2 {
		t.Fatalf("report: reference %s, grid %v", rep.Reference, g.FrequencyHz)
	}
	const p = 3 // 46.875 Hz
	w := 2 * math.Pi * g.FrequencyHz[p] * 0.004
	var ts, cl []float64
	unstable := 0
	for _, r := range rs {
		layers, _ := r.Layers()
		l := layers[1]
		for i := range l.Neurons {
			fs, err := FSModule(l.Neuron, l.TargetHz[i])
			if err != nil {
				t.Fatal(err)
			}
			g := theory.TS{Beta: []float64{l.Beta[0][i]}, Lambda: []float64{l.Lambda[0][i]}}
			ts = append(ts, g.GroupDelay(w))
			cl = append(cl, theory.ClosedLoop{FS: fs, TS: g}.GroupDelay(w)-fs.GroupDelay(w))
			if !(theory.ClosedLoop{FS: fs, TS: g}).Stable() {
				unstable++
			}
		}
	}
	l := g.Layers[1]
	if m, _ := MeanStd(ts); math.Abs(l.TS.Mean[p]-m) > 1e-12 || l.Neurons != 12 || l.MsPerSample != 4 {
		t.Errorf("TS shift at %g Hz: %g, want %g (%d neurons)", g.FrequencyHz[p], l.TS.Mean[p], m, l.Neurons)
	}
	if l.Unstable != unstable {
		t.Errorf("%d unstable closed loops, want %d", l.Unstable, unstable)
	}
	if m, _ := MeanStd(cl); math.Abs(l.ClosedLoop.Mean[p]-m) > 1e-12 {
		t.Errorf("closed-loop shift at %g Hz: %g, want %g", g.FrequencyHz[p], l.ClosedLoop.Mean[p], m)
	}
	if s := Summarize(cl); math.Abs(l.ClosedLoop.Median[p]-s.Median) > 1e-12 || math.Abs(l.ClosedLoop.Q90[p]-s.Q90) > 1e-12 {
		t.Errorf("closed-loop quantiles %g, %g, want %g, %g", l.ClosedLoop.Median[p], l.ClosedLoop.Q90[p], s.Median, s.Q90)
	}
	if l.TS.Mean[p] == 0 || l.ClosedLoop.Mean[p] == 0 {
		t.Error("zero shifts: the comparison is vacuous")
	}

	convDir, convDS := convRun(t)
	rc, err := LoadRuns([]string{convDir}, Options{Backend: testBackend(t), Dataset: convDS})
	if err != nil {
		t.Fatal(err)
	}
	crep, err := DelayShifts(rc, DelayOptions{Points: 5, FMaxHz: 10, Reference: DelayVsInit})
	if err != nil {
		t.Fatal(err)
	}
	cg := crep.Groups[0]
	if len(cg.Layers) != 3 || cg.FrequencyHz[4] != 10 || cg.Layers[0].Neurons != 16 {
		t.Fatalf("conv report %+v", cg)
	}
	for _, l := range cg.Layers {
		for p := range cg.FrequencyHz {
			if math.Abs(l.TS.Mean[p]) > 1e-3 || math.Abs(l.ClosedLoop.Mean[p]) > 1e-3 {
				t.Errorf("layer %s at %g Hz: shifts %g, %g from an untrained TS module", l.Name, cg.FrequencyHz[p], l.TS.Mean[p], l.ClosedLoop.Mean[p])
			}
		}
	}
	for _, bad := range []DelayOptions{{Points: 1}, {FMaxHz: 1000}, {Reference: "fs"}} {
		if _, err := DelayShifts(rs, bad); err == nil {
			t.Errorf("options %+v: want an error", bad)
		}
	}
}

// TestCTDT checks Table 5 on a trained checkpoint: the closed form of Theorem 2 is at least 1000 times
// closer to the realized DT target than the learned CT target is, and a DT-exact layer (parameters set
// directly) has a zero gap by construction.
func TestCTDT(t *testing.T) {
	dir, _ := trainedRun(t, "fsts", 1)
	rs, err := LoadRuns([]string{dir}, Options{Backend: testBackend(t)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CTDT(rs)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]CTDTRow{}
	for _, r := range rep.Rows {
		rows[r.Comparison] = r
		t.Logf("%s: n %d, MAE %.3g Hz, max %.3g Hz", r.Comparison, r.N, r.MAEHz, r.MaxHz)
	}
	ct, cf := rows[CompareCT], rows[CompareClosedForm]
	if ct.N != 12 || cf.N != 12 || len(rep.Points) != 12 || len(rows) != 3 {
		t.Fatalf("rows %+v", rep.Rows)
	}
	if !(ct.MAEHz > 1000*cf.MAEHz) || !(ct.MaxHz > 1000*cf.MaxHz) || !(ct.MAEHz > 0.01) {
		t.Errorf("CT vs realized: MAE %g, max %g Hz; closed form: MAE %g, max %g Hz; want the closed form 1000× closer",
			ct.MAEHz, ct.MaxHz, cf.MAEHz, cf.MaxHz)
	}
	layers, _ := rs[0].Layers()
	c := layers[0].Neuron.Constants()
	for _, p := range rep.Points[:6] {
		k := theory.KappaStarHz(c.Mu(), c.Rho(), p.LearnedHz)
		sweep, _ := c.DTSweepTargetHz(k)
		closed, _ := c.DTTargetHz(k)
		if p.CTHz != layers[0].TargetHz[p.Neuron] || p.RealizedHz != sweep || p.ClosedFormHz != closed || math.IsNaN(p.ClosedLoopHz) {
			t.Errorf("point %+v: want CT %g, realized %g, closed form %g", p, layers[0].TargetHz[p.Neuron], sweep, closed)
		}
	}

	// DT-exact layers: the learned coordinate is the realized target.
	ncfg := layers[0].Neuron
	ncfg.DTExact, ncfg.Kind, ncfg.Order = true, neuron.FS, 0
	l := Layer{Name: "hidden_0", Neuron: ncfg, TargetHz: []float64{1, 7.5, 20, 49}}
	dt, err := CTDTOf(GroupKey{Model: "fs"}, []CTDTLayers{{Layers: []Layer{l}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(dt.Rows) != 2 || dt.Rows[0].Comparison != CompareDTExact || dt.Rows[0].N != 4 || dt.Rows[0].MaxHz > 1e-9 || dt.Rows[1].MaxHz > 1e-9 {
		t.Errorf("DT-exact rows %+v", dt.Rows)
	}
	if p := dt.Points[3]; !(math.Abs(p.CTHz-p.LearnedHz) > 1) {
		t.Errorf("DT-exact 49 Hz: its CT target %g Hz should lie well apart", p.CTHz)
	}
}

// TestNeuronEnergyMatchesPaper checks the neuron-internal column of Table 4 (SSC, W = 512: two hidden
// layers, T = 250 steps) under our counting rules.
func TestNeuronEnergyMatchesPaper(t *testing.T) {
	const units, T = 2 * 512, 250
	for _, tc := range []struct {
		kind  neuron.Kind
		m     int
		paper float64 // µJ, Table 4
		match bool
	}{
		{neuron.LIF, 0, 2.8, true},
		{neuron.AdaptLIF, 0, 4.5, false}, // our rules count the same update as FS (6.8 µJ)
		{neuron.FSFrozen, 0, 6.8, true},
		{neuron.FS, 0, 6.8, true},
		{neuron.FSTS, 1, 12.2, true},
		{neuron.FSTS, 2, 17.6, true},
	} {
		got := NeuronOps(tc.kind, tc.m).Scale(units * T).EnergyMicroJ()
		if (math.Abs(got-tc.paper) < 0.05) != tc.match {
			t.Errorf("%s M=%d: %.3f µJ, paper %.1f µJ (match expected: %v)", tc.kind, tc.m, got, tc.paper, tc.match)
		}
	}
}

// TestLayoutEnergy applies the counting rules to hand-built layouts.
func TestLayoutEnergy(t *testing.T) {
	fs := neuron.DefaultConfig(neuron.FS, 0)
	ff := &Layout{T: 10, Blocks: []Block{
		{Name: "hidden_0", Kind: Dense, In: []int{4}, Out: []int{3}, Neuron: &fs},
		{Name: "hidden_1", Kind: Dense, In: []int{3}, Out: []int{3}, Neuron: &fs},
		{Name: "readout", Kind: Dense, In: []int{3}, Out: []int{2}},
	}}
	e := layoutEnergy(ff, neuron.FS, 0, 0.5, true, []float64{0.1, 0.2}, "d", 1, "s")
	wantAC := []float64{0.5 * 4 * 3 * 10, 0.1 * 3 * 3 * 10, 0.2 * 3 * 2 * 10}
	for i, l := range e.Layers {
		if math.Abs(l.Synaptic.AC-wantAC[i]) > 1e-9 || l.Synaptic.MAC != 0 {
			t.Errorf("block %d: %+v, want %g ACs", i, l.Synaptic, wantAC[i])
		}
	}
	if n := e.Layers[0].Neuron; n.MAC != 5*3*10 || n.AC != 4*3*10 || e.Layers[2].Neuron != (Ops{}) {
		t.Errorf("neuron ops %+v, readout %+v", n, e.Layers[2].Neuron)
	}
	wantLayer := (wantAC[0] + wantAC[1] + wantAC[2]) * 0.9e-6
	wantNeuron := 2 * (5*4.6 + 4*0.9) * 3 * 10 * 1e-6
	if math.Abs(e.ELayerMicroJ-wantLayer) > 1e-12 || math.Abs(e.ENeuronMicroJ-wantNeuron) > 1e-12 || e.ETotalMicroJ != e.ELayerMicroJ+e.ENeuronMicroJ {
		t.Errorf("energies %g, %g, %g; want %g, %g", e.ELayerMicroJ, e.ENeuronMicroJ, e.ETotalMicroJ, wantLayer, wantNeuron)
	}
	// Non-spiking input: the first layer is a dense product.
	e = layoutEnergy(ff, neuron.FS, 0, 0.5, false, []float64{0.1, 0.2}, "d", 1, "s")
	if l := e.Layers[0].Synaptic; l.MAC != 4*3*10 || l.AC != 0 {
		t.Errorf("non-spiking input: %+v", l)
	}
	// Convolution on events: K²·C_out targets per input event, plus the pooling adds.
	lif := neuron.DefaultConfig(neuron.LIF, 0)
	conv := &Layout{T: 2, Blocks: []Block{
		{Name: "conv_0", Kind: Conv, In: []int{8, 8, 2}, Out: []int{2, 2, 4}, Kernel: 3, Pool: 4, Neuron: &lif},
		{Name: "readout", Kind: Dense, In: []int{16}, Out: []int{3}},
	}}
	e = layoutEnergy(conv, neuron.LIF, 0, 0.25, true, []float64{0.5}, "d", 1, "s")
	if l := e.Layers[0]; l.Synaptic.AC != 0.25*8*8*2*9*4*2+8*8*4*2 || l.Units != 16 || l.Neuron.MAC != 2*16*2 {
		t.Errorf("conv block %+v", l)
	}
	if l := e.Layers[1]; l.Synaptic.AC != 0.5*16*3*2 {
		t.Errorf("readout %+v", l)
	}
}

// TestEnergyRuns checks the rates a run's energy uses: the selected epoch's recorded rates, or an
// evaluation of the latest checkpoint on the validation split (test under best-test).
func TestEnergyRuns(t *testing.T) {
	dir, _ := trainedRun(t, "fsts", 1)
	convDir, convDS := convRun(t)
	r := load(t, dir)
	e, err := r.Energy(EnergyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	best := r.Result.BestEpoch
	if !slices.Equal(e.Rates, r.Epochs[best-1].EvalFiringRates) || !strings.Contains(e.RatesSource, fmt.Sprintf("epoch %d", best)) {
		t.Errorf("rates %v from %q, want the selected epoch %d's %v", e.Rates, e.RatesSource, best, r.Epochs[best-1].EvalFiringRates)
	}
	test, _ := r.Set(SplitTest)
	rate, spikes := InputRate(test)
	if !spikes || e.Layers[0].InputRate != rate || !(rate > 0) || e.Layers[1].InputRate != e.Rates[0] || e.T != 24 {
		t.Errorf("input rate %g (spikes %v), layers %+v", rate, spikes, e.Layers)
	}
	ev, err := r.Energy(EnergyOptions{Evaluate: true})
	if err != nil {
		t.Fatal(err)
	}
	last := r.Epochs[len(r.Epochs)-1].EvalFiringRates
	if !equal(ev.Rates, last, 1e-6) || !strings.Contains(ev.RatesSource, "evaluated") {
		t.Errorf("evaluated rates %v (%s), the last epoch recorded %v", ev.Rates, ev.RatesSource, last)
	}

	rc, err := LoadRuns([]string{convDir}, Options{Backend: testBackend(t), Dataset: convDS})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Energy(rc, EnergyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ce := rep.Groups[0].Runs[0]
	if len(ce.Layers) != 4 || ce.Layers[0].Kind != Conv || !ce.Layers[0].InputSpiking || ce.Layers[0].Units != 256 ||
		!strings.Contains(ce.RatesSource, "validation") || rep.Groups[0].ETotal.Mean != ce.ETotalMicroJ {
		t.Errorf("conv energy %+v", ce)
	}
}

func TestTrainingTimesAndFindRuns(t *testing.T) {
	d1, _ := trainedRun(t, "fsts", 1)
	d2 := trainedSeed(t, "fsts", 1, 2)
	lif, _ := trainedRun(t, "lif", 0)
	root := t.TempDir()
	for _, d := range []string{d1, d2, lif} {
		copyRun(t, d, filepath.Join(root, "nested", filepath.Base(d)))
	}
	// A run still training: its checkpoint without result.json.
	unfinished := filepath.Join(root, "unfinished")
	copyRun(t, d2, unfinished)
	if err := os.Remove(filepath.Join(unfinished, train.ResultFile)); err != nil {
		t.Fatal(err)
	}
	dirs, err := FindRuns(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 4 {
		t.Fatalf("found %v", dirs)
	}
	if _, err := FindRuns(t.TempDir()); err == nil {
		t.Error("an empty folder: want an error")
	}
	rep, err := TrainingTimes(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 {
		t.Fatalf("rows %+v", rep.Rows)
	}
	var minutes []float64
	for _, d := range []string{d1, d2} {
		res, _ := train.ReadResult(d)
		minutes = append(minutes, res.WallSeconds/60)
	}
	for _, row := range rep.Rows {
		if row.Key.Model != "fsts" {
			continue
		}
		if row.Runs != 2 || row.Unfinished != 1 || math.Abs(row.MedianMinutes-Median(minutes)) > 1e-12 || row.Epochs != 2 {
			t.Errorf("fsts row %+v, want median %g of %v", row, Median(minutes), minutes)
		}
	}
	if _, err := TrainingTimes([]string{unfinished}); err == nil {
		t.Error("no finished run: want an error")
	}
}

func copyRun(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

func TestKernelRuntimes(t *testing.T) {
	dir := t.TempDir()
	kernel := filepath.Join(dir, "kernel.json")
	other := filepath.Join(dir, "on.json")
	bad := filepath.Join(dir, "bad.json")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(kernel, `{"suite":"kernel","backend":"xla:cpu","machine":{"cpus":2,"cpu":"x"},"rows":[
		{"suite":"kernel","model":"fsts","width":128,"m":1,"variant":"chunked","batch":128,"time":250,"median_ms":900,"speedup_vs_stepwise":3,"paper_pytorch_ms":704.2,"paper_triton_ms":12.8},
		{"suite":"kernel","model":"fs","width":64,"m":0,"variant":"unrolled","batch":128,"time":250,"median_ms":500,"speedup_vs_stepwise":null},
		{"suite":"kernel","model":"fs","width":64,"m":0,"variant":"chunked","batch":128,"time":250,"error":"out of memory"}]}`)
	write(other, `{"suite":"open-neuromorphic","rows":[{"model":"lif","width":4096,"m":0,"variant":"chunked","median_ms":1}]}`)
	write(bad, `not json`)
	rep, err := KernelRuntimes([]string{kernel, other})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 || rep.Rows[0].Variant != "chunked" || rep.Rows[0].Error == "" || rep.Rows[2].Width != 128 ||
		*rep.Rows[2].PaperTritonMs != 12.8 || rep.Rows[1].Speedup != nil || rep.Rows[2].Backend != "xla:cpu" {
		t.Errorf("rows %+v", rep.Rows)
	}
	if tab := rep.Summary(); tab.Rows[0][6] != "" || tab.Rows[2][6] != "900" {
		t.Errorf("table %v", tab.Rows)
	}
	for _, files := range [][]string{{bad}, {other}, {filepath.Join(dir, "missing.json")}} {
		if _, err := KernelRuntimes(files); err == nil {
			t.Errorf("%v: want an error", files)
		}
	}
}

func TestStats(t *testing.T) {
	s := Summarize([]float64{4, 1, math.NaN(), 3, 2})
	if s.N != 4 || s.Mean != 2.5 || s.Min != 1 || s.Max != 4 || s.Median != 2.5 || math.Abs(s.Q25-1.75) > 1e-12 ||
		math.Abs(s.Std-math.Sqrt(5.0/3)) > 1e-12 || math.Abs(s.Q90-3.7) > 1e-12 {
		t.Errorf("summary %+v", s)
	}
	if m, sd := MeanStd([]float64{3}); m != 3 || sd != 0 {
		t.Errorf("one value: %g ± %g", m, sd)
	}
	h, err := NewHistogram(0, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	h.Add(0, 0.24, 0.25, 0.99, 1, -0.1, 1.5, math.NaN())
	if !slices.Equal(h.Counts, []int{2, 1, 0, 2}) || h.Below != 1 || h.Above != 1 || !equal(h.Edges(), []float64{0, 0.25, 0.5, 0.75, 1}, 1e-15) {
		t.Errorf("histogram %+v, edges %v", h, h.Edges())
	}
	if _, err := NewHistogram(1, 1, 3); err == nil {
		t.Error("empty range: want an error")
	}
	if h, _ := histogramOf([]float64{2, 2}, 0, 0, 2); h.Lo != 1 || h.Hi != 3 || h.Counts[1] != 2 {
		t.Errorf("histogram of equal values %+v", h)
	}
}

// Edges returns the Bins+1 bin edges, from Lo to Hi.
func (h *Histogram) Edges() []float64 {
	n := len(h.Counts)
	e := make([]float64, n+1)
	for i := range e {
		e[i] = h.Lo + (h.Hi-h.Lo)*float64(i)/float64(n)
	}
	e[n] = h.Hi
	return e
}
