package neuron

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

func TestSurrogateGradient(t *testing.T) {
	// Θ(v − 1) with width 0.5 and scale 2: dS/dv = 2·max(0, 1 − |v − 1|/0.5).
	v := []float64{0.2, 0.6, 1.0, 1.3, 2.5, 0.999}
	w := []float64{1, 2, 3, 4, 5, 6}
	wantS := []float64{0, 0, 1, 1, 1, 0}
	wantGrad := []float64{0, 2 * 0.2 * 2, 3 * 2, 4 * 2 * 0.4, 0, 6 * 2 * (1 - 0.001/0.5)}
	for _, tb := range testBackends(t) {
		t.Run(tb.name, func(t *testing.T) {
			exec := MustNewExec(tb.b, func(v, w *Node) []*Node {
				s := Spike(v, 1, Surrogate{Width: 0.5, Scale: 2}, false)
				return []*Node{s, Gradient(ReduceAllSum(Mul(s, w)), v)[0]}
			})
			out := exec.MustCall(v, w)
			s, grad := tensors.MustCopyFlatData[float64](out[0]), tensors.MustCopyFlatData[float64](out[1])
			for i := range v {
				if s[i] != wantS[i] {
					t.Errorf("S(%g) = %g, want %g", v[i], s[i], wantS[i])
				}
				if math.Abs(grad[i]-wantGrad[i]) > 1e-12 {
					t.Errorf("dS/dv at %g (weight %g) = %.15g, want %.15g", v[i], w[i], grad[i], wantGrad[i])
				}
			}
		})
	}
}

// TestUnstackGradient holds the gradient through unstack to the gradient through plain slicing (XLA only:
// SimpleGo lacks the Pad that Slice's gradient needs), with one slice left unused, and checks that
// SimpleGo computes the same through unstack.
func TestUnstackGradient(t *testing.T) {
	in := [][]float32{{1, 2}, {3, -4}, {5, 6}, {0.5, -1}}
	f := func(parts []*Node) *Node {
		// Slices 0..2 interact nonlinearly, slice 3 is unused.
		a := Mul(Add(parts[0], Square(parts[1])), Tanh(parts[2]))
		b := Mul(parts[2], parts[1])
		return ReduceAllSum(Add(Square(a), b))
	}
	grads := map[string][]float32{}
	for _, tb := range testBackends(t) {
		exec := MustNewExec(tb.b, func(x *Node) []*Node {
			return []*Node{Gradient(f(unstack(x, 0)), x)[0]}
		})
		grads[tb.name] = tensors.MustCopyFlatData[float32](exec.MustCall(in)[0])
	}
	b := xlaBackend(t)
	exec := MustNewExec(b, func(x *Node) []*Node {
		parts := make([]*Node, 4)
		for i := range parts {
			parts[i] = Squeeze(SliceAxis(x, 0, AxisElem(i)), 0)
		}
		return []*Node{Gradient(f(parts), x)[0]}
	})
	want := tensors.MustCopyFlatData[float32](exec.MustCall(in)[0])
	if want[6] != 0 || want[7] != 0 || want[0] == 0 {
		t.Fatalf("reference gradient %v: unexpected zeros", want)
	}
	for name, got := range grads {
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
				t.Errorf("%s: gradient %v, plain slicing gives %v", name, got, want)
				break
			}
		}
	}
}

