package scan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// adjointCase is a layer and a chunk to hold Forward and Backward to neuron.LayerFrom and its autodiff.
type adjointCase struct {
	name  string
	cfg   neuron.Config
	dims  []int // current [batch, K, d…]
	dtype dtypes.DType
	// recompute passes saved = nil to Backward.
	recompute bool
	// xla: also run on XLA CPU (every case runs on SimpleGo, which does not compile).
	xla bool
}

func config(kind neuron.Kind, order int, edit func(*neuron.Config)) neuron.Config {
	c := neuron.DefaultConfig(kind, order)
	if edit != nil {
		edit(&c)
	}
	return c
}

func detach(c *neuron.Config) { c.DetachReset = true }

// adjointCases are, for every registered kind (M = 1, 2, 3 for kinds with a TS module, M = 0 otherwise),
// the reset attached and detached, per-neuron parameters [batch, 9, 4] in float64; and the variants:
// per-channel parameters [batch, 7, H, W, C], the DT-exact FS with r = 2.5, a one-step chunk, Backward
// recomputing its forward values, and float32.
func adjointCases(t *testing.T) []adjointCase {
	f64, f32 := dtypes.Float64, dtypes.Float32
	var cases []adjointCase
	xla := map[string]bool{"lif": true, "fs": true, "fsts M=2": true}
	for _, kind := range neuron.Kinds() {
		orders := []int{0}
		if kind.CheckOrder(0) != nil {
			orders = []int{1, 2, 3}
		}
		for _, m := range orders {
			name := kind.String()
			if m > 0 {
				name = fmt.Sprintf("%s M=%d", kind, m)
			}
			cases = append(cases,
				adjointCase{name, config(kind, m, nil), []int{3, 9, 4}, f64, false, xla[name]},
				adjointCase{name + " detached", config(kind, m, detach), []int{3, 9, 4}, f64, false, false})
		}
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases: the paper's kinds are not all registered", len(cases))
	}
	return append(cases,
		adjointCase{"fsts M=2 channel-shared", config(neuron.FSTS, 2, func(c *neuron.Config) { c.ChannelShared = true }),
			[]int{2, 7, 2, 3, 3}, f64, false, true},
		adjointCase{"adaptlif channel-shared", config(neuron.AdaptLIF, 0, func(c *neuron.Config) { c.ChannelShared = true }),
			[]int{2, 7, 3, 2}, f64, false, false},
		adjointCase{"fs dt-exact r=2.5", config(neuron.FS, 0, func(c *neuron.Config) { c.DTExact, c.EtaGammaRatio = true, 2.5 }),
			[]int{3, 9, 4}, f64, false, false},
		adjointCase{"fsts M=2 one step", config(neuron.FSTS, 2, nil), []int{4, 1, 5}, f64, false, false},
		adjointCase{"fsts M=3 detached, recomputed", config(neuron.FSTS, 3, detach), []int{3, 9, 4}, f64, true, false},
		adjointCase{"fsts M=2 float32", config(neuron.FSTS, 2, nil), []int{3, 9, 4}, f32, false, true},
	)
}

func size(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// newTensor returns a tensor of dtype (Float32 or Float64) with the given values and dimensions.
func newTensor(dtype dtypes.DType, values []float64, dims ...int) *tensors.Tensor {
	if dtype == dtypes.Float32 {
		f := make([]float32, len(values))
		for i, v := range values {
			f[i] = float32(v)
		}
		return tensors.FromFlatDataAndDimensions(f, dims...)
	}
	return tensors.FromFlatDataAndDimensions(append([]float64(nil), values...), dims...)
}

func values(t *testing.T, x *tensors.Tensor) []float64 {
	t.Helper()
	switch x.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](x)
	case dtypes.Float32:
		f := tensors.MustCopyFlatData[float32](x)
		out := make([]float64, len(f))
		for i, v := range f {
			out[i] = float64(v)
		}
		return out
	}
	t.Fatalf("unexpected dtype %s", x.DType())
	return nil
}

func random(rng *rand.Rand, n int, draw func() float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = draw()
	}
	return out
}

// setRandomVariables creates the layer's variables (those its cell declares) in scope with random values:
// Ω* (or Ω*_DT) for f* uniform in [1, min(60, fmax)] Hz, β̂ in [−1.5, 1.5], λ̂ in [−3, 2], η and γ in
// [5, 40] 1/s. A kind with a variable not listed here fails the test: add its range.
func setRandomVariables(t testing.TB, scope *model.Scope, rng *rand.Rand, cfg neuron.Config, dtype dtypes.DType, pshape []int) {
	t.Helper()
	cell, err := cfg.Kind.Cell()
	if err != nil {
		t.Fatal(err)
	}
	p := size(pshape)
	ts := append([]int{cfg.Order}, pshape...)
	uniform := func(n int, lo, hi float64) []float64 {
		return random(rng, n, func() float64 { return lo + (hi-lo)*rng.Float64() })
	}
	for _, name := range cell.Variables(cfg) {
		switch name {
		case neuron.VarEta, neuron.VarGamma:
			scope.VariableWithValue(name, newTensor(dtype, uniform(p, 5, 40), pshape...))
		case neuron.VarOmegaStar, neuron.VarOmegaStarDT, neuron.VarLogTargetHz, neuron.VarLogTargetHzDT:
			fmax, err := cfg.MaxTargetHz()
			if err != nil {
				t.Fatal(err)
			}
			f := uniform(p, 1, math.Min(60, fmax))
			for i := range f {
				f[i] = neuron.TargetValue(cfg, f[i])
			}
			scope.VariableWithValue(name, newTensor(dtype, f, pshape...))
		case neuron.VarBetaHat:
			scope.VariableWithValue(name, newTensor(dtype, uniform(cfg.Order*p, -1.5, 1.5), ts...))
		case neuron.VarLambdaHat:
			scope.VariableWithValue(name, newTensor(dtype, uniform(cfg.Order*p, -3, 2), ts...))
		default:
			t.Fatalf("kind %s: no random values for variable %q in this test", cfg.Kind, name)
		}
	}
}

