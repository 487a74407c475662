package fused_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/fused"
)

// BenchmarkKernel times Forward and Backward of one FS+TS layer (M = 2, adaptation on) at the kernel table's
// shape, B = 128, T = 250, N = W neurons, on GOMAXPROCS host threads, with every ISA this build and CPU run
// (scalar, avx2, avx512): without dropout, with a time-shared mask and with the per-step mask regenerated
// from its key (p = 0.5). Besides the wall time it reports the process's CPU time per call (cpu-ms/op, all
// threads), which a machine shared with other work disturbs less.
func BenchmarkKernel(b *testing.B) {
	for _, w := range []int{128, 512} {
		k := kernelCase{adapt: true, m: 2, dims: []int{128, 250, w}}
		c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(1, 2)))
		spikes, cotCur := make([]float32, len(cur)), make([]float32, len(cur))
		shared := make([]float32, s.Batch*s.Neurons)
		for i := range shared {
			shared[i] = float32(2 * (i % 2))
		}
		for _, d := range []struct {
			name string
			drop *fused.Dropout
		}{
			{"none", nil},
			{"shared", &fused.Dropout{Shared: shared}},
			{"step", &fused.Dropout{Key: dropmask.Key(1, 0, 0), P: 0.5}},
		} {
			for _, isa := range fused.ISAs() {
				if !isa.Supported() {
					continue
				}
				b.Run(fmt.Sprintf("forward/W=%d/dropout=%s/isa=%v", w, d.name, isa), func(b *testing.B) {
					useISA(b, isa)
					cpu := startCPUTimer(b)
					for b.Loop() {
						if _, err := fused.Forward(&c, s, cur, d.drop, spikes); err != nil {
							b.Fatal(err)
						}
					}
					cpu.report()
				})
				b.Run(fmt.Sprintf("backward/W=%d/dropout=%s/isa=%v", w, d.name, isa), func(b *testing.B) {
					useISA(b, isa)
					cpu := startCPUTimer(b)
					for b.Loop() {
						if _, err := fused.Backward(&c, s, cur, cot, d.drop, cotCur); err != nil {
							b.Fatal(err)
						}
					}
					cpu.report()
				})
			}
		}
	}
}

// BenchmarkKernelSMNIST times Forward and Backward at the released sequential-MNIST recipe's shape (Table
// A.9): B = 256, T = 784 pixel steps, W = 256, FS+TS with M = 1, no dropout, with the widest ISA; also
// with the Go kernels in place of the assembly (forward-go, backward-go: the same with AVX2 or without
// GOEXPERIMENT=simd, where the assembly does not run).
func BenchmarkKernelSMNIST(b *testing.B) {
	k := kernelCase{adapt: true, m: 1, dims: []int{256, 784, 256}}
	c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(1, 2)))
	spikes, cotCur := make([]float32, len(cur)), make([]float32, len(cur))
	for _, assembly := range []bool{true, false} {
		suffix := ""
		if !assembly {
			suffix = "-go"
		}
		benchAssembly(b, "forward"+suffix, assembly, func() error {
			_, err := fused.Forward(&c, s, cur, nil, spikes)
			return err
		})
		benchAssembly(b, "backward"+suffix, assembly, func() error {
			_, err := fused.Backward(&c, s, cur, cot, nil, cotCur)
			return err
		})
	}
	// The first layer's one-input current computed in cache (RankOne), and the last layer's output summed
	// over time in cache (ForwardTimeSum), against the forward and backward above.
	in, _ := rankOneInput(rand.New(rand.NewPCG(3, 4)), s)
	benchAssembly(b, "forward-rank-one", true, func() error {
		_, err := fused.ForwardRankOne(&c, s, in, nil, spikes, nil)
		return err
	})
	benchAssembly(b, "backward-rank-one", true, func() error {
		_, _, _, err := fused.BackwardRankOne(&c, s, in, cot, nil)
		return err
	})
	sums := make([]float32, s.Batch*s.Neurons)
	benchAssembly(b, "forward-time-sum", true, func() error {
		_, err := fused.ForwardTimeSum(&c, s, cur, nil, sums)
		return err
	})
}

// benchAssembly times call as sub-benchmark name, with the order-1 assembly kernels on or off.
func benchAssembly(b *testing.B, name string, assembly bool, call func() error) {
	b.Run(name, func(b *testing.B) {
		prev := fused.SetAssemblyKernels(assembly)
		defer fused.SetAssemblyKernels(prev)
		cpu := startCPUTimer(b)
		for b.Loop() {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report()
	})
}

// BenchmarkAdjointOrder1 times Backward of an FS+TS layer of order M = 1 at the shape of the SHD and SSC
// recipes' hidden layers (B = 128, T = 250, W = 128, strict spikes, the per-step dropout mask with p = 0.3,
// as the released code trains), with the assembly kernels (AVX-512) and with the Go kernels in their place.
func BenchmarkAdjointOrder1(b *testing.B) {
	k := kernelCase{adapt: true, m: 1, dims: []int{128, 250, 128}}
	c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(1, 2)))
	c.StrictSpike = true
	cotCur := make([]float32, len(cur))
	d := &fused.Dropout{Key: dropmask.Key(1, 0, 0), P: 0.3}
	for _, assembly := range []bool{true, false} {
		benchAssembly(b, fmt.Sprintf("assembly=%v", assembly), assembly, func() error {
			_, err := fused.Backward(&c, s, cur, cot, d, cotCur)
			return err
		})
	}
}
