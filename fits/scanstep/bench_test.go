package scanstep

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fits-snn/fits/fits/chunked"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// stepper is what chunked.Executor and Executor have in common.
type stepper interface {
	Step(x, labels, mask *tensors.Tensor) (chunked.Result, error)
	Close()
}

// BenchmarkStepInterleaved times one training step (forward and backward, no update) of one hidden FSTS
// layer (M = 2, W = 128) of the paper's kernel-runtime shape (B = 128, T = 250, 140 Bernoulli inputs at
// rate 0.2, 35 classes, K = 25) with three executors in one process: package chunked's (autodiff of each
// chunk, "autodiff"), and this package's hand-derived adjoint with the forward values saved ("hand") or
// recomputed ("recompute"). The first step of each (compilation included) is reported as <name>-first-s;
// then the three alternate for 5 rounds, and the medians of wall time and of the process's CPU time
// (user + system, all threads) per step are reported as <name>-ms and <name>-cpu-ms. Run with
// -benchtime 1x; set XLA_FLAGS (e.g. to an empty value) to measure at XLA's default optimization level
// instead of the test binary's lowered one.
func BenchmarkStepInterleaved(b *testing.B) {
	backend := xlaBackend(b)
	const batch, steps, inputs, rounds = 128, 250, 140, 5
	spec := chunked.Spec{Layers: 1, Width: 128, Neuron: neuron.DefaultConfig(neuron.FSTS, 2), Classes: 35, Chunk: 25}
	rng := rand.New(rand.NewPCG(1, 1))
	ctx := network(b, rng, spec, inputs)
	x, labels, mask := batchOf(rng, batch, steps, inputs, spec.Classes)
	names := []string{"autodiff", "hand", "recompute"}
	var engines []stepper
	defer func() {
		for _, e := range engines {
			e.Close()
		}
	}()
	auto, err := chunked.New(backend, ctx, spec)
	if err != nil {
		b.Fatal(err)
	}
	engines = append(engines, auto)
	for _, opts := range []Options{{}, {Recompute: true}} {
		e, err := New(backend, ctx, spec, opts)
		if err != nil {
			b.Fatal(err)
		}
		engines = append(engines, e)
	}
	wall := make([][]float64, len(engines))
	cpu := make([][]float64, len(engines))
	run := func(i int) {
		start, startCPU := time.Now(), cpuSeconds(b)
		res, err := engines[i].Step(x, labels, mask)
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range res.Grads {
			g.FinalizeAll()
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
