package neuron_test

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/xla"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	mlmodel "github.com/gomlx/gomlx/ml/model"
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
	build := func(scope *mlmodel.Scope, x *Node) *Node {
		current := layers.Dense(scope.At("dense"), x, false, 4) // [batch, time, 4]
		return neuron.Layer(scope.At("fits"), current, cfg)     // spikes [batch, time, 4]
	}
	scope := mlmodel.NewStore().RootScope()
	scope.SetParam(mlmodel.ParamInitialSeed, int64(1))
	// One example, 100 steps of a constant input of 3 features.
	x := make([]float32, 100*3)
	for i := range x {
		x[i] = 0.5
	}
	spikes := mlmodel.MustCallOnce(backend, scope.Store(), build, tensors.FromFlatDataAndDimensions(x, 1, 100, 3))
	fmt.Println("spikes shape:", spikes.Shape().Dimensions)

	f, _ := neuron.TargetFrequenciesHz(scope.At("fits"), cfg)
	beta, lambda, _ := neuron.TSCoefficients(scope.At("fits"), cfg)
	fmt.Printf("f* = %.2f Hz\n", f)
	fmt.Printf("β of stage 1 = %.2f, λ of stage 2 = %.4f\n", beta[0], lambda[1])
	// Output:
	// spikes shape: [1 100 4]
	// f* = [1.00 3.68 13.57 50.00] Hz
	// β of stage 1 = [0.00 0.00 0.00 0.00], λ of stage 2 = [0.0474 0.0474 0.0474 0.0474]
}

// Reading back what a layer learned: a stack of one FiTS block (6 FS + TS neurons, M = 1) and a readout,
// trained for 10 steps with the fused engine of package fits/step on a toy task (class 1 sees an input
// modulated at 10 Hz, class 0 at 2 Hz), then f*, β and λ of the block's neurons and the TS module's group
// delay at 10 Hz, read from the block's neuron scope. At initialization f* is log-spaced over [1, 50] Hz,
// β = 0 and λ = σ(−3) ≈ 0.047, where the TS group delay is λ·Δt ≈ 0.19 ms.
func ExampleReadLearned() {
	backend, err := xla.Backend()
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := neuron.DefaultConfig(neuron.FSTS, 1)
	net := model.Net{InputDims: []int{4}, Blocks: []model.Block{model.DenseBlock("hidden_0", 6, cfg)},
		Classes: 2, Readout: model.ReadoutSum}
	scope := mlmodel.NewStore().RootScope()
	if err := scope.Store().SetRNGStateFromSeed(1); err != nil {
		fmt.Println(err)
		return
	}
	mctx := scope.At("model")
	if err := step.InitVariables(backend, mctx, net); err != nil {
		fmt.Println(err)
		return
	}
	engine, err := step.New(step.Fused, backend, mctx, net, step.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer engine.Close()
	opt, err := step.NewOptimizer(backend, scope, 5e-2, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer opt.Close()

	const batch, steps = 8, 100 // 100 steps of Δt = 4 ms
	x := make([]float32, batch*steps*4)
	labels, mask := make([]int32, batch), make([]float32, batch)
	for b := range batch {
		labels[b], mask[b] = int32(b%2), 1
		f := []float64{2, 10}[b%2] // Hz
		for k := range steps {
			v := float32(1 + math.Sin(2*math.Pi*f*float64(k)*cfg.Dt))
			for c := range 4 {
				x[(b*steps+k)*4+c] = v
			}
		}
	}
	for range 10 {
		b := step.Batch{X: tensors.FromFlatDataAndDimensions(x, batch, steps, 4),
			Labels: tensors.FromFlatDataAndDimensions(labels, batch), Mask: tensors.FromFlatDataAndDimensions(mask, batch)}
		_, grads, err := engine.Gradients(b)
		if err == nil {
			_, err = opt.Apply(grads)
		}
		for _, g := range grads {
			g.MustFinalizeAll()
		}
		for _, t := range []*tensors.Tensor{b.X, b.Labels, b.Mask} {
			t.MustFinalizeAll()
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}

	learned, err := neuron.ReadLearned(mctx.At("hidden_0").At("neuron"), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	delays := make([]float64, learned.Sets())
	for i := range delays {
		d, err := learned.TSGroupDelay(i, 10)
		if err != nil {
			fmt.Println(err)
			return
		}
		delays[i] = 1000 * d // ms
	}
	fmt.Printf("f* = %.0f Hz\n", learned.TargetHz)
	fmt.Printf("β = %.1f\n", learned.Beta[0])
	fmt.Printf("λ = %.2f\n", learned.Lambda[0])
	fmt.Printf("TS group delay at 10 Hz = %.1f ms\n", delays)
	// Output:
	// f* = [1 3 6 11 23 44] Hz
	// β = [0.0 0.2 0.2 -0.1 0.0 -0.2]
	// λ = [0.05 0.06 0.06 0.04 0.05 0.04]
	// TS group delay at 10 Hz = [0.2 0.3 0.3 0.1 0.2 0.1] ms
}

// The stability limits of a layer's target frequency with the SHD/SSC constants: the target at 99 % of the
// Jury bound on κ of the semi-implicit update (Appendix A.2), where Config.ForwardClip clamps f*, and the
// frequency guard's cap at the released code's safety 0.98, in Hz and in the trainable coordinate ln(f*/Hz)
// (step.Optimizer.Guard takes the latter).
func ExampleConfig_GuardCap() {
	cfg := neuron.DefaultConfig(neuron.FSTS, 2)
	fmax, _ := cfg.MaxTargetHz()
	fSafe, capValue, _ := cfg.GuardCap(neuron.DefaultFreqGuardSafety)
	fmt.Printf("forward clip at %.2f Hz, guard at %.2f Hz (ln f* = %.3f) for variable %s\n",
		fmax, fSafe, capValue, neuron.TargetVariable(cfg))
	// Output:
	// forward clip at 76.81 Hz, guard at 76.42 Hz (ln f* = 4.336) for variable log_target_hz
}