// layerGradients builds Dense → neuron layer → mean spike rate and returns the loss gradients with respect
// to every variable of scope, by variable name, and the loss under the name "loss".
func layerGradients(t *testing.T, tb testBackend, cfg Config, batch, steps, in, width int) map[string][]float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	w := make([]float32, in*width)
	for i := range w {
		w[i] = float32(rng.NormFloat64() * 0.8)
	}
	x := make([]float32, batch*steps*in)
	for i := range x {
		x[i] = float32(math.Abs(rng.NormFloat64()))
	}
	scope := model.NewStore().RootScope()
	scope.At("dense").VariableWithValue("weights", tensors.FromFlatDataAndDimensions(w, in, width))
	var names []string
	exec := model.MustNewExec(tb.b, scope.Store(), func(_ *model.Scope, x *Node) []*Node {
		wv := scope.At("dense").VariableWithValue("weights", tensors.FromFlatDataAndDimensions(w, in, width))
		current := Einsum("btf,fn->btn", x, wv.NodeValue(x.Graph()))
		spikes := Layer(scope.At("neuron"), current, cfg)
		loss := ReduceAllMean(spikes)
		var nodes []*Node
		names = names[:0]
		for v := range scope.Store().IterVariables() {
			names = append(names, v.Name())
			nodes = append(nodes, v.NodeValue(x.Graph()))
		}
		return append([]*Node{loss}, Gradient(loss, nodes...)...)
	})
	out := exec.MustCall(tensors.FromFlatDataAndDimensions(x, batch, steps, in))
	if loss := tensors.MustCopyFlatData[float32](out[0])[0]; loss <= 0 || loss >= 1 {
		t.Fatalf("mean spike rate %g: the test input should make some but not all neurons spike", loss)
	}
	grads := map[string][]float64{"loss": {float64(tensors.MustCopyFlatData[float32](out[0])[0])}}
	for i, name := range names {
		g := tensors.MustCopyFlatData[float32](out[i+1])
		f := make([]float64, len(g))
		for j := range g {
			f[j] = float64(g[j])
		}
		grads[name] = f
	}
	return grads
}

func TestLayerGradients(t *testing.T) {
	for _, tb := range testBackends(t) {
		for _, tc := range []struct {
			cfg     Config
			nonZero []string // variables whose gradient must be finite and not all zero
			zero    []string // variables whose gradient must be exactly zero
			xla     bool     // also on XLA (each XLA case compiles for several seconds)
		}{
			{DefaultConfig(FSTS, 2), []string{"weights", VarLogTargetHz, VarBetaHat, VarLambdaHat}, nil, true},
			{func() Config { c := DefaultConfig(FS, 0); c.DTExact = true; return c }(), []string{"weights", VarLogTargetHzDT}, nil, false},
			{func() Config { c := DefaultConfig(FS, 0); c.TargetCoordinate = TargetOmega; return c }(), []string{"weights", VarOmegaStar}, nil, false},
			{func() Config { c := DefaultConfig(AdaptLIF, 0); c.AdaptLIFLearnable = true; return c }(), []string{"weights"}, []string{VarEta, VarGamma}, false},
			{DefaultConfig(AdaptLIF, 0), []string{"weights"}, nil, false},
		} {
			if tb.name == "xla:cpu" && !tc.xla {
				continue
			}
			t.Run(tb.name+"/"+tc.cfg.Kind.String()+"/"+strings.Join(tc.nonZero, ","), func(t *testing.T) {
				grads := layerGradients(t, tb, tc.cfg, 2, 30, 3, 4)
				for _, name := range tc.nonZero {
					g, ok := grads[name]
					if !ok {
						t.Fatalf("no variable %q (have %v)", name, grads)
					}
					norm := 0.0
					for _, x := range g {
						if math.IsNaN(x) || math.IsInf(x, 0) {
							t.Fatalf("gradient of %s is not finite: %v", name, g)
						}
						norm += x * x
					}
					if norm == 0 {
						t.Errorf("gradient of %s is zero", name)
					}
				}
				for _, name := range tc.zero {
					for _, x := range grads[name] {
						if x != 0 {
							t.Errorf("gradient of %s = %v, want exactly zero (stationary zero initialization)", name, grads[name])
							break
						}
					}
				}
			})
		}
	}
}

// TestDetachReset checks that DetachReset leaves the forward pass unchanged and changes the gradient.
func TestDetachReset(t *testing.T) {
	tb := testBackends(t)[len(testBackends(t))-1] // SimpleGo
	attached := layerGradients(t, tb, DefaultConfig(FS, 0), 2, 30, 3, 4)
	cfg := DefaultConfig(FS, 0)
	cfg.DetachReset = true
	detached := layerGradients(t, tb, cfg, 2, 30, 3, 4)
	if attached["loss"][0] != detached["loss"][0] {
		t.Errorf("loss %g with the reset attached, %g detached: the forward pass must not change", attached["loss"][0], detached["loss"][0])
	}
	same := true
	for i, g := range attached[VarLogTargetHz] {
		if g != detached[VarLogTargetHz][i] {
			same = false
		}
	}
	if same {
		t.Error("detaching the reset did not change the gradient")
	}
}
