package neuron

import (
	"fmt"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

func TestStateComponents(t *testing.T) {
	for _, tc := range []struct {
		kind  Kind
		order int
		want  int
	}{
		{LIF, 0, 1}, {AdaptLIF, 0, 2}, {FSFrozen, 0, 2}, {FS, 0, 2}, {FSTS, 1, 4}, {FSTS, 3, 6},
	} {
		if got := StateComponents(DefaultConfig(tc.kind, tc.order)); got != tc.want {
			t.Errorf("%s M=%d: %d components, want %d", tc.kind, tc.order, got, tc.want)
		}
	}
}

// TestLayerFromPiecesEqualsLayer runs a sequence in pieces of K steps with LayerFrom, each from the
// previous piece's final state, and checks that the spikes are exactly those of one Layer call, for every
// registered kind on SimpleGo and for lif, fs and fsts M = 2 on XLA (which compiles each graph).
func TestLayerFromPiecesEqualsLayer(t *testing.T) {
	const batch, steps, width = 3, 24, 5
	rng := rand.New(rand.NewPCG(7, 11))
	x := make([]float32, batch*steps*width)
	for i := range x {
		x[i] = float32(rng.Float64() * 0.9)
	}
	for _, tb := range testBackends(t) {
		input := tensors.FromFlatDataAndDimensions(x, batch, steps, width) // one copy per backend
		for _, kind := range Kinds() {
			cfg := DefaultConfig(kind, 0)
			if kind.CheckOrder(0) != nil {
				cfg = DefaultConfig(kind, 2)
			}
			if tb.name == "xla:cpu" && kind != LIF && kind != FS && kind != FSTS {
				continue
			}
			for _, k := range []int{1, 8, 24} {
				t.Run(fmt.Sprintf("%s/%s-M%d/K%d", tb.name, cfg.Kind, cfg.Order, k), func(t *testing.T) {
					scope := model.NewStore().RootScope() // the pieces reuse the layer's variables
					scope.SetParam(model.ParamInitialSeed, int64(5))
					whole, err := model.NewExec(tb.b, scope.Store(), func(_ *model.Scope, in *Node) *Node {
						return Layer(scope.At("n"), in, cfg)
					})
					if err != nil {
						t.Fatal(err)
					}
					pieces, err := model.NewExec(tb.b, scope.Store(), func(_ *model.Scope, in *Node) *Node {
						var state []*Node
						var parts []*Node
						for t0 := 0; t0 < steps; t0 += k {
							var s *Node
							s, state = LayerFrom(scope.At("n"), Slice(in, AxisRange(), AxisRange(t0, t0+k)), cfg, state)
							parts = append(parts, s)
						}
						return Concatenate(parts, 1)
					})
					if err != nil {
						t.Fatal(err)
					}
					a, err := whole.Call(input)
					if err != nil {
						t.Fatal(err)
					}
					b, err := pieces.Call(input)
					if err != nil {
						t.Fatal(err)
					}
					sa, sb := tensors.MustCopyFlatData[float32](a[0]), tensors.MustCopyFlatData[float32](b[0])
					n := 0
					for i := range sa {
						if sa[i] != sb[i] {
							t.Fatalf("spike %d: whole %v, pieces %v", i, sa[i], sb[i])
						}
						n += int(sa[i])
					}
					if n == 0 {
						t.Fatal("no spikes at all: the test input is too weak to compare anything")
					}
				})
			}
		}
	}
}
