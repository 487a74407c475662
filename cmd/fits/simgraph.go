package main

import (
	"math"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// graphChunk is the number of steps of Algorithm 1 that one compiled graph of `simulate --engine=graph`
// runs; longer inputs go through the same graph chunk after chunk, the neuron's state carried from one call
// to the next in Go (neuron.LayerFrom). Compile time and memory are those of one chunk whatever the input
// length. It is small because XLA's compile time of this graph grows fast with its steps, while one call
// costs microseconds (measured: docs/performance-notes.md).
const graphChunk = 16

// graphSimulation is one neuron of a layer with explicit parameters, compiled for chunks of a fixed
// number of steps.
type graphSimulation struct {
	cfg   neuron.Config
	steps int // steps per call
	exec  *model.Exec
}

// newGraphSimulation prepares the neuron of configuration cfg with parameters p (the variables set by
// neuron.NeuronParams.Scope) for chunks of steps steps. cfg's kind has a target frequency and p holds
// cfg.Order betas and lambdas: fits simulate checks both.
func newGraphSimulation(b compute.Backend, cfg neuron.Config, p neuron.NeuronParams, steps int) (*graphSimulation, error) {
	scope, cfg, err := p.Scope(cfg)
	if err != nil {
		return nil, err
	}
	// inputs: the chunk's currents [1, steps, 1] and the carried state (neuron.StateComponents tensors
	// [1, 1]); outputs: the spikes [1, steps, 1], the pre-reset voltages [1, steps, 1] and the state after
	// the chunk. Each step is one LayerFrom call of one step, so that its post-reset voltage V is
	// available: ṼM = V + S·Vth (the reset is subtractive).
	exec, err := model.NewExec(b, scope.Store(), func(_ *model.Scope, in []*Node) []*Node {
		x, state := in[0], in[1:]
		spikes := make([]*Node, steps)
		vPre := make([]*Node, steps)
		for k := range steps {
			xk := Slice(x, AxisRange(), AxisRange(k, k+1), AxisRange())
			spikes[k], state = neuron.LayerFrom(scope, xk, cfg, state)
			vPre[k] = Add(Reshape(state[0], 1, 1, 1), MulScalar(spikes[k], cfg.Vth))
		}
		return append([]*Node{Concatenate(spikes, 1), Concatenate(vPre, 1)}, state...)
	})
	if err != nil {
		return nil, err
	}
	return &graphSimulation{cfg: cfg, steps: steps, exec: exec}, nil
}

// run simulates the neuron from the zero state over the input currents I[0..T−1], in chunks; the last
// chunk is padded with zeros, whose outputs are dropped. It returns S[k+1] and ṼM[k+1] for k = 0..T−1, or
// up to the first step whose ṼM is not finite (overflow), the last value returned.
func (g *graphSimulation) run(current []float64) (spikes []int, vPre []float64, err error) {
	state := make([]*tensors.Tensor, neuron.StateComponents(g.cfg))
	for i := range state {
		state[i] = tensors.FromShape(shapes.Make(dtypes.Float32, 1, 1))
	}
	spikes, vPre = make([]int, len(current)), make([]float64, len(current))
	buf := make([]float32, g.steps)
	for start := 0; start < len(current); start += g.steps {
		clear(buf)
		end := min(start+g.steps, len(current))
		for k := start; k < end; k++ {
			buf[k-start] = float32(current[k])
		}
		args := []any{tensors.FromFlatDataAndDimensions(buf, 1, g.steps, 1)}
		for _, t := range state {
			args = append(args, t)
		}
		outs, err := g.exec.Call(args...)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range state {
			t.MustFinalizeAll()
		}
		s := tensors.MustCopyFlatData[float32](outs[0])
		v := tensors.MustCopyFlatData[float32](outs[1])
		outs[0].MustFinalizeAll()
		outs[1].MustFinalizeAll()
		state = outs[2:]
		for k := start; k < end; k++ {
			spikes[k], vPre[k] = int(s[k-start]), float64(v[k-start])
			if math.IsNaN(vPre[k]) || math.IsInf(vPre[k], 0) {
				return spikes[:k+1], vPre[:k+1], nil
			}
		}
	}
	for _, t := range state {
		t.MustFinalizeAll()
	}
	return spikes, vPre, nil
}
