package step

import (
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// TestStepMasks checks the per-step masks a training step's StepMasks name: [batch, T, OutDims...] with the
// values of dropmask.Mask, 0 or 1/(1 − p) and not constant over time; different for different steps, blocks
// and seeds (the blocks have the same width), identical when drawn again for the same (seed, step, block).
func TestStepMasks(t *testing.T) {
	const batch, steps, p = 3, 7, 0.5
	net := feedForwardNet(neuron.FS, 0, model.ReadoutMean, p)
	host := func(seed, step int64) [][]float32 {
		t.Helper()
		ts, err := StepMasks{Seed: seed, Step: step}.Tensors(net, batch, steps)
		if err != nil {
			t.Fatal(err)
		}
		out := make([][]float32, len(ts))
		for i, m := range ts {
			if got := m.Shape().Dimensions; !slices.Equal(got, []int{batch, steps, 5}) {
				t.Fatalf("block %d: mask %v, want [%d %d 5]", i, got, batch, steps)
			}
			out[i] = tensors.MustCopyFlatData[float32](m)
			m.MustFinalizeAll()
		}
		return out
	}
	a := host(4, 10)
	for i, m := range a {
		want, err := dropmask.Mask(4, 10, i, p, batch, steps, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m, want) {
			t.Errorf("block %d: the mask is not dropmask.Mask(seed, step, block)", i)
		}
		changes := 0
		for j, v := range m {
			if v != 0 && v != 2 {
				t.Fatalf("block %d: mask value %g", i, v)
			}
			if j%(steps*5) >= 5 && v != m[j-5] {
				changes++
			}
		}
		if changes == 0 {
			t.Errorf("block %d: the mask is constant over time", i)
		}
	}
	if slices.Equal(a[0], a[1]) {
		t.Error("blocks 0 and 1 have the same mask")
	}
	for _, other := range [][2]int64{{4, 11}, {5, 10}} {
		b := host(other[0], other[1])
		for i := range a {
			if slices.Equal(a[i], b[i]) {
				t.Errorf("block %d: seed 4 step 10 and seed %d step %d have the same mask", i, other[0], other[1])
			}
		}
	}
	again := host(4, 10)
	for i := range a {
		if !slices.Equal(a[i], again[i]) {
			t.Errorf("block %d: the mask of the same seed and step changed", i)
		}
	}
}

// TestMasksDraw checks what Masks.Draw puts in a batch: the per-step masks' names (the run's seed and the
// step given) in model.DropoutStep mode, time-shared tensors [batch, 1, width] in model.DropoutShared mode,
// nothing without dropout; and that a training step without its masks is an error.
func TestMasksDraw(t *testing.T) {
	b := testBackend(t)
	for _, tc := range []struct {
		name string
		net  model.Net
	}{
		{"step", feedForwardNet(neuron.FS, 0, model.ReadoutMean, 0.4)},
		{"shared", sharedDropout(feedForwardNet(neuron.FS, 0, model.ReadoutMean, 0.4))},
		{"none", feedForwardNet(neuron.FS, 0, model.ReadoutMean, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scope := mlmodel.NewStore().RootScope()
			masks, err := NewMasks(b, scope, tc.net, 9)
			if err != nil {
				t.Fatal(err)
			}
			defer masks.Close()
			batch := batchOf(4, 5, tc.net.InputDims, tc.net.Classes, 0)
			if err := masks.Draw(&batch, 123); err != nil {
				t.Fatal(err)
			}
			switch tc.name {
			case "step":
				if batch.StepMasks == nil || *batch.StepMasks != (StepMasks{Seed: 9, Step: 123}) || batch.Dropout != nil {
					t.Errorf("drew %v and %d tensors, want StepMasks{9, 123} only", batch.StepMasks, len(batch.Dropout))
				}
			case "shared":
				if batch.StepMasks != nil || len(batch.Dropout) != 2 {
					t.Fatalf("drew %v and %d tensors, want 2 tensors", batch.StepMasks, len(batch.Dropout))
				}
				for _, m := range batch.Dropout {
					if got := m.Shape().Dimensions; !slices.Equal(got, []int{4, 1, 5}) {
						t.Errorf("time-shared mask %v, want [4 1 5]", got)
					}
				}
			case "none":
				if batch.StepMasks != nil || batch.Dropout != nil {
					t.Errorf("drew masks without dropout")
				}
			}
			if tc.name != "none" {
				if err := checkBatch(tc.net, batchOf(4, 5, tc.net.InputDims, tc.net.Classes, 0), true); err == nil {
					t.Error("a training step without its dropout masks was accepted")
				}
			}
		})
	}
}

// TestStepMasksSameInEveryEngine runs the forward pass of one training step with per-step dropout in the
// chunked, stepwise, scan and fused engines (the fused engine's kernel regenerates the masks from their
// keys, the others apply the tensors StepMasks.Tensors draws) and compares every block's output h = s·D:
// identical across the engines, 0 wherever the block's dropmask.Mask is 0, 0 or 1/(1 − p) elsewhere, and
// different at another step.
func TestStepMasksSameInEveryEngine(t *testing.T) {
	b := testBackend(t)
	const batchSize, steps, p = 6, 6, 0.5
	net := feedForwardNet(neuron.FSTS, 2, model.ReadoutMean, p)
	scope := mlmodel.NewStore().RootScope()
	if err := scope.Store().SetRNGStateFromSeed(3); err != nil {
		t.Fatal(err)
	}
	mctx := scope.At("model")
	if err := InitVariables(b, mctx, net); err != nil {
		t.Fatal(err)
	}
	outputs := func(name string, step int64) [][]float32 {
		t.Helper()
		e, err := New(name, b, mctx, net, Options{Chunk: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		c := e.(*chunked)
		c.timeSum = false // every block's whole output h, the last one's too, is compared
		defer c.mem.free()
		batch := batchOf(batchSize, steps, net.InputDims, net.Classes, 0)
		batch.StepMasks = &StepMasks{Seed: 2, Step: step}
		drop, err := c.dropout(batch)
		if err != nil {
			t.Fatal(err)
		}
		hs, _, _, _, err := c.forwardPass(batch, drop, true, false)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for _, h := range hs[1:] {
			out = append(out, tensors.MustCopyFlatData[float32](h))
		}
		return out
	}
	want := outputs(Chunked, 8)
	for i, h := range want {
		mask, err := dropmask.Mask(2, 8, i, p, batchSize, steps, net.OutSize(i))
		if err != nil {
			t.Fatal(err)
		}
		kept := 0
		for j, v := range h {
			switch {
			case mask[j] == 0 && v != 0:
				t.Fatalf("block %d: h[%d] = %g where the mask drops", i, j, v)
			case v != 0 && v != 2:
				t.Fatalf("block %d: h[%d] = %g, want 0 or 2", i, j, v)
			case v == 2:
				kept++
			}
		}
		if kept == 0 {
			t.Fatalf("block %d: no kept spike: the test does not exercise the mask", i)
		}
	}
	for _, name := range enginesBut(Chunked, Unrolled) {
		got := outputs(name, 8)
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("%s: block %d's output differs from the chunked engine's", name, i)
			}
		}
	}
	other := outputs(Fused, 9)
	for i := range want {
		if slices.Equal(other[i], want[i]) {
			t.Errorf("block %d: steps 8 and 9 give the same output", i)
		}
	}
}