// closeTo reports the first element where got and want differ by more than rtol·|want| + atol·max|want|.
func closeTo(got, want []float64, rtol, atol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	scale := 0.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= rtol*math.Abs(want[i])+atol*scale) {
			return fmt.Errorf("element %d: %.17g, want %.17g (|diff| %.3g, max |want| %.3g)", i, got[i], want[i], d, scale)
		}
	}
	return nil
}

func nonZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return true
		}
	}
	return false
}

// TestForwardBackwardMatchLayerFrom runs neuron.LayerFrom from a random non-zero state on random currents,
// differentiates Σ spikes·S̄ + Σ final·F̄ (random cotangents) with GoMLX autodiff, and holds Forward
// (identical spikes, equal final state) and Backward with VariableGrads (cotangents of the starting state,
// the current and every variable) to it; and, on XLA CPU, ForwardLoop and BackwardLoop, for every case.
func TestForwardBackwardMatchLayerFrom(t *testing.T) {
	for _, tb := range testBackends(t) {
		for ci, tc := range adjointCases(t) {
			for _, loop := range []bool{false, true} {
				if tb.Name == "xla:cpu" && !tc.xla && !loop || tb.Name != "xla:cpu" && loop {
					continue
				}
				name := tb.Name + "/" + tc.name
				if loop {
					name += "/loop"
				}
				matchLayerFrom(t, name, tb.Backend, ci, tc, loop)
			}
		}
	}
}

// matchLayerFrom is one case of TestForwardBackwardMatchLayerFrom, with the unrolled or the loop forms.
func matchLayerFrom(t *testing.T, name string, backend compute.Backend, ci int, tc adjointCase, loop bool) {
	t.Run(name, func(t *testing.T) {
		rtol, atol := 1e-10, 1e-12
		if tc.dtype == dtypes.Float32 {
			rtol, atol = 1e-5, 1e-6
		}
		rng := rand.New(rand.NewPCG(uint64(ci)+1, 13))
		pshape, err := neuron.ParamShape(tc.dims, tc.cfg.ChannelShared)
		if err != nil {
			t.Fatal(err)
		}
		scope := model.NewStore().RootScope()
		setRandomVariables(t, scope.At("neuron"), rng, tc.cfg, tc.dtype, pshape)
		n := neuron.StateComponents(tc.cfg)
		stepDims := append([]int{tc.dims[0]}, tc.dims[2:]...)
		normal := func(mean, sd float64) func() float64 {
			return func() float64 { return mean + sd*rng.NormFloat64() }
		}
		inputs := []any{newTensor(tc.dtype, random(rng, size(tc.dims), normal(0.9, 0.9)), tc.dims...)}
		for range n {
			inputs = append(inputs, newTensor(tc.dtype, random(rng, size(stepDims), normal(0.2, 0.5)), stepDims...))
		}
		inputs = append(inputs, newTensor(tc.dtype, random(rng, size(tc.dims), normal(0, 1)), tc.dims...))
		for range n {
			inputs = append(inputs, newTensor(tc.dtype, random(rng, size(stepDims), normal(0, 1)), stepDims...))
		}

		var names []string
		var nvars int
		exec := model.MustNewExec(backend, scope.Store(), func(_ *model.Scope, in []*Node) []*Node {
			g := in[0].Graph()
			nctx := scope.At("neuron")
			current, state0 := in[0], in[1:1+n]
			cotSpikes, cotFinal := in[1+n], in[2+n:2+2*n]

			// The oracle: the unrolled layer and GoMLX autodiff.
			spikes, final := neuron.LayerFrom(nctx, current, tc.cfg, state0)
			obj := ReduceAllSum(Mul(spikes, cotSpikes))
			for j := range final {
				obj = Add(obj, ReduceAllSum(Mul(final[j], cotFinal[j])))
			}
			c, vars, varNames := coefficientsOf(t, nctx, g, tc.cfg, tc.dtype, pshape)
			names, nvars = varNames, len(vars)
			want := Gradient(obj, append(append(append([]*Node{}, state0...), current), vars...)...)

			// The hand-derived adjoint.
			fwd, bwd := Forward, Backward
			if loop {
				fwd, bwd = ForwardLoop, BackwardLoop
			}
			gotSpikes, gotFinal, saved := fwd(c, current, state0)
			if tc.recompute {
				saved = nil
			}
			cotState0, cotCurrent, cot := bwd(c, current, state0, saved, cotSpikes, cotFinal)
			got := append(append(cotState0, cotCurrent), VariableGrads(c, cot, vars...)...)

			outs := append([]*Node{spikes}, final...)
			outs = append(outs, want...)
			outs = append(outs, gotSpikes)
			outs = append(outs, gotFinal...)
			return append(outs, got...)
		})
		out, err := exec.Call(inputs...)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([][]float64, len(out))
		for i, o := range out {
			vals[i] = values(t, o)
		}
		nw := n + 1 + nvars
		wantSpikes, wantFinal, want := vals[0], vals[1:1+n], vals[1+n:1+n+nw]
		rest := vals[1+n+nw:]
		gotSpikes, gotFinal, got := rest[0], rest[1:1+n], rest[1+n:]

		fired := 0.0
		for i := range wantSpikes {
			if gotSpikes[i] != wantSpikes[i] {
				t.Fatalf("spike %d: %g, neuron.LayerFrom %g", i, gotSpikes[i], wantSpikes[i])
			}
			fired += wantSpikes[i]
		}
		if rate := fired / float64(len(wantSpikes)); rate < 0.05 || rate > 0.9 {
			t.Fatalf("spike rate %.2f: the test input should make neurons spike often, but not always", rate)
		}
		t.Logf("spike rate %.2f", fired/float64(len(wantSpikes)))
		for j := range n {
			if err := closeTo(gotFinal[j], wantFinal[j], rtol, atol); err != nil {
				t.Errorf("final state %d: %v", j, err)
			}
		}
		labels := make([]string, 0, nw)
		for j := range n {
			labels = append(labels, fmt.Sprintf("cotangent of state %d", j))
		}
		labels = append(labels, "cotangent of the current")
		for _, name := range names {
			labels = append(labels, "gradient of "+name)
		}
		for i, label := range labels {
			if !nonZero(want[i]) {
				t.Errorf("%s: autodiff gives all zeros, the case tests nothing", label)
			}
			if err := closeTo(got[i], want[i], rtol, atol); err != nil {
				t.Errorf("%s: %v", label, err)
			}
		}
	})
}

