package scan_test

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/scan"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// One chunk of K = 60 steps of a layer of 4 FS + TS neurons (M = 1, at their initialization: f*
// log-spaced over [1, 50] Hz), run two ways on the same input current [batch, K, neurons]: Forward and
// Backward, Algorithm 1 and its hand-derived adjoint written out as graph code, and neuron.LayerFrom, the
// step-by-step layer that GoMLX differentiates by tracing every step. The spikes are the same, and
// Backward's cotangent of the current (here for the loss "number of spikes", through the surrogate
// derivative) is autodiff's.
func ExampleForward() {
	backend, err := xla.Backend()
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := neuron.DefaultConfig(neuron.FSTS, 1)
	const batch, steps, neurons = 2, 60, 4
	dims := []int{batch, steps, neurons}
	pshape, err := neuron.ParamShape(dims, cfg.ChannelShared) // [neurons]: one f*, β, λ per neuron
	if err != nil {
		fmt.Println(err)
		return
	}
	current := make([]float32, batch*steps*neurons)
	for i := range current {
		current[i] = 0.4 + 0.3*float32(i%5) // a deterministic input, strong enough to fire
	}

	scope := mlmodel.NewStore().RootScope()
	exec := mlmodel.MustNewExec(backend, scope.Store(), func(_ *mlmodel.Scope, cur *Node) []*Node {
		layer := scope.At("neuron")
		reference, _ := neuron.LayerFrom(layer, cur, cfg, nil) // nil: the zero initial state
		autodiff := Gradient(ReduceAllSum(reference), cur)[0]

		c := neuron.LayerCoefficients(layer, cur.Graph(), dtypes.Float32, cfg, pshape)
		spikes, _, saved := scan.Forward(c, cur, nil)
		_, cotCurrent, _ := scan.Backward(c, cur, nil, saved, OnesLike(spikes), nil)
		return []*Node{reference, spikes, autodiff, cotCurrent}
	})
	outs, err := exec.Call(tensors.FromFlatDataAndDimensions(current, dims...))
	if err != nil {
		fmt.Println(err)
		return
	}
	flat := func(t *tensors.Tensor) []float32 { return tensors.MustCopyFlatData[float32](t) }
	reference, spikes, autodiff, cotCurrent := flat(outs[0]), flat(outs[1]), flat(outs[2]), flat(outs[3])

	same, fired := true, 0
	for i := range spikes {
		same = same && spikes[i] == reference[i]
		fired += int(spikes[i])
	}
	largest, worst := 0.0, 0.0
	for i := range cotCurrent {
		largest = max(largest, math.Abs(float64(autodiff[i])))
		worst = max(worst, math.Abs(float64(cotCurrent[i]-autodiff[i])))
	}
	fmt.Println("spikes:", outs[1].Shape().Dimensions, "fired:", fired, "of", len(spikes))
	fmt.Println("Forward's spikes are LayerFrom's:", same)
	fmt.Println("Backward's cotangent of the current is autodiff's (within 1e-5 of its largest entry):",
		largest > 0 && worst <= 1e-5*largest)
	// Output:
	// spikes: [2 60 4] fired: 220 of 480
	// Forward's spikes are LayerFrom's: true
	// Backward's cotangent of the current is autodiff's (within 1e-5 of its largest entry): true
}
