package train

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/synth"
	fitsmodel "github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/internal/hostinfo"
	"github.com/fits-snn/fits/internal/owned"
	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

func testBackend(t testing.TB) compute.Backend { return xlatest.XLA(t) }

// tinyDataset is a synthetic task small enough that a training graph compiles in seconds: 8 bins, 140
// channels, 4 classes.
func tinyDataset(t testing.TB) *data.Dataset {
	t.Helper()
	c := synth.SmallConfig()
	c.T, c.Classes = 8, 4
	c.Onsets, c.OnsetJitter = []float64{0}, 0
	c.Train, c.Val, c.Test = 40, 8, 12
	ds, err := synth.Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func tinyConfig() Config {
	c := DefaultConfig()
	c.Model, c.Width, c.Batch, c.Epochs, c.LR, c.Dropout = "lif", 4, 16, 3, 0.01, 0.3
	c.Protocol = ValSplit
	return c
}

// trainedIn trains cfg on tinyDataset, uninterrupted, into a new folder and returns the options that name
// it and the run's result.
func trainedIn(t *testing.T, cfg Config) (Options, *Result) {
	t.Helper()
	opts := Options{Backend: testBackend(t), Dataset: tinyDataset(t), Dir: t.TempDir()}
	res, err := TrainModel(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return opts, res
}

// trainTiny is trainedIn of tinyConfig: base are its options without the folder, full with it.
func trainTiny(t *testing.T) (cfg Config, ds *data.Dataset, base, full Options, want *Result) {
	t.Helper()
	cfg = tinyConfig()
	full, want = trainedIn(t, cfg)
	base = full
	base.Dir = ""
	return cfg, full.Dataset, base, full, want
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(*Config)
	}{
		{"unknown dataset", "synthetic", func(c *Config) { c.Dataset = "nope" }},
		{"unknown model", "fs-frozen", func(c *Config) { c.Model = "izhikevich" }},
		{"unknown protocol", "official-val", func(c *Config) { c.Protocol = "cv" }},
		{"unknown readout", "li-max", func(c *Config) { c.Readout = "last" }},
		{"fsts without m", "M >= 1", func(c *Config) { c.Model = "fsts" }},
		{"fs with m", "no TS module", func(c *Config) { c.M = 1 }},
		{"width", "width", func(c *Config) { c.Width = 0 }},
		{"epochs", "epochs", func(c *Config) { c.Epochs = 0 }},
		{"batch", "batch", func(c *Config) { c.Batch = 0 }},
		{"lr", "learning rate", func(c *Config) { c.LR = 0 }},
		{"dropout", "dropout", func(c *Config) { c.Dropout = 1 }},
		{"train limit", "limits", func(c *Config) { c.TrainLimit = -1 }},
		{"test limit", "limits", func(c *Config) { c.TestLimit = -5 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestConfigParamsRoundTrip(t *testing.T) {
	c := Config{Dataset: "synthetic", Small: true, TrainLimit: 9, TestLimit: 4, Model: "fsts", M: 2, Width: 33, Epochs: 7, Batch: 5,
		LR: 1.5e-3, Dropout: 0.25, Seed: 42, Protocol: OfficialVal, Readout: "li-max", TargetLRScale: 44}
	scope := model.NewStore().RootScope()
	c.SetParams(scope)
	if got := ConfigFromContext(scope); got != c {
		t.Errorf("round trip gave %+v, want %+v", got, c)
	}
}

func TestLoadDatasetLimits(t *testing.T) {
	ds := tinyDataset(t)
	cfg := DefaultConfig()
	cfg.TrainLimit, cfg.TestLimit = 10, 3
	got, err := LoadDataset(cfg, Options{Dataset: ds})
	if err != nil {
		t.Fatal(err)
	}
	if got.Train.N != 10 || got.Test.N != 3 || got.Val != ds.Val || ds.Train.N == 10 {
		t.Fatalf("train %d, test %d examples (of %d, %d); validation kept: %v", got.Train.N, got.Test.N, ds.Train.N, ds.Test.N, got.Val == ds.Val)
	}
	for i := range got.Train.N {
		if got.Train.Labels[i] != ds.Train.Labels[i] {
			t.Fatalf("training example %d has label %d, want the dataset's first examples", i, got.Train.Labels[i])
		}
	}
	cfg.TrainLimit, cfg.TestLimit = 0, 0
	if got, _ := LoadDataset(cfg, Options{Dataset: ds}); got != ds {
		t.Error("no limits: the dataset should be used as it is")
	}
}

func TestProtocolSplits(t *testing.T) {
	ds := tinyDataset(t)
	for _, tc := range []struct {
		p              Protocol
		train, val     int
		valIsOfficial  bool
		wantErrWithout bool
	}{
		{BestTest, 40, 0, false, false},
		{ValSplit, 32, 8, false, false},
		{OfficialVal, 40, 8, true, true},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			sp, err := protocolSplits(withProtocol(tc.p), ds)
			if err != nil {
				t.Fatal(err)
			}
			if sp.train.N != tc.train || sp.test != ds.Test {
				t.Errorf("train %d examples (want %d), test is the dataset's: %v", sp.train.N, tc.train, sp.test == ds.Test)
			}
			switch {
			case tc.val == 0 && sp.val != nil:
				t.Error("best-test has a validation split")
			case tc.val > 0 && (sp.val == nil || sp.val.N != tc.val):
				t.Errorf("validation split %v, want %d examples", sp.val, tc.val)
			case tc.valIsOfficial && sp.val != ds.Val:
				t.Error("official-val does not use the dataset's validation split")
			}
			noVal := *ds
			noVal.Val = nil
			if _, err := protocolSplits(withProtocol(tc.p), &noVal); (err != nil) != tc.wantErrWithout {
				t.Errorf("without an official validation split: error %v", err)
			}
		})
	}
	// val-split holds out the same examples for every run: the released split, the first
	// max(1, int(0.2n)) of numpy's RandomState(0).permutation(n) (data.OfficialValSplit); the legacy
	// stratified split holds out others.
	a, _ := protocolSplits(withProtocol(ValSplit), ds)
	b, _ := protocolSplits(withProtocol(ValSplit), ds)
	if !slices.Equal(a.val.Dense(), b.val.Dense()) {
		t.Error("val-split is not fixed")
	}
	idx, _, err := data.OfficialValSplit(ds.Train.N, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := ds.Train.Subset(idx); !slices.Equal(a.val.Dense(), want.Dense()) || !slices.Equal(a.val.Labels, want.Labels) {
		t.Error("val-split does not hold out the released split")
	}
	legacy := withProtocol(ValSplit).Legacy()
	c, _ := protocolSplits(legacy, ds)
	if c.val.N != a.val.N || slices.Equal(c.val.Dense(), a.val.Dense()) {
		t.Errorf("the stratified split (%d examples) should hold out as many but other examples than the released one (%d)", c.val.N, a.val.N)
	}
}

// withProtocol returns DefaultConfig with protocol p.
func withProtocol(p Protocol) Config {
	c := DefaultConfig()
	c.Protocol = p
	return c
}

func TestSummarize(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &Result{Protocol: ValSplit, Epochs: []Epoch{
		{Epoch: 1, ValAcc: f(0.5), TestAcc: 0.4, EvalFiringRates: []float64{0.1}},
		{Epoch: 2, ValAcc: f(0.7), TestAcc: 0.6, EvalFiringRates: []float64{0.2}},
		{Epoch: 3, ValAcc: f(0.7), TestAcc: 0.9, EvalFiringRates: []float64{0.3}}, // tie: the first wins
		{Epoch: 4, ValAcc: f(0.6), TestAcc: 0.8, EvalFiringRates: []float64{0.4}},
	}}
	r.summarize()
	if *r.BestValAcc != 0.7 || *r.TestAccAtBestVal != 0.6 || r.BestEpoch != 2 || r.BestTestAcc != 0.9 ||
		r.FinalTestAcc != 0.8 || r.FiringRates[0] != 0.2 || r.FinalFiringRates[0] != 0.4 {
		t.Errorf("val-split summary: best val %v at epoch %d, test there %v, best test %v, final %v, rates %v (selected) %v (final)",
			*r.BestValAcc, r.BestEpoch, *r.TestAccAtBestVal, r.BestTestAcc, r.FinalTestAcc, r.FiringRates, r.FinalFiringRates)
	}
	bt := &Result{Protocol: BestTest, Epochs: []Epoch{{Epoch: 1, TestAcc: 0.3}, {Epoch: 2, TestAcc: 0.5}, {Epoch: 3, TestAcc: 0.5}}}
	bt.summarize()
	if bt.BestValAcc != nil || bt.TestAccAtBestVal != nil || bt.BestTestAcc != 0.5 || bt.BestEpoch != 2 {
		t.Errorf("best-test summary: %+v", bt)
	}
}

// TestResumeRemovesOwnUnfinishedSaves: a resume removes the incomplete checkpoints that the run's record
// lists as its own (what a killed save left) and leaves a complete checkpoint without checksums that the
// run did not write where it is, unused.
func TestResumeRemovesOwnUnfinishedSaves(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	layout := `{"BinFormat":"uncompressed","Variables":[{"Pos":0,"Length":8},{"Pos":8,"Length":4}]}`
	write("checkpoint-n0000001-a.json", layout) // complete
	write("checkpoint-n0000001-a.bin", "123456789012")
	write("checkpoint-n0000002-b.json", "") // killed before the JSON was written
	write("checkpoint-n0000002-b.bin", "12345")
	write("checkpoint-n0000003-c.json", layout) // binary file cut short
	write("checkpoint-n0000003-c.bin", "1234")
	write("checkpoint-n0000004-d.bin", "123") // binary without JSON
	write("result.json", "{}")
	var run []string // the files of b, c and d are the run's own unfinished saves
	for _, n := range []string{"b", "c", "d"} {
		for _, f := range names(t, dir) {
			if strings.HasPrefix(f, "checkpoint-n000000") && strings.Contains(f, "-"+n+".") {
				run = append(run, f)
			}
		}
	}
	if err := owned.Note(dir, run...); err != nil {
		t.Fatal(err)
	}
	plan, err := prepareResume(Options{Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{owned.RecordFile, "checkpoint-n0000001-a.bin", "checkpoint-n0000001-a.json", "result.json"}
	if got := names(t, dir); plan.from != nil || len(plan.unused) != 1 || !slices.Equal(got, want) {
		t.Errorf("after prepareResume: from %v, unused %+v, files %v; want none, a unused, files %v", plan.from, plan.unused, got, want)
	}
	if HasCheckpoint(dir) || HasCheckpoint(t.TempDir()) { // the complete one has no checksums: untrusted
		t.Error("HasCheckpoint")
	}
}

// crashAfterEpoch is a progress function that aborts the run (as a killed process would) once the given
// epoch is finished and checkpointed.
type crash struct{}

func crashAfterEpoch(epoch int) ProgressFunc {
	return func(p Progress) {
		if p.Phase == PhaseEpoch && p.Epoch == epoch {
			panic(crash{})
		}
	}
}

func trainUntilCrash(t *testing.T, cfg Config, opts Options) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
		}
	}()
	if _, err := TrainModel(cfg, opts); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the run did not crash")
}

// metrics returns the epochs without their wall times.
func metrics(r *Result) []Epoch {
	out := slices.Clone(r.Epochs)
	for i := range out {
		out[i].Seconds = 0
	}
	return out
}

func equalEpochs(a, b []Epoch) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Epoch != y.Epoch || x.Loss != y.Loss || x.TrainAcc != y.TrainAcc || x.TestAcc != y.TestAcc ||
			x.LR != y.LR || (x.ValAcc == nil) != (y.ValAcc == nil) || (x.ValAcc != nil && *x.ValAcc != *y.ValAcc) ||
			!slices.Equal(x.FiringRates, y.FiringRates) || !slices.Equal(x.EvalFiringRates, y.EvalFiringRates) {
			return false
		}
	}
	return true
}

// TestResumeNaNAndEvaluate trains a tiny network three ways — uninterrupted, crashed after the first epoch
// and resumed, and resumed on data that makes the loss NaN — and evaluates the checkpoint.
func TestResumeNaNAndEvaluate(t *testing.T) {
	cfg, ds, base, full, want := trainTiny(t) // uninterrupted
	if len(want.Epochs) != cfg.Epochs || want.BestValAcc == nil || want.ParameterCount != 140*4+4+4*4+4+4*4+4 {
		t.Fatalf("result: %d epochs, best val %v, %d parameters", len(want.Epochs), want.BestValAcc, want.ParameterCount)
	}
	if got, err := ReadResult(full.Dir); err != nil || !equalEpochs(got.Epochs, want.Epochs) {
		t.Errorf("result.json does not hold the returned result (%v)", err)
	}
	if want.Epochs[0].LR <= want.Epochs[2].LR || want.Epochs[2].LR <= 0 {
		t.Errorf("learning rate not cosine-annealed: %g, %g, %g", want.Epochs[0].LR, want.Epochs[1].LR, want.Epochs[2].LR)
	}

	// The same directory again without Resume is refused.
	if _, err := TrainModel(cfg, full); !errors.Is(err, ErrRunExists) {
		t.Errorf("second run into the same directory: %v, want ErrRunExists", err)
	}

	// Crash after epoch 1, keep a copy of that state, resume: same curves as uninterrupted.
	crashed := base
	crashed.Dir = t.TempDir()
	crashed.Progress = crashAfterEpoch(1)
	trainUntilCrash(t, cfg, crashed)
	nanDir := t.TempDir()
	copyDir(t, crashed.Dir, nanDir)
	other := cfg
	other.Seed, other.Epochs = 99, 50 // ignored: the checkpoint's configuration wins
	resumed := base
	resumed.Dir, resumed.Resume = crashed.Dir, true
	got, err := TrainModel(other, resumed)
	if err != nil {
		t.Fatal(err)
	}
	if !equalEpochs(metrics(got), metrics(want)) {
		t.Errorf("resumed run differs from the uninterrupted one:\n got %+v\nwant %+v", metrics(got), metrics(want))
	}

	// NaN inputs in epoch 2: training stops with a NaNError and the epoch-1 checkpoint stays.
	bad := *ds
	nan := make([]float32, ds.Train.N*ds.Train.T*ds.Train.F)
	for i := range nan {
		nan[i] = float32(math.NaN())
	}
	bad.Train = data.NewFloat32Set(nan, slices.Clone(ds.Train.Labels), ds.Train.T, ds.Train.F)
	before := listDir(t, nanDir, true)
	nanOpts := base
	nanOpts.Dir, nanOpts.Resume, nanOpts.Dataset = nanDir, true, &bad
	_, err = TrainModel(cfg, nanOpts)
	var nanErr *NaNError
	if !errors.As(err, &nanErr) || nanErr.Epoch != 2 || nanErr.LastGood != 1 ||
		!strings.Contains(err.Error(), "NaN") || !strings.Contains(err.Error(), "epoch 1") {
		t.Fatalf("NaN run: %v", err)
	}
	if after := listDir(t, nanDir, true); !slices.Equal(before, after) {
		t.Errorf("checkpoint files changed by the failed run: %v -> %v", before, after)
	}

	// Evaluate the intact epoch-1 checkpoint and the finished run.
	ev, err := Evaluate(nanDir, base)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Epoch != 1 || ev.ValAcc == nil || len(ev.FiringRates) != 2 {
		t.Errorf("evaluation of the epoch-1 checkpoint: %+v", ev)
	}
	ev, err = Evaluate(full.Dir, base)
	if err != nil {
		t.Fatal(err)
	}
	last := want.Epochs[len(want.Epochs)-1]
	if ev.Epoch != cfg.Epochs || ev.TestAcc != last.TestAcc || *ev.ValAcc != *last.ValAcc {
		t.Errorf("evaluation of the finished run: epoch %d test %g val %g; training measured test %g val %g",
			ev.Epoch, ev.TestAcc, *ev.ValAcc, last.TestAcc, *last.ValAcc)
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// listDir returns the names of dir's entries, each with ":" and its modification time when withTimes.
func listDir(t *testing.T, dir string, withTimes bool) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if withTimes {
			info, _ := e.Info()
			name += ":" + info.ModTime().String()
		}
		out = append(out, name)
	}
	return out
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// TestRunMemoryLimit: a run's memory estimate is compared with this machine's memory where /proc/meminfo
// gives it (issue 34: not a fixed 64 GiB, which a 24 GB machine cannot hold).
func TestRunMemoryLimit(t *testing.T) {
	limit, what := RunMemoryLimit()
	if mem, ok := hostinfo.MemTotalBytes(); ok {
		if limit != mem || !strings.Contains(what, "machine's memory") {
			t.Errorf("limit %d (%s), want the machine's %d bytes", limit, what, mem)
		}
		return
	}
	if limit != MaxRunMemory {
		t.Errorf("limit %d where the machine's memory is unknown, want MaxRunMemory", limit)
	}
}

// TestNonFiniteGradients: the gradients that hold a NaN or an infinity are found and named, sorted; the
// error says the backward pass overflowed with a finite loss and names at most four of them.
func TestNonFiniteGradients(t *testing.T) {
	inf := float32(math.Inf(1))
	grads := map[string]*tensors.Tensor{
		"/model/readout/dense/weights": tensors.FromValue([]float32{1, 2}),
		"/model/hidden_0/neuron/beta":  tensors.FromValue([]float32{1, float32(math.NaN())}),
		"/model/hidden_0/dense/biases": tensors.FromValue([]float32{-inf}),
	}
	got := nonFinite(grads)
	if want := []string{"/model/hidden_0/dense/biases", "/model/hidden_0/neuron/beta"}; !slices.Equal(got, want) {
		t.Errorf("nonFinite = %v, want %v", got, want)
	}
	if bad := nonFinite(map[string]*tensors.Tensor{"/w": tensors.FromValue([]float32{0, -1e38})}); bad != nil {
		t.Errorf("finite gradients reported: %v", bad)
	}
	err := &NaNError{Epoch: 20, Step: 134, Dir: "R", LastGood: 19, Gradients: []string{"/a", "/b", "/c", "/d", "/e", "/f"}}
	msg := err.Error()
	for _, want := range []string{"the gradients of /a, /b, /c, /d, 2 more are NaN or infinite at epoch 20, step 134", "finite loss", "the checkpoint of epoch 19 in R is intact"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// poisonEngine is an engine whose gradients of one variable are NaN at the given calls of Gradients
// (1-based, counted over the engine's life): the overflow of a backward pass, where it happens.
type poisonEngine struct {
	step.Engine
	calls    int
	poisoned []int
}

func (p *poisonEngine) Gradients(b step.Batch) (step.Metrics, map[string]*tensors.Tensor, error) {
	m, grads, err := p.Engine.Gradients(b)
	p.calls++
	if err != nil || !slices.Contains(p.poisoned, p.calls) {
		return m, grads, err
	}
	const name = "/model/hidden_0/dense/weights"
	g := grads[name]
	nan := make([]float32, g.Shape().Size())
	for i := range nan {
		nan[i] = float32(math.NaN())
	}
	grads[name] = tensors.FromFlatDataAndDimensions(nan, g.Shape().Dimensions...)
	g.MustFinalizeAll()
	return m, grads, nil
}

// TestSkipNonFiniteGradients: a step whose gradients are not finite while its loss is (the second of
// epoch 1 and the first of epoch 2 here) stops the run with a NaNError naming the variable by default;
// with SkipNonFiniteGradients its update is skipped, recorded in its epoch's SkippedSteps and reported
// through Warn, and training goes on with finite weights.
func TestSkipNonFiniteGradients(t *testing.T) {
	b := testBackend(t)
	ds := tinyDataset(t)
	cfg := tinyConfig()
	cfg.Epochs = 2
	poisoned := []int{2, 3} // two steps per epoch: 32 training examples (the validation split is off), batch 16
	orig := newEngine
	defer func() { newEngine = orig }()
	newEngine = func(name string, b compute.Backend, s *model.Scope, n fitsmodel.Net, o step.Options) (step.Engine, error) {
		e, err := step.New(name, b, s, n, o)
		return &poisonEngine{Engine: e, poisoned: poisoned}, err
	}

	_, err := TrainModel(cfg, Options{Backend: b, Dataset: ds})
	var nanErr *NaNError
	if !errors.As(err, &nanErr) || nanErr.Epoch != 1 || nanErr.Step != 2 ||
		!slices.Equal(nanErr.Gradients, []string{"/model/hidden_0/dense/weights"}) {
		t.Fatalf("default: %v, want a NaNError at epoch 1, step 2 naming the poisoned variable", err)
	}

	var warnings []string
	got, err := TrainModel(cfg, Options{Backend: b, Dataset: ds, SkipNonFiniteGradients: true,
		Warn: func(line string) { warnings = append(warnings, line) }})
	if err != nil {
		t.Fatalf("with SkipNonFiniteGradients: %v", err)
	}
	if len(got.Epochs) != 2 || !slices.Equal(got.Epochs[0].SkippedSteps, []int{2}) ||
		!slices.Equal(got.Epochs[1].SkippedSteps, []int{1}) {
		t.Fatalf("skipped steps: %+v", got.Epochs)
	}
	for _, e := range got.Epochs {
		// Epoch 1's last step is skipped: its learning rate is that of the step before, not the 0 the skipped
		// step applied.
		if math.IsNaN(e.Loss) || math.IsNaN(e.TestAcc) || !(e.LR > 0) {
			t.Errorf("epoch %d: loss %g, test accuracy %g, lr %g", e.Epoch, e.Loss, e.TestAcc, e.LR)
		}
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "epoch 1, step 2") || !strings.Contains(warnings[0], "update skipped") {
		t.Errorf("warnings %q, want one per skipped step", warnings)
	}
}
