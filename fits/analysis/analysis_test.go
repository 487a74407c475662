package analysis

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
)

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set (the
// unrolled graphs compile faster; the tests check values, not speed) and removes the shared runs.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	code := m.Run()
	if runsDir != "" {
		_ = os.RemoveAll(runsDir)
	}
	os.Exit(code)
}

func testBackend(t testing.TB) compute.Backend { return xlatest.XLA(t) }

// tinyConfig is a run small enough to train in seconds: the Small synthetic task (24 bins of 4 ms), its
// first 32 training examples, width 6, two epochs, best-test (so result.json's firing rates are
// measured on the test split).
func tinyConfig(model string, m int) train.Config {
	c := train.DefaultConfig()
	c.Small, c.TrainLimit = true, 32
	c.Model, c.M, c.Width, c.Batch, c.Epochs, c.LR = model, m, 6, 16, 2, 0.05
	c.Protocol = train.BestTest
	return c
}

var (
	runsMu  sync.Mutex
	runsDir string
	runs    = map[string]*train.Result{}
)

// trainedRun trains (once per test binary) the tiny run of a model and returns its folder and result.
func trainedRun(t *testing.T, model string, m int) (string, *train.Result) {
	return trainOnce(t, fmt.Sprintf("%s-m%d", model, m), tinyConfig(model, m), nil)
}

// trainOnce trains (once per test binary) the run cfg under the given name, on ds when not nil, and returns
// its folder and result.
func trainOnce(t *testing.T, name string, cfg train.Config, ds *data.Dataset) (string, *train.Result) {
	t.Helper()
	runsMu.Lock()
	defer runsMu.Unlock()
	if runsDir == "" {
		d, err := os.MkdirTemp("", "fits-analysis-test-*")
		if err != nil {
			t.Fatal(err)
		}
		runsDir = d
	}
	dir := filepath.Join(runsDir, name)
	if res, ok := runs[dir]; ok {
		return dir, res
	}
	res, err := train.TrainModel(cfg, train.Options{Dir: dir, Backend: testBackend(t), Dataset: ds})
	if err != nil {
		t.Fatalf("training %s: %v", name, err)
	}
	runs[dir] = res
	return dir, res
}

