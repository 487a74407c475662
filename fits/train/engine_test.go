package train

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/step"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// oneStep runs one training step of cfg on the first batch of the tiny dataset from the seeded initial
// variables and returns the step's outputs and the model's variables after the update, by name.
func oneStep(t *testing.T, cfg Config) ([]float64, map[string][]float32) {
	t.Helper()
	r, sp, scope := testRunner(t, cfg, tinyDataset(t), testBackend(t))
	defer r.close()
	r.fill(sp.train, epochOrder(sp.train.N, cfg.Seed, 0)[:cfg.Batch-3]) // with 3 padded examples
	m, lr, err := r.trainStep()
	if err != nil {
		t.Fatal(err)
	}
	vals := append([]float64{m.LossSum, m.Correct, lr}, m.Rates...)
	vars := map[string][]float32{}
	for _, v := range step.TrainableIn(scope, scope.At("%s", modelScope).Scope()) {
		val, err := tensors.CopyFlatData[float32](v.MustValue())
		if err != nil {
			t.Fatal(err)
		}
		vars[v.Path()] = val
	}
	return vals, vars
}

// TestEnginesMatchUnrolledStep checks that one training step (dropout 0.5, padded examples) with the
// default engine (step.Default: fused on XLA CPU), the chunked and the loop engine gives the loss, metrics
// and Adam-updated variables of the unrolled engine.
func TestEnginesMatchUnrolledStep(t *testing.T) {
	for _, tc := range []struct {
		model   string
		m       int
		readout string
	}{{"lif", 0, "mean"}, {"fsts", 2, "li-max"}} {
		t.Run(tc.model, func(t *testing.T) {
			cfg := tinyConfig()
			cfg.Model, cfg.M, cfg.Dropout, cfg.Readout = tc.model, tc.m, 0.5, tc.readout
			cfg.Executor = ExecutorUnrolled
			valsU, varsU := oneStep(t, cfg)
			for _, executor := range []string{"", ExecutorChunked, ExecutorLoop} {
				cfg.Executor = executor
				valsC, varsC := oneStep(t, cfg)
				compareSteps(t, valsU, valsC, varsU, varsC)
			}
		})
	}
}

// compareSteps compares the outputs and updated variables of a training step with the unrolled engine's.
func compareSteps(t *testing.T, valsU, valsC []float64, varsU, varsC map[string][]float32) {
	t.Helper()
	if len(valsU) != len(valsC) {
		t.Fatalf("%d outputs unrolled, %d other", len(valsU), len(valsC))
	}
	for i := range valsU {
		if d := math.Abs(valsU[i] - valsC[i]); d > 1e-5*math.Abs(valsU[i])+1e-6 {
			t.Errorf("output %d: unrolled %v, other %v", i, valsU[i], valsC[i])
		}
	}
	if len(varsU) == 0 || len(varsU) != len(varsC) {
		t.Fatalf("%d variables unrolled, %d other", len(varsU), len(varsC))
	}
	for name, u := range varsU {
		c, ok := varsC[name]
		if !ok || len(c) != len(u) {
			t.Fatalf("variable %s missing or of another size in the other run", name)
		}
		for i := range u {
			if d := math.Abs(float64(u[i] - c[i])); d > 1e-5*math.Abs(float64(u[i]))+1e-6 {
				t.Fatalf("%s[%d]: unrolled %v, other %v", name, i, u[i], c[i])
			}
		}
	}
}

// TestDefaultTrainDeterministic trains twice with the default engine (with dropout) and compares the
// curves; the result names the engine step.Default chose.
func TestDefaultTrainDeterministic(t *testing.T) {
	cfg := tinyConfig()
	cfg.Epochs = 2
	var curves [2][]Epoch
	for i := range curves {
		b := testBackend(t)
		res, err := TrainModel(cfg, Options{Backend: b, Dataset: tinyDataset(t)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Engine != step.Default(b) {
			t.Errorf("result names engine %q, want %q", res.Engine, step.Default(b))
		}
		curves[i] = res.Epochs
		for j := range curves[i] {
			curves[i][j].Seconds = 0
		}
	}
	if len(curves[0]) != 2 {
		t.Fatalf("%d epochs, want 2", len(curves[0]))
	}
	for j := range curves[0] {
		a, b := curves[0][j], curves[1][j]
		if a.Loss != b.Loss || a.TrainAcc != b.TrainAcc || a.TestAcc != b.TestAcc || a.LR != b.LR ||
			!slices.Equal(a.FiringRates, b.FiringRates) || !(a.Loss > 0) {
			t.Errorf("epoch %d differs or is empty: %+v vs %+v", j+1, a, b)
		}
	}
}

// TestExecutorValidate checks the executor names and the chunk length.
func TestExecutorValidate(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(*Config)
	}{
		{"unknown", "chunked, stepwise, unrolled", func(c *Config) { c.Executor = "fast" }},
		{"chunk", "chunk", func(c *Config) { c.Chunk = -1 }},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	for _, e := range []string{"", ExecutorUnrolled, ExecutorChunked, ExecutorStepwise} {
		c := DefaultConfig()
		c.Executor = e
		if err := c.Validate(); err != nil {
			t.Errorf("executor %q: %v", e, err)
		}
	}
	c := DefaultConfig()
	c.Executor, c.Chunk, c.Dropout, c.Readout = ExecutorStepwise, 4, 0.4, "li-mean"
	scope, err := newContext(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := ConfigFromContext(scope); got != c {
		t.Errorf("config from context %+v, want %+v", got, c)
	}
}

// testRunner returns the runner of cfg on ds and backend, with ds's splits and the scope (newContext) of
// the runner's variables.
func testRunner(tb testing.TB, cfg Config, ds *data.Dataset, backend compute.Backend) (*runner, splits, *mlmodel.Scope) {
	tb.Helper()
	scope, err := newContext(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	sp, err := protocolSplits(cfg, ds)
	if err != nil {
		tb.Fatal(err)
	}
	net, err := NewNetwork(cfg, ds)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := newRunner(cfg, sp, net, scope, backend)
	if err != nil {
		tb.Fatal(err)
	}
	return r, sp, scope
}

// newContext returns a scope holding cfg as hyperparameters, with its random number generator seeded
// from cfg.Seed (initialization and dropout masks).
func newContext(cfg Config) (*mlmodel.Scope, error) {
	scope, err := loadContext(cfg.Seed)
	if err != nil {
		return nil, err
	}
	cfg.SetParams(scope)
	return scope, nil
}

// Executor names (Config.Executor): the engines of package fits/step.
const (
	ExecutorChunked  = step.Chunked
	ExecutorStepwise = step.Stepwise
	ExecutorUnrolled = step.Unrolled
	ExecutorFused    = step.Fused
	ExecutorLoop     = step.Loop
)
