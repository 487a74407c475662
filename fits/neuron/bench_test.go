package neuron

import (
	"fmt"
	"testing"
	"time"

	"github.com/fits-snn/fits/xla"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
)

// BenchmarkLayerTrainStep measures one forward and backward pass of Dense → FiTS layer → Dense → FiTS
// layer → mean spike rate, with the gradient with respect to every variable, on the backend chosen by
// package xla ($GOMLX_BACKEND or automatic). Shapes follow the paper's SHD/SSC setting scaled down:
// T = 250 steps, batch 32, width 64, 140 inputs. The first execution (graph build and compilation) is
// reported as the metric compile-s and excluded from ns/op.
func BenchmarkLayerTrainStep(b *testing.B) {
	for _, tc := range []struct {
		kind  Kind
		order int
	}{{FS, 0}, {FSTS, 2}} {
		b.Run(fmt.Sprintf("%s/M=%d", tc.kind, tc.order), func(b *testing.B) {
			backend, err := xla.Backend()
			if err != nil {
				b.Skip(err)
			}
			const batch, steps, inputs, width = 32, 250, 140, 64
			cfg := DefaultConfig(tc.kind, tc.order)
			x := make([]float32, batch*steps*inputs)
			for i := range x {
				x[i] = float32(i%13) * 0.05
			}
			input := tensors.FromFlatDataAndDimensions(x, batch, steps, inputs)
			scope := model.NewStore().RootScope()
			exec := model.MustNewExec(backend, scope.Store(), func(_ *model.Scope, x *Node) []*Node {
				h := layers.Dense(scope.At("dense1"), x, true, width)
				s := Layer(scope.At("layer1"), h, cfg)
				h = layers.Dense(scope.At("dense2"), s, true, width)
				s = Layer(scope.At("layer2"), h, cfg)
				loss := ReduceAllMean(s)
				var vars []*Node
				for v := range scope.Store().IterVariables() {
					vars = append(vars, v.NodeValue(x.Graph()))
				}
				return append([]*Node{loss}, Gradient(loss, vars...)...)
			})
			start := time.Now()
			exec.MustCall(input)
			compile := time.Since(start).Seconds()
			b.ResetTimer()
			for range b.N {
				exec.MustCall(input)
			}
			b.ReportMetric(compile, "compile-s")
		})
	}
}
