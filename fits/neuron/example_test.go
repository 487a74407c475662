package neuron_test

import (
	"fmt"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/xla"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers"
)

// A FiTS layer inside a user's own GoMLX model function: a dense map of the input at every time step, then
// 4 FiTS neurons of TS order M = 2 with the released code's semantics (neuron.DefaultConfig), returning
// the spikes [batch, time, 4]. neuron.Layer runs the recurrence as an unrolled graph: fine for short
// sequences and small layers; for training at the paper's sizes use the engines of package fits/step
// (see its Example). The learned variables are read back from the layer's scope.
func ExampleLayer() {
	backend, err := xla.Backend()
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := neuron.DefaultConfig(neuron.FSTS, 2) // f* log-spaced over [1, 50] Hz, SHD/SSC constants
	model := func(ctx *context.Context, x *Node) *Node {
		current := layers.Dense(ctx.In("dense"), x, false, 4) // [batch, time, 4]
		return neuron.Layer(ctx.In("fits"), current, cfg)     // spikes [batch, time, 4]
	}
	ctx := context.New()
	ctx.SetParam(context.ParamInitialSeed, int64(1))
	// One example, 100 steps of a constant input of 3 features.
	x := make([]float32, 100*3)
	for i := range x {
		x[i] = 0.5
	}
	spikes := context.MustExecOnce(backend, ctx, model, tensors.FromFlatDataAndDimensions(x, 1, 100, 3))
	fmt.Println("spikes shape:", spikes.Shape().Dimensions)

	f, _ := neuron.TargetFrequenciesHz(ctx.In("fits"), cfg)
	beta, lambda, _ := neuron.TSCoefficients(ctx.In("fits"), cfg)
	fmt.Printf("f* = %.2f Hz\n", f)
	fmt.Printf("β of stage 1 = %.2f, λ of stage 2 = %.4f\n", beta[0], lambda[1])
	// Output:
	// spikes shape: [1 100 4]
	// f* = [1.00 3.68 13.57 50.00] Hz
	// β of stage 1 = [0.00 0.00 0.00 0.00], λ of stage 2 = [0.0474 0.0474 0.0474 0.0474]
}
