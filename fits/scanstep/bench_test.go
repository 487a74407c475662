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
// rate 0.2, 35 classes, K = 25) with package chunked's executor (autodiff of each chunk) and this
// package's (hand-derived adjoint), in one process: the first step of each (compilation included) is
// reported as autodiff-first-s and hand-first-s, then the two alternate for 5 rounds and the medians are
// reported as autodiff-ms and hand-ms. Run with -benchtime 1x; set XLA_FLAGS (e.g. to an empty value) to
// measure at XLA's default optimization level instead of the test binary's lowered one.
func BenchmarkStepInterleaved(b *testing.B) {
	backend := xlaBackend(b)
	const batch, steps, inputs, rounds = 128, 250, 140, 5
	spec := chunked.Spec{Layers: 1, Width: 128, Neuron: neuron.DefaultConfig(neuron.FSTS, 2), Classes: 35, Chunk: 25}
	rng := rand.New(rand.NewPCG(1, 1))
	ctx := network(b, rng, spec, inputs)
	x, labels, mask := batchOf(rng, batch, steps, inputs, spec.Classes)
	auto, err := chunked.New(backend, ctx, spec)
	if err != nil {
		b.Fatal(err)
	}
	hand, err := New(backend, ctx, spec)
	if err != nil {
		b.Fatal(err)
	}
	engines := []stepper{auto, hand}
	defer func() {
		for _, e := range engines {
			e.Close()
		}
	}()
	cpu := [2][]float64{}
	run := func(e stepper) float64 {
		start, startCPU := time.Now(), cpuSeconds(b)
		res, err := e.Step(x, labels, mask)
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range res.Grads {
			g.FinalizeAll()
		}
		i := 0
		if e == hand {
			i = 1
		}
		cpu[i] = append(cpu[i], cpuSeconds(b)-startCPU)
		return time.Since(start).Seconds()
	}
	first := []float64{run(auto), run(hand)}
	cpu = [2][]float64{}
	times := [2][]float64{}
	for range b.N {
		for range rounds {
			for i, e := range engines {
				times[i] = append(times[i], run(e))
			}
		}
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(first[0], "autodiff-first-s")
	b.ReportMetric(first[1], "hand-first-s")
	b.ReportMetric(1e3*median(times[0]), "autodiff-ms")
	b.ReportMetric(1e3*median(times[1]), "hand-ms")
	b.ReportMetric(1e3*median(cpu[0]), "autodiff-cpu-ms")
	b.ReportMetric(1e3*median(cpu[1]), "hand-cpu-ms")
}

// cpuSeconds returns the user and system CPU time of this process so far.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
