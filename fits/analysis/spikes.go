package analysis

import (
	"errors"
	"fmt"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Trains are values over time for several examples, indexed [sample][time][unit]: spikes (0 or 1) of a
// hidden layer's neurons, or an example's input features.
type Trains [][][]float32

// Activity is what the trained network does on a few examples.
type Activity struct {
	// Split and Index name the examples: Index[s] is sample s's position in the split.
	Split Split
	Index []int
	// Dt is the time bin in seconds.
	Dt float64
	// Labels are the examples' classes and Predicted the network's (argmax of Logits).
	Labels, Predicted []int
	// Logits are the class scores, [sample][class].
	Logits [][]float32
	// Input holds the examples' inputs, [sample][time][feature] (features flattened for event frames).
	Input Trains
	// Hidden holds each hidden layer's spikes, [layer][sample][time][neuron] with values 0 or 1
	// (neurons flattened over height, width and channels for convolutional layers). The network runs
	// without dropout, as at evaluation.
	Hidden []Trains
}

// Spikes runs the trained network, without dropout, on the examples idx of a split (all of them when
// idx is empty) and returns their inputs, hidden spike trains and predictions. The forward pass is the
// network train.NewNetwork builds for the run, with the checkpoint's variables.
func (r *Run) Spikes(split Split, idx []int) (*Activity, error) {
	set, err := r.Set(split)
	if err != nil {
		return nil, err
	}
	if len(idx) == 0 {
		idx = make([]int, set.N)
		for i := range idx {
			idx[i] = i
		}
	}
	for _, i := range idx {
		if i < 0 || i >= set.N {
			return nil, fmt.Errorf("example %d outside the %s split of %d examples", i, split, set.N)
		}
	}
	ds, err := r.Dataset()
	if err != nil {
		return nil, err
	}
	net, err := train.NewNetwork(r.Config, ds)
	if err != nil {
		return nil, err
	}
	if r.opts.Backend == nil {
		return nil, errors.New("analysis: no backend given (Options.Backend)")
	}
	exec, err := model.NewExec(r.opts.Backend, r.Context.Store(), func(_ *model.Scope, x *graph.Node) []*graph.Node {
		scope := r.Context
		neuron.SetTraining(scope, x.Graph(), false)
		out := net.Build(scope.At("%s", train.ModelScope), x)
		return append([]*graph.Node{out.Logits}, out.Spikes...)
	})
	if err != nil {
		return nil, err
	}
	x := batch(set, idx)
	outs, err := exec.Call(x)
	x.MustFinalizeAll()
	if err != nil {
		return nil, fmt.Errorf("forward pass of %s: %w", r.Dir, err)
	}
	defer func() {
		for _, t := range outs {
			t.MustFinalizeAll()
		}
	}()
	a := &Activity{Split: split, Index: append([]int(nil), idx...), Dt: ds.Dt}
	logits, err := toFloat32(outs[0])
	if err != nil {
		return nil, err
	}
	classes := outs[0].Shape().Dimensions[1]
	for s, i := range idx {
		a.Labels = append(a.Labels, int(set.Labels[i]))
		row := logits[s*classes : (s+1)*classes]
		a.Logits = append(a.Logits, row)
		best := 0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
		}
		a.Predicted = append(a.Predicted, best)
	}
	input := make([]float32, len(idx)*set.T*set.F)
	set.ExamplesInto(idx, input)
	a.Input = split3(input, len(idx), set.T, set.F)
	for _, t := range outs[1:] {
		v, err := toFloat32(t)
		if err != nil {
			return nil, err
		}
		dims := t.Shape().Dimensions
		a.Hidden = append(a.Hidden, split3(v, dims[0], dims[1], size(dims[2:])))
	}
	return a, nil
}

// batch returns the examples idx of set as one tensor [len(idx), time, features...].
func batch(set *data.Set, idx []int) *tensors.Tensor {
	x := make([]float32, len(idx)*set.T*set.F)
	set.ExamplesInto(idx, x)
	return tensors.FromFlatDataAndDimensions(x, append([]int{len(idx)}, set.Shape()...)...)
}

// toFloat32 copies a float32 tensor's values.
func toFloat32(t *tensors.Tensor) ([]float32, error) {
	if t.DType() != dtypes.Float32 {
		return nil, fmt.Errorf("network output has dtype %s, want float32", t.DType())
	}
	return tensors.CopyFlatData[float32](t)
}

// split3 views flat row-major values [a, b, c] as nested slices [a][b][c] (sharing v's storage).
func split3(v []float32, a, b, c int) Trains {
	out := make(Trains, a)
	for i := range out {
		out[i] = make([][]float32, b)
		for j := range out[i] {
			off := (i*b + j) * c
			out[i][j] = v[off : off+c : off+c]
		}
	}
	return out
}

// Rates returns each unit's mean value over samples and time bins of tr [sample][time][unit]: for spike
// trains, the firing probability per bin (divide by Δt for Hz).
func (tr Trains) Rates() []float64 {
	if len(tr) == 0 || len(tr[0]) == 0 {
		return nil
	}
	out := make([]float64, len(tr[0][0]))
	n := 0
	for _, s := range tr {
		for _, row := range s {
			for u, v := range row {
				out[u] += float64(v)
			}
			n++
		}
	}
	for u := range out {
		out[u] /= float64(n)
	}
	return out
}

// MeanRate returns the mean of tr [sample][time][unit] over everything: for spike trains, the layer's
// mean spikes per neuron per bin (the firing rate train.Result reports).
func (tr Trains) MeanRate() float64 {
	r := tr.Rates()
	if len(r) == 0 {
		return 0
	}
	m, _ := MeanStd(r)
	return m
}
