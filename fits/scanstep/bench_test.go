package scanstep

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// BenchmarkStepInterleaved times one training step (forward and backward, no update) of a network with one
// hidden FSTS layer (M = 2, W = 128) on the paper's kernel-runtime shape (B = 128, T = 250, 140 Bernoulli
// inputs at rate 0.2, 35 classes, mean readout, K = 25) with three engines in one process: package step's
// chunked engine (autodiff of each chunk, "autodiff") and this package's with the forward values saved
// ("hand") or recomputed ("recompute"). The first step of each (compilation included) is reported as
// <name>-first-s; then the three alternate for 5 rounds, and the medians of wall time and of the process's
// CPU time (user + system, all threads) per step are reported as <name>-ms and <name>-cpu-ms. Run with
// -benchtime 1x; set XLA_FLAGS (e.g. to an empty value) to measure at XLA's default optimization level
// instead of the test binary's lowered one.
func BenchmarkStepInterleaved(b *testing.B) {
	backend := testBackend(b)
	const batch, steps, inputs, rounds = 128, 250, 140, 5
	cfg := model.DefaultConfig(neuron.FSTS, 2, 128, 35)
	cfg.Layers = 1
	net := cfg.Net(inputs)
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(1); err != nil {
		b.Fatal(err)
	}
	mctx := ctx.In("model")
	if err := step.InitVariables(backend, mctx, net); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, batch*steps*inputs)
	for i := range x {
		if rng.Float64() < 0.2 {
			x[i] = 1
		}
	}
	labels, mask := make([]int32, batch), make([]float32, batch)
	for i := range labels {
		labels[i], mask[i] = int32(rng.IntN(35)), 1
	}
	in := step.Batch{
		X:      tensors.FromFlatDataAndDimensions(x, batch, steps, inputs),
		Labels: tensors.FromFlatDataAndDimensions(labels, batch),
		Mask:   tensors.FromFlatDataAndDimensions(mask, batch),
	}
	names := []string{"autodiff", "hand", "recompute"}
	var engines []step.Engine
	defer func() {
		for _, e := range engines {
			e.Close()
		}
	}()
	auto, err := step.New(step.Chunked, backend, mctx, net, step.Options{Chunk: 25})
	if err != nil {
		b.Fatal(err)
	}
	engines = append(engines, auto)
	for _, recompute := range []bool{false, true} {
		e, err := New(backend, mctx, net, Options{Chunk: 25, Recompute: recompute})
		if err != nil {
			b.Fatal(err)
		}
		engines = append(engines, e)
	}
	wall := make([][]float64, len(engines))
	cpu := make([][]float64, len(engines))
	run := func(i int) {
		start, startCPU := time.Now(), cpuSeconds(b)
		_, grads, err := engines[i].Gradients(in)
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range grads {
			g.MustFinalizeAll()
		}
		wall[i] = append(wall[i], time.Since(start).Seconds())
		cpu[i] = append(cpu[i], cpuSeconds(b)-startCPU)
	}
	for i := range engines {
		run(i)
		b.ReportMetric(wall[i][0], names[i]+"-first-s")
		wall[i], cpu[i] = nil, nil
	}
	for range b.N {
		for range rounds {
			for i := range engines {
				run(i)
			}
		}
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	for i, name := range names {
		b.ReportMetric(1e3*median(wall[i]), name+"-ms")
		b.ReportMetric(1e3*median(cpu[i]), name+"-cpu-ms")
	}
}

// cpuSeconds returns the user and system CPU time of this process so far.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