// TestNilMeansZero checks that a nil starting state, nil saved values and a nil final-state cotangent give
// exactly what explicit zeros give.
func TestNilMeansZero(t *testing.T) {
	tb := testBackends(t)[len(testBackends(t))-1] // SimpleGo
	cfg := config(neuron.FSTS, 2, nil)
	dims := []int{2, 6, 3}
	rng := rand.New(rand.NewPCG(3, 3))
	scope := model.NewStore().RootScope()
	setRandomVariables(t, scope.At("neuron"), rng, cfg, dtypes.Float64, dims[2:])
	n := neuron.StateComponents(cfg)
	cur := newTensor(dtypes.Float64, random(rng, size(dims), func() float64 { return 0.6 + 0.8*rng.NormFloat64() }), dims...)
	cot := newTensor(dtypes.Float64, random(rng, size(dims), rng.NormFloat64), dims...)
	exec := model.MustNewExec(tb.Backend, scope.Store(), func(_ *model.Scope, current, cotSpikes *Node) []*Node {
		c, _, _ := coefficientsOf(t, scope.At("neuron"), current.Graph(), cfg, dtypes.Float64, dims[2:])
		zeros := make([]*Node, n)
		for i := range zeros {
			zeros[i] = Zeros(current.Graph(), shapes.Make(dtypes.Float64, dims[0], dims[2]))
		}
		s0, f0, saved := Forward(c, current, zeros)
		s1, f1, _ := Forward(c, current, nil)
		cs0, cc0, g0 := Backward(c, current, zeros, saved, cotSpikes, zeros)
		cs1, cc1, g1 := Backward(c, current, nil, nil, cotSpikes, nil)
		pairs := [][2]*Node{{s0, s1}, {cc0, cc1}, {g0.EtaDt, g1.EtaDt}, {g0.GammaDt, g1.GammaDt}}
		for i := range f0 {
			pairs = append(pairs, [2]*Node{f0[i], f1[i]}, [2]*Node{cs0[i], cs1[i]})
		}
		for j := range g0.Beta {
			pairs = append(pairs, [2]*Node{g0.Beta[j], g1.Beta[j]}, [2]*Node{g0.Lambda[j], g1.Lambda[j]})
		}
		var out []*Node
		for _, p := range pairs {
			out = append(out, p[0], p[1])
		}
		return out
	})
	out := exec.MustCall(cur, cot)
	for i := 0; i < len(out); i += 2 {
		a, b := values(t, out[i]), values(t, out[i+1])
		if !nonZero(a) {
			t.Errorf("output pair %d is all zeros: the comparison tests nothing", i/2)
		}
		if err := closeTo(b, a, 0, 0); err != nil {
			t.Errorf("output pair %d: nil differs from explicit zeros: %v", i/2, err)
		}
	}
}
