package model

import (
	"math"
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

func backend(t testing.TB) compute.Backend {
	t.Helper()
	xla.SetAnnounceWriter(nil)
	b, err := xla.Backend()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ramp returns a [dims...] float32 tensor with values spread deterministically in [0, 2).
// runSeeded runs net on x in a new store seeded with 1 and returns the store's root scope and the outputs:
// the logits, then each layer's spikes.
func runSeeded(t *testing.T, b compute.Backend, x *tensors.Tensor, net func(*model.Scope, *Node) Output) (*model.Scope, []*tensors.Tensor) {
	t.Helper()
	scope := model.NewStore().RootScope()
	if err := scope.Store().SetRNGStateFromSeed(1); err != nil {
		t.Fatal(err)
	}
	out, err := model.CallOnceN(b, scope.Store(), func(_ *model.Scope, x *Node) []*Node {
		o := net(scope, x)
		return append([]*Node{o.Logits}, o.Spikes...)
	}, x)
	if err != nil {
		t.Fatal(err)
	}
	return scope, out
}

func ramp(dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((i*7919)%13) / 6.5
	}
	return tensors.FromFlatDataAndDimensions(v, dims...)
}

func TestFeedForwardShapesAndParams(t *testing.T) {
	b := backend(t)
	const batch, T, F, W, C = 3, 6, 5, 4, 3
	dense := F*W + W + W*W + W + W*C + C
	for _, tc := range []struct {
		kind    neuron.Kind
		order   int
		readout Readout
		neuron  int // trainable neuron scalars per hidden neuron
	}{
		{neuron.LIF, 0, ReadoutMean, 0},
		{neuron.AdaptLIF, 0, ReadoutLIMax, 0}, // the released code's adaptive LIF: fixed κ_CT(0), nothing learned
		{neuron.FS, 0, ReadoutSum, 1},
		{neuron.FSFrozen, 0, ReadoutLIMean, 0},
		{neuron.FS, 0, ReadoutMean, 1},
		{neuron.FSTS, 2, ReadoutMean, 1 + 2*2},
	} {
		t.Run(tc.kind.String()+"/"+string(tc.readout), func(t *testing.T) {
			cfg := DefaultConfig(tc.kind, tc.order, W, C)
			cfg.Readout = tc.readout
			scope, out := runSeeded(t, b, ramp(batch, T, F), func(s *model.Scope, x *Node) Output { return FeedForward(s, cfg, x) })
			if got := out[0].Shape().Dimensions; len(got) != 2 || got[0] != batch || got[1] != C {
				t.Errorf("logits shape %v, want [%d %d]", got, batch, C)
			}
			if len(out) != 3 {
				t.Fatalf("%d spike outputs, want 2", len(out)-1)
			}
			for _, s := range out[1:] {
				if got := s.Shape().Dimensions; got[0] != batch || got[1] != T || got[2] != W {
					t.Errorf("spikes shape %v, want [%d %d %d]", got, batch, T, W)
				}
				for _, v := range tensors.MustCopyFlatData[float32](s) {
					if v != 0 && v != 1 {
						t.Fatalf("spike value %g", v)
					}
				}
			}
			want := dense + 2*W*tc.neuron
			if got := CountParams(scope); got != want {
				t.Errorf("CountParams = %d, want %d", got, want)
			}
			if got := CountParams(scope.At("readout")); got != W*C+C {
				t.Errorf("CountParams(readout) = %d, want %d", got, W*C+C)
			}
		})
	}
}

func TestLeakyIntegrator(t *testing.T) {
	b := backend(t)
	const alpha = 0.8
	z := ramp(2, 7, 3)
	got, err := ExecOnce(b, func(z *Node) *Node { return LeakyIntegrator(z, alpha) }, z)
	if err != nil {
		t.Fatal(err)
	}
	zv := tensors.MustCopyFlatData[float32](z)
	gv := tensors.MustCopyFlatData[float32](got)
	for bi := range 2 {
		for n := range 3 {
			u := 0.0
			for k := range 7 {
				i := (bi*7+k)*3 + n
				u = alpha*u + (1-alpha)*float64(zv[i])
				if math.Abs(float64(gv[i])-u) > 1e-5 {
					t.Fatalf("u[%d,%d,%d] = %g, recurrence gives %g", bi, k, n, gv[i], u)
				}
			}
		}
	}
}

func TestTimeSharedDropout(t *testing.T) {
	b := backend(t)
	ones := tensors.FromFlatDataAndDimensions(fill32(4*5*50, 1), 4, 5, 50)
	for _, training := range []bool{true, false} {
		scope := model.NewStore().RootScope()
		if err := scope.Store().SetRNGStateFromSeed(3); err != nil {
			t.Fatal(err)
		}
		out, err := model.CallOnce(b, scope.Store(), func(_ *model.Scope, x *Node) *Node {
			neuron.SetTraining(scope, x.Graph(), training)
			return TimeSharedDropout(scope, x, 0.5)
		}, ones)
		if err != nil {
			t.Fatal(err)
		}
		v := tensors.MustCopyFlatData[float32](out)
		dropped := 0
		for bi := range 4 {
			for f := range 50 {
				first := v[(bi*5)*50+f]
				for k := range 5 {
					if v[(bi*5+k)*50+f] != first {
						t.Fatalf("training=%v: mask of (%d, %d) changes over time", training, bi, f)
					}
				}
				switch first {
				case 0:
					dropped++
				case 2: // kept, scaled by 1/(1-p)
				case 1:
					if training {
						t.Fatal("kept value not rescaled")
					}
				default:
					t.Fatalf("value %g", first)
				}
			}
		}
		if training && (dropped < 60 || dropped > 140) {
			t.Errorf("dropped %d of 200 with p = 0.5", dropped)
		}
		if !training && dropped != 0 {
			t.Errorf("dropout active outside training: %d dropped", dropped)
		}
	}
}

func TestConvBuildsAndRuns(t *testing.T) {
	b := backend(t)
	for _, kind := range []neuron.Kind{neuron.LIF, neuron.FSTS} {
		t.Run(kind.String(), func(t *testing.T) {
			order := 0
			if kind == neuron.FSTS {
				order = 1
			}
			cfg := DefaultConvConfig(kind, order)
			cfg.Channels, cfg.Pool, cfg.Hidden, cfg.Classes = []int{2, 3}, 2, 5, 4
			scope, out := runSeeded(t, b, ramp(2, 3, 2, 8, 8), func(s *model.Scope, x *Node) Output { return Conv(s, cfg, x) })
			if got := out[0].Shape().Dimensions; got[0] != 2 || got[1] != 4 {
				t.Errorf("logits shape %v, want [2 4]", got)
			}
			wantSpikes := [][]int{{2, 3, 4, 4, 2}, {2, 3, 2, 2, 3}, {2, 3, 5}}
			for i, s := range out[1:] {
				if got := s.Shape().Dimensions; !slices.Equal(got, wantSpikes[i]) {
					t.Errorf("block %d spikes %v, want %v", i, got, wantSpikes[i])
				}
			}
			// conv kernels 3·3·2·2+2 and 3·3·2·3+3, fc 12·5+5, readout 5·4+4; neuron parameters are
			// per channel in the conv blocks (2 and 3) and per unit in the fc block (5).
			want := 38 + 57 + 65 + 24
			if kind == neuron.FSTS {
				want += (2 + 3 + 5) * (1 + 2*order)
			}
			if got := CountParams(scope); got != want {
				t.Errorf("CountParams = %d, want %d", got, want)
			}
		})
	}
}

func TestDefaultConvParamCount(t *testing.T) {
	// The paper reports 0.0726 M parameters for plain LIF on 64×64 inputs (Appendix C).
	b := backend(t)
	cfg := DefaultConvConfig(neuron.LIF, 0)
	scope := model.NewStore().RootScope()
	g := NewGraph(b, "count")
	x := Parameter(g, "x", shapes.Make(dtypes.Float32, 1, 1, 2, 64, 64))
	Conv(scope, cfg, x)
	g.Finalize()
	got := CountParams(scope)
	if got < 70000 || got > 75000 {
		t.Errorf("default conv network has %d parameters, want about 72k", got)
	}
}

// TestTrainingMasks checks the masks FeedForward and Conv draw when training: [batch, T, W] masks whose
// values are 0 or 1/(1 − p) and change over time in DropoutStep mode (the default), [batch, 1, W] ones in
// DropoutShared mode, none without dropout.
func TestTrainingMasks(t *testing.T) {
	b := backend(t)
	const batch, T, W, p = 4, 6, 40, 0.5
	for _, mode := range []DropoutMode{"", DropoutStep, DropoutShared} {
		cfg := DefaultConfig(neuron.FS, 0, W, 3)
		cfg.Dropout, cfg.DropoutMode = p, mode
		net := cfg.Net(2)
		scope := model.NewStore().RootScope()
		if err := scope.Store().SetRNGStateFromSeed(5); err != nil {
			t.Fatal(err)
		}
		out, err := model.CallOnceN(b, scope.Store(), func(_ *model.Scope, x *Node) []*Node {
			return net.randomMasks(scope, x.Graph(), dtypes.Float32, batch, T)
		}, ramp(1))
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != cfg.Layers {
			t.Fatalf("mode %q: %d masks for %d layers", mode, len(out), cfg.Layers)
		}
		steps := T
		if mode == DropoutShared {
			steps = 1
		}
		for _, m := range out {
			if got := m.Shape().Dimensions; !slices.Equal(got, []int{batch, steps, W}) {
				t.Fatalf("mode %q: mask shape %v, want [%d %d %d]", mode, got, batch, steps, W)
			}
			v := tensors.MustCopyFlatData[float32](m)
			changes, dropped := 0, 0
			for i, x := range v {
				if x != 0 && x != 2 {
					t.Fatalf("mode %q: mask value %g", mode, x)
				}
				if x == 0 {
					dropped++
				}
				if i >= W && (i/W)%steps != 0 && x != v[i-W] {
					changes++
				}
			}
			if frac := float64(dropped) / float64(len(v)); frac < 0.35 || frac > 0.65 {
				t.Errorf("mode %q: %.2f of the mask dropped, want about %g", mode, frac, p)
			}
			if mode != DropoutShared && changes == 0 {
				t.Errorf("mode %q: no mask value changes over time", mode)
			}
		}
	}
	net := DefaultConfig(neuron.FS, 0, W, 3).Net(2)
	scope := model.NewStore().RootScope()
	g := NewGraph(b, "none")
	if masks := net.randomMasks(scope, g, dtypes.Float32, batch, T); masks != nil {
		t.Errorf("%d masks without dropout", len(masks))
	}
	g.Finalize()
}

func TestParseDropoutMode(t *testing.T) {
	for s, want := range map[string]DropoutMode{"": DropoutStep, "step": DropoutStep, "Shared": DropoutShared} {
		if got, err := ParseDropoutMode(s); err != nil || got != want {
			t.Errorf("ParseDropoutMode(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	if _, err := ParseDropoutMode("time"); err == nil {
		t.Error("unknown dropout mode accepted")
	}
	c := DefaultConfig(neuron.FS, 0, 8, 3)
	c.Dropout = 0.3
	if !c.Net(2).StepDropout() {
		t.Error("the default mode does not drop per step")
	}
	c.DropoutMode = DropoutShared
	if c.Net(2).StepDropout() {
		t.Error("shared mode reports per-step dropout")
	}
	c.DropoutMode = "time"
	if c.Validate() == nil || c.Net(2).Validate() == nil {
		t.Error("a config or network with an unknown dropout mode validates")
	}
	cc := DefaultConvConfig(neuron.FS, 0)
	cc.DropoutMode = "time"
	if cc.Validate() == nil {
		t.Error("a conv config with an unknown dropout mode validates")
	}
}

func TestValidateAndParse(t *testing.T) {
	if _, err := ParseReadout("LI-MAX"); err != nil {
		t.Error(err)
	}
	if _, err := ParseReadout("softmax"); err == nil {
		t.Error("unknown readout accepted")
	}
	for _, edit := range []func(*Config){
		func(c *Config) { c.Width = 0 },
		func(c *Config) { c.Dropout = 1 },
		func(c *Config) { c.Classes = 1 },
		func(c *Config) { c.Readout = "x" },
		func(c *Config) { c.Neuron.Order = 3 }, // FS has no TS module
	} {
		c := DefaultConfig(neuron.FS, 0, 8, 3)
		edit(&c)
		if c.Validate() == nil {
			t.Errorf("invalid config accepted: %+v", c)
		}
	}
}

func fill32(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestMeanReadoutIsPerStepClassifierMean checks the mean readout against its definition, computed here in
// float64 from the readout's own variables: logits[b, c] = mean_t(Σ_f h[b, t, f]·W[f, c] + bias[c]).
func TestMeanReadoutIsPerStepClassifierMean(t *testing.T) {
	b := backend(t)
	const batch, T, F, C = 2, 5, 4, 3
	scope := model.NewStore().RootScope()
	scope = scope.WithInitializer(FanInUniform(scope))
	exec := model.MustNewExec(b, scope.Store(), func(_ *model.Scope, h *Node) *Node {
		return ApplyReadout(scope.At("readout"), h, C, ReadoutMean, 0.9)
	})
	h := ramp(batch, T, F)
	got := tensors.MustCopyFlatData[float32](exec.MustCall(h)[0])
	var w, bias []float32
	for v := range scope.Store().IterVariables() {
		switch v.Name() {
		case "weights":
			w = tensors.MustCopyFlatData[float32](v.MustValue())
		case "biases":
			bias = tensors.MustCopyFlatData[float32](v.MustValue())
		}
	}
	if len(w) != F*C || len(bias) != C {
		t.Fatalf("readout variables: %d weights, %d biases", len(w), len(bias))
	}
	hv := tensors.MustCopyFlatData[float32](h)
	for bi := range batch {
		for c := range C {
			want := 0.0
			for k := range T {
				z := float64(bias[c])
				for f := range F {
					z += float64(hv[(bi*T+k)*F+f]) * float64(w[f*C+c])
				}
				want += z / T
			}
			if g := float64(got[bi*C+c]); math.Abs(g-want) > 1e-5 {
				t.Errorf("logit[%d, %d] = %g, per-step definition gives %g", bi, c, g, want)
			}
		}
	}
}

// TestPool2D checks the three poolings on a 4×4 map by hand, and that the max pooling's gradient reaches
// exactly one element per window: the first maximum in row-major order.
func TestPool2D(t *testing.T) {
	b := backend(t)
	// One example, 4×4, one channel; windows of 2×2. The bottom-right window is all ties.
	x := []float32{
		1, 5, 0, -1,
		2, 5, -3, -2,
		0, 0, 7, 7,
		0, 0, 7, 7,
	}
	for _, tc := range []struct {
		kind     Pooling
		want     []float32
		wantGrad []float32
	}{
		{PoolMean, []float32{3.25, -1.5, 0, 7}, fill32(16, 0.25)},
		{PoolSum, []float32{13, -6, 0, 28}, fill32(16, 1)},
		{PoolMax, []float32{5, 0, 0, 7}, []float32{
			0, 1, 1, 0,
			0, 0, 0, 0,
			1, 0, 1, 0,
			0, 0, 0, 0,
		}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			out := MustExecOnceN(b, func(x *Node) []*Node {
				y := Pool2D(x, 2, tc.kind)
				return []*Node{y, Gradient(ReduceAllSum(y), x)[0]}
			}, tensors.FromFlatDataAndDimensions(x, 1, 4, 4, 1))
			if got := out[0].Shape().Dimensions; !slices.Equal(got, []int{1, 2, 2, 1}) {
				t.Fatalf("shape %v", got)
			}
			if got := tensors.MustCopyFlatData[float32](out[0]); !slices.Equal(got, tc.want) {
				t.Errorf("pooled %v, want %v", got, tc.want)
			}
			if got := tensors.MustCopyFlatData[float32](out[1]); !slices.Equal(got, tc.wantGrad) {
				t.Errorf("gradient %v, want %v", got, tc.wantGrad)
			}
		})
	}
	if _, err := ParsePooling("MAX"); err != nil {
		t.Error(err)
	}
	c := DefaultConvConfig(neuron.LIF, 0)
	c.Pooling = "median"
	if c.Validate() == nil {
		t.Error("unknown pooling accepted")
	}
}

// The sum readout is the linear map of the spikes summed over time: with the same variables its logits
// minus the bias are T times the mean readout's. UniformBias draws every dense bias from U(±1/√fan_in)
// (PyTorch's nn.Linear), not zero.
func TestSumReadoutAndUniformBias(t *testing.T) {
	b := backend(t)
	const batch, T, F, W, C = 2, 7, 5, 4, 3
	cfg := DefaultConfig(neuron.FS, 0, W, C)
	cfg.UniformBias = true
	scope := model.NewStore().RootScope()
	if err := scope.Store().SetRNGStateFromSeed(5); err != nil {
		t.Fatal(err)
	}
	logits := func(r Readout) []float32 {
		c := cfg
		c.Readout = r
		out, err := model.CallOnceN(b, scope.Store(), func(_ *model.Scope, x *Node) []*Node {
			return []*Node{FeedForward(scope, c, x).Logits}
		}, ramp(batch, T, F))
		if err != nil {
			t.Fatal(err)
		}
		return tensors.MustCopyFlatData[float32](out[0])
	}
	mean, sum := logits(ReadoutMean), logits(ReadoutSum)
	bias := scope.Store().GetVariable(model.JoinPath("/readout/dense", "biases"))
	if bias == nil {
		t.Fatal("no readout bias")
	}
	bv := tensors.MustCopyFlatData[float32](bias.MustValue())
	for i := range mean {
		c := i % C
		if d := float64(sum[i]-bv[c]) - T*float64(mean[i]-bv[c]); math.Abs(d) > 1e-4 {
			t.Errorf("logit %d: sum readout %g, T × mean readout %g (bias %g)", i, sum[i], T*mean[i], bv[c])
		}
	}
	for _, v := range []struct {
		scope string
		fanIn int
	}{{"/hidden_0/dense", F}, {"/hidden_1/dense", W}, {"/readout/dense", W}} {
		x := scope.Store().GetVariable(model.JoinPath(v.scope, "biases"))
		if x == nil {
			t.Fatalf("no biases in %s", v.scope)
		}
		limit, nonzero := 1/math.Sqrt(float64(v.fanIn)), 0
		for _, y := range tensors.MustCopyFlatData[float32](x.MustValue()) {
			if math.Abs(float64(y)) > limit {
				t.Errorf("%s: bias %g outside ±%g", v.scope, y, limit)
			}
			if y != 0 {
				nonzero++
			}
		}
		if nonzero == 0 {
			t.Errorf("%s: every bias is zero", v.scope)
		}
	}
}

// TimeSharedDropout zeroes each (example, feature) of x [batch, time, features...] with probability p for
// all time steps at once during training, and scales the kept values by 1/(1−p). Outside training, or with
// p = 0, it returns x unchanged. It draws from the store's random number generator.
func TimeSharedDropout(scope *model.Scope, x *Node, p float64) *Node {
	g := x.Graph()
	if p <= 0 || !neuron.IsTraining(g) {
		return x
	}
	dims := x.Shape().Clone().Dimensions
	dims[1] = 1
	return Mul(x, dropoutMask(scope, g, x.DType(), dims, p)) // the mask broadcasts over the time axis
}