func load(t *testing.T, dir string) *Run {
	t.Helper()
	r, err := Load(dir, Options{Backend: testBackend(t)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLoad(t *testing.T) {
	dir, res := trainedRun(t, "fsts", 1)
	r := load(t, dir)
	if r.Config != res.Config {
		t.Errorf("config %+v, want the trained one %+v", r.Config, res.Config)
	}
	if r.Result == nil || r.Result.FinalTestAcc != res.FinalTestAcc {
		t.Errorf("result.json not read back: %+v", r.Result)
	}
	if len(r.Epochs) != res.Config.Epochs {
		t.Fatalf("%d epochs in the checkpoint's history, want %d", len(r.Epochs), res.Config.Epochs)
	}
	for i, e := range r.Epochs {
		if e.Loss != res.Epochs[i].Loss || e.TestAcc != res.Epochs[i].TestAcc {
			t.Errorf("epoch %d: %+v, want %+v", i+1, e, res.Epochs[i])
		}
	}
	// Without result.json (a run still training) the checkpoint alone is enough.
	if err := os.Rename(filepath.Join(dir, train.ResultFile), filepath.Join(dir, "result.json.bak")); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(filepath.Join(dir, "result.json.bak"), filepath.Join(dir, train.ResultFile))
	r2 := load(t, dir)
	if r2.Result != nil || r2.Config != res.Config || len(r2.Epochs) != len(res.Epochs) {
		t.Errorf("without result.json: result %v, config %+v, %d epochs", r2.Result, r2.Config, len(r2.Epochs))
	}
}

func TestLoadErrors(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	partial := t.TempDir() // a checkpoint whose binary file is missing: incomplete
	if err := os.WriteFile(filepath.Join(partial, "checkpoint-n0000001-20240101-000000-step-00000002.json"), []byte(`{"Variables":[{"Pos":0,"Length":8}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
		want      error
	}{
		{"missing folder", filepath.Join(empty, "nope"), os.ErrNotExist},
		{"empty folder", empty, ErrNoCheckpoint},
		{"incomplete checkpoint", partial, ErrNoCheckpoint},
		{"not a folder", file, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(tc.dir, Options{})
			if err == nil || r != nil {
				t.Fatalf("Load(%s) = %v, %v; want an error", tc.dir, r, err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v does not wrap %v", err, tc.want)
			}
		})
	}
}

// neuronCtx loads the checkpoint of dir into a fresh store (lazily, as train.Evaluate does) and returns
// the scope of hidden layer i's neurons.
func neuronCtx(t *testing.T, dir string, i int) *mlmodel.Scope {
	t.Helper()
	scope := mlmodel.NewStore().RootScope()
	if _, err := checkpoint.Load(scope.Store()).Dir(dir).Done(); err != nil {
		t.Fatal(err)
	}
	return scope.At("model").At("%s", fmt.Sprintf("hidden_%d", i)).At("neuron")
}

func TestLayers(t *testing.T) {
	for _, tc := range []struct {
		model    string
		m        int
		hasF, ts bool
	}{
		{"lif", 0, false, false},
		{"fs-frozen", 0, true, false},
		{"fsts", 1, true, true},
	} {
		t.Run(tc.model, func(t *testing.T) {
			dir, res := trainedRun(t, tc.model, tc.m)
			r := load(t, dir)
			layers, err := r.Layers()
			if err != nil {
				t.Fatal(err)
			}
			if len(layers) != 2 {
				t.Fatalf("%d layers, want 2", len(layers))
			}
			ds, err := r.Dataset()
			if err != nil {
				t.Fatal(err)
			}
			ncfg, err := train.NeuronConfigFor(res.Config, ds)
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range layers {
				if l.Index != i || l.Scope != fmt.Sprintf("/model/hidden_%d/neuron", i) || l.Neurons != 6 || l.Neuron != ncfg {
					t.Errorf("layer %d: index %d, scope %q, %d neurons, config %+v", i, l.Index, l.Scope, l.Neurons, l.Neuron)
				}
				if (l.TargetHz != nil) != tc.hasF || (l.InitialHz != nil) != tc.hasF || (l.Beta != nil) != tc.ts || (l.Lambda != nil) != tc.ts {
					t.Fatalf("layer %d: f* %v, initial %v, beta %v, lambda %v", i, l.TargetHz, l.InitialHz, l.Beta, l.Lambda)
				}
				if !tc.hasF {
					continue
				}
				// The learned f* are what neuron.TargetFrequenciesHz reads from the trained store.
				want, err := neuron.TargetFrequenciesHz(neuronCtx(t, dir, i), ncfg)
				if err != nil {
					t.Fatal(err)
				}
				if !equal(l.TargetHz, want, 0) {
					t.Errorf("layer %d: f* %v, want %v", i, l.TargetHz, want)
				}
				// Initial values: log-spaced over the configured range, ascending.
				if l.InitialHz[0] != ncfg.FMinHz || math.Abs(l.InitialHz[5]-ncfg.FMaxHz) > 1e-9*ncfg.FMaxHz {
					t.Errorf("layer %d: initial f* %v, want log-spaced over [%g, %g] Hz", i, l.InitialHz, ncfg.FMinHz, ncfg.FMaxHz)
				}
				for j := 1; j < len(l.InitialHz); j++ {
					if r := l.InitialHz[j] / l.InitialHz[j-1]; math.Abs(r-l.InitialHz[1]/l.InitialHz[0]) > 1e-9 {
						t.Errorf("layer %d: initial f* not log-spaced: %v", i, l.InitialHz)
					}
				}
				switch tc.model {
				case "fs-frozen":
					// Frozen targets stay at their initial values (within float32 storage).
					if !equal(l.TargetHz, l.InitialHz, 1e-5) {
						t.Errorf("layer %d: frozen f* moved: %v, initial %v", i, l.TargetHz, l.InitialHz)
					}
				case "fsts":
					if equal(l.TargetHz, l.InitialHz, 1e-4) {
						t.Errorf("layer %d: learnable f* did not move in training: %v", i, l.TargetHz)
					}
					beta, lambda, err := neuron.TSCoefficients(neuronCtx(t, dir, i), ncfg)
					if err != nil {
						t.Fatal(err)
					}
					if len(l.Beta) != 1 || len(l.Beta[0]) != 6 || !equal(l.Beta[0], beta[0], 0) || !equal(l.Lambda[0], lambda[0], 0) {
						t.Errorf("layer %d: beta %v lambda %v, want %v %v", i, l.Beta, l.Lambda, beta, lambda)
					}
					for j := range l.Beta[0] {
						if !(math.Abs(l.Beta[0][j]) < 1) || !(l.Lambda[0][j] > 0 && l.Lambda[0][j] < 1) {
							t.Errorf("layer %d neuron %d: beta %g, lambda %g out of range", i, j, l.Beta[0][j], l.Lambda[0][j])
						}
					}
				}
			}
		})
	}
}

// TestInitialTargetsMatchNeuronInit builds a fresh layer of FS neurons and checks that InitialTargetsHz
// gives the f* that neuron.Layer initialized.
func TestInitialTargetsMatchNeuronInit(t *testing.T) {
	for _, n := range []int{1, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			cfg := neuron.DefaultConfig(neuron.FS, 0)
			scope := mlmodel.NewStore().RootScope()
			e, err := mlmodel.NewExec(testBackend(t), scope.Store(), func(_ *mlmodel.Scope, x *graph.Node) *graph.Node {
				return neuron.Layer(scope.At("layer"), x, cfg)
			})
			if err != nil {
				t.Fatal(err)
			}
			x := tensors.FromFlatDataAndDimensions(make([]float32, 2*n), 1, 2, n)
			if _, err := e.Call(x); err != nil {
				t.Fatal(err)
			}
			got, err := neuron.TargetFrequenciesHz(scope.At("layer"), cfg)
			if err != nil {
				t.Fatal(err)
			}
			want, err := InitialTargetsHz(cfg, n)
			if err != nil {
				t.Fatal(err)
			}
			if !equal(got, want, 1e-5) {
				t.Errorf("initialized f* %v, InitialTargetsHz %v", got, want)
			}
		})
	}
	if _, err := InitialTargetsHz(neuron.DefaultConfig(neuron.LIF, 0), 3); err == nil {
		t.Error("LIF has no target frequency: want an error")
	}
}

func TestSpikes(t *testing.T) {
	dir, res := trainedRun(t, "fsts", 1)
	r := load(t, dir)
	set, err := r.Set(SplitTest)
	if err != nil {
		t.Fatal(err)
	}

	// All test examples: the firing rates and the accuracy are those the run measured after its last
	// epoch on the test split (best-test). Batching may flip a spike whose voltage sits on the threshold
	// within float32 rounding, so rates agree to a few flipped spikes.
	all, err := r.Spikes(SplitTest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Index) != set.N || len(all.Hidden) != 2 {
		t.Fatalf("%d examples, %d layers", len(all.Index), len(all.Hidden))
	}
	for l, tr := range all.Hidden {
		got, want := tr.MeanRate(), res.FinalFiringRates[l]
		t.Logf("layer %d: mean rate %g, the run measured %g", l, got, want)
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("layer %d: mean rate %g, the run measured %g", l, got, want)
		}
	}
	correct := 0
	for s := range all.Index {
		if all.Predicted[s] == all.Labels[s] {
			correct++
		}
	}
	if acc := float64(correct) / float64(set.N); math.Abs(acc-res.FinalTestAcc) > 1.5/float64(set.N) {
		t.Errorf("accuracy %g, the run measured %g", acc, res.FinalTestAcc)
	}

	// A few examples: shapes, binary spikes, inputs, and equality with a direct forward pass.
	idx := []int{3, 0, 7}
	a, err := r.Spikes(SplitTest, idx)
	if err != nil {
		t.Fatal(err)
	}
	if a.Dt != 0.004 || a.Split != SplitTest || len(a.Labels) != 3 || len(a.Logits) != 3 || len(a.Logits[0]) != 8 {
		t.Errorf("dt %g, split %q, %d labels, logits %v", a.Dt, a.Split, len(a.Labels), a.Logits)
	}
	checkShape(t, "input", a.Input, 3, set.T, set.F)
	for s, i := range idx {
		if a.Labels[s] != int(set.Labels[i]) {
			t.Errorf("sample %d: label %d, want %d", s, a.Labels[s], set.Labels[i])
		}
		ex := set.Example(i)
		for k := range set.T {
			for f := range set.F {
				if a.Input[s][k][f] != ex[k*set.F+f] {
					t.Fatalf("input of sample %d differs at bin %d feature %d", s, k, f)
				}
			}
		}
	}
	direct := directForward(t, dir, r, idx)
	spikes := 0
	for l, tr := range a.Hidden {
		checkShape(t, fmt.Sprintf("layer %d", l), tr, 3, set.T, 6)
		for s := range tr {
			for k := range tr[s] {
				for n, v := range tr[s][k] {
					if v != 0 && v != 1 {
						t.Fatalf("layer %d sample %d bin %d neuron %d: spike value %g", l, s, k, n, v)
					}
					if v != direct[l][(s*set.T+k)*6+n] {
						t.Fatalf("layer %d sample %d bin %d neuron %d: %g, the direct forward pass gives %g", l, s, k, n, v, direct[l][(s*set.T+k)*6+n])
					}
					spikes += int(v)
				}
			}
		}
	}
	if spikes == 0 {
		t.Error("no spike at all: the comparison is vacuous")
	}
	// The same examples in the batch of all of them give the same spikes.
	for l := range a.Hidden {
		for s, i := range idx {
			for k := range set.T {
				if !slices.Equal(a.Hidden[l][s][k], all.Hidden[l][i][k]) {
					t.Fatalf("layer %d example %d bin %d: spikes depend on the batch", l, i, k)
				}
			}
		}
	}
}

// directForward builds the run's feedforward network by hand (model.FeedForward with the neuron
// constants of train.NeuronConfig) on a separately loaded checkpoint and returns each hidden layer's
// spikes for the test examples idx, flat [sample, time, neuron].
func directForward(t *testing.T, dir string, r *Run, idx []int) [][]float32 {
	t.Helper()
	ds, err := r.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	scope := mlmodel.NewStore().RootScope()
	if _, err := checkpoint.Load(scope.Store()).Dir(dir).Done(); err != nil {
		t.Fatal(err)
	}
	cfg := model.DefaultConfig(neuron.FSTS, 1, 6, ds.Classes)
	if cfg.Neuron, err = train.NeuronConfig(neuron.FSTS, 1, ds); err != nil {
		t.Fatal(err)
	}
	e, err := mlmodel.NewExec(testBackend(t), scope.Store(), func(_ *mlmodel.Scope, x *graph.Node) []*graph.Node {
		neuron.SetTraining(scope, x.Graph(), false)
		return model.FeedForward(scope.At("model"), cfg, x).Spikes
	})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := e.Call(batch(ds.Test, idx))
	if err != nil {
		t.Fatal(err)
	}
	var flat [][]float32
	for _, o := range outs {
		v, err := tensors.CopyFlatData[float32](o)
		if err != nil {
			t.Fatal(err)
		}
		flat = append(flat, v)
	}
	return flat
}

func TestSpikesErrors(t *testing.T) {
	dir, _ := trainedRun(t, "fsts", 1)
	r := load(t, dir)
	for _, tc := range []struct {
		name  string
		split Split
		idx   []int
	}{
		{"unknown split", "holdout", []int{0}},
		{"no validation under best-test", SplitVal, []int{0}},
		{"index too large", SplitTest, []int{0, 32}},
		{"negative index", SplitTrain, []int{-1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if a, err := r.Spikes(tc.split, tc.idx); err == nil {
				t.Errorf("Spikes(%q, %v) = %v, want an error", tc.split, tc.idx, a)
			}
		})
	}
}

func TestTrainsRates(t *testing.T) {
	tr := Trains{
		{{1, 0}, {1, 1}},
		{{0, 0}, {1, 0}},
	}
	if got := tr.Rates(); !equal(got, []float64{0.75, 0.25}, 0) {
		t.Errorf("rates %v", got)
	}
	if got := tr.MeanRate(); got != 0.5 {
		t.Errorf("mean rate %g", got)
	}
	if Trains(nil).Rates() != nil || Trains(nil).MeanRate() != 0 {
		t.Error("empty trains")
	}
}

func checkShape(t *testing.T, name string, tr Trains, samples, time, units int) {
	t.Helper()
	if len(tr) != samples {
		t.Fatalf("%s: %d samples, want %d", name, len(tr), samples)
	}
	for s := range tr {
		if len(tr[s]) != time {
			t.Fatalf("%s sample %d: %d bins, want %d", name, s, len(tr[s]), time)
		}
		for k := range tr[s] {
			if len(tr[s][k]) != units {
				t.Fatalf("%s sample %d bin %d: %d units, want %d", name, s, k, len(tr[s][k]), units)
			}
		}
	}
}

// equal reports whether a and b have the same length and agree within the relative tolerance tol.
func equal(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*math.Max(math.Abs(a[i]), math.Abs(b[i])) {
			return false
		}
	}
	return true
}
