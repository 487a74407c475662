package scan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// BenchmarkChunk compiles and runs one chunk of K steps of an FSTS (M = 2) layer, B = 128, W = 128,
// float32, on the backend chosen by package xla: the forward pass and the hand-derived backward pass of
// this package ("hand"), and, for comparison, neuron.LayerFrom and the GoMLX autodiff of it (the
// vector-Jacobian product that package chunked compiles: cotangents of state, current and variables).
// The first execution of each graph (build, compilation and one run) is reported as fwd-compile-s and
// bwd-compile-s; ns/op is one forward plus one backward call, fwd-ms and bwd-ms the medians of each. The test binary lowers XLA's optimization
// level unless XLA_FLAGS is set: set XLA_FLAGS (e.g. to an empty value) to measure the default level.
func BenchmarkChunk(b *testing.B) {
	backend, err := xla.Backend()
	if err != nil {
		b.Skip(err)
	}
	const batch, width = 128, 128
	cfg := neuron.DefaultConfig(neuron.FSTS, 2)
	n := neuron.StateComponents(cfg)
	for _, k := range []int{25, 50, 100} {
		for _, engine := range []string{"hand", "autodiff"} {
			b.Run(fmt.Sprintf("%s/K=%d", engine, k), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				scope := model.NewStore().RootScope()
				setRandomVariables(b, scope.At("neuron"), rng, cfg, dtypes.Float32, []int{width})
				cur := newTensor(dtypes.Float32, random(rng, batch*k*width, func() float64 { return 0.6 + 0.8*rng.NormFloat64() }), batch, k, width)
				cot := newTensor(dtypes.Float32, random(rng, batch*k*width, rng.NormFloat64), batch, k, width)
				zero := make([]any, n)
				for i := range zero {
					zero[i] = newTensor(dtypes.Float32, make([]float64, batch*width), batch, width)
				}
				var fwd, bwd *model.Exec
				if engine == "hand" {
					fwd = model.MustNewExec(backend, scope.Store(), func(_ *model.Scope, in []*Node) []*Node {
						c, _, _ := coefficientsOf(b, scope.At("neuron"), in[0].Graph(), cfg, dtypes.Float32, []int{width})
						s, final, saved := Forward(c, in[0], in[1:])
						return append(append([]*Node{s}, final...), saved...)
					})
					bwd = model.MustNewExec(backend, scope.Store(), func(_ *model.Scope, in []*Node) []*Node {
						c, vars, _ := coefficientsOf(b, scope.At("neuron"), in[0].Graph(), cfg, dtypes.Float32, []int{width})
						ns := len(in) - 2 - 2*n // the saved tensors
						state0, saved, cotFinal := in[1:1+n], in[1+n:1+n+ns], in[2+n+ns:]
						cs, cc, grads := Backward(c, in[0], state0, saved, in[1+n+ns], cotFinal)
						return append(append(cs, cc), VariableGrads(c, grads, vars...)...)
					})
				} else {
					fwd = model.MustNewExec(backend, scope.Store(), func(_ *model.Scope, in []*Node) []*Node {
						s, final := neuron.LayerFrom(scope.At("neuron"), in[0], cfg, in[1:])
						return append([]*Node{s}, final...)
					})
					bwd = model.MustNewExec(backend, scope.Store(), func(_ *model.Scope, in []*Node) []*Node {
						state0, cotFinal := in[1:1+n], in[2+n:]
						s, final := neuron.LayerFrom(scope.At("neuron"), in[0], cfg, state0)
						obj := ReduceAllSum(Mul(s, in[1+n]))
						for j := range final {
							obj = Add(obj, ReduceAllSum(Mul(final[j], cotFinal[j])))
						}
						_, vars, _ := coefficientsOf(b, scope.At("neuron"), in[0].Graph(), cfg, dtypes.Float32, []int{width})
						return Gradient(obj, append(append(append([]*Node{}, state0...), in[0]), vars...)...)
					})
				}
				runFwd := func() []*tensors.Tensor { return fwd.MustCall(append([]any{cur}, zero...)...) }
				var fwdOut []*tensors.Tensor
				runBwd := func() {
					args := append([]any{cur}, zero...)
					if engine == "hand" {
						args = append(args, anyOf(fwdOut[1+n:])...)
					}
					args = append(args, cot)
					args = append(args, zero...)
					for _, t := range bwd.MustCall(args...) {
						t.FinalizeAll()
					}
				}
				start := time.Now()
				fwdOut = runFwd()
				fwdCompile := time.Since(start).Seconds()
				start = time.Now()
				runBwd()
				bwdCompile := time.Since(start).Seconds()
				b.ResetTimer()
				var fwdTimes, bwdTimes []float64
				for range b.N {
					for _, t := range fwdOut {
						t.FinalizeAll()
					}
					t0 := time.Now()
					fwdOut = runFwd()
					t1 := time.Now()
					runBwd()
					fwdTimes = append(fwdTimes, t1.Sub(t0).Seconds())
					bwdTimes = append(bwdTimes, time.Since(t1).Seconds())
				}
				b.ReportMetric(1e3*median(fwdTimes), "fwd-ms")
				b.ReportMetric(1e3*median(bwdTimes), "bwd-ms")
				b.ReportMetric(fwdCompile, "fwd-compile-s")
				b.ReportMetric(bwdCompile, "bwd-compile-s")
			})
		}
	}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func anyOf(ts []*tensors.Tensor) []any {
	out := make([]any, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}
