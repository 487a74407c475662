package fused_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fits-snn/fits/fits/fused"
)

// BenchmarkKernel times Forward and Backward of one FS+TS layer (M = 2, adaptation on) at the kernel table's
// shape, B = 128, T = 250, N = W neurons, on GOMAXPROCS host threads.
func BenchmarkKernel(b *testing.B) {
	for _, w := range []int{128, 512} {
		k := kernelCase{adapt: true, m: 2, dims: []int{128, 250, w}}
		c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(1, 2)))
		spikes, cotCur := make([]float32, len(cur)), make([]float32, len(cur))
		b.Run(fmt.Sprintf("forward/W=%d", w), func(b *testing.B) {
			for b.Loop() {
				if _, err := fused.Forward(&c, s, cur, nil, spikes); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("backward/W=%d", w), func(b *testing.B) {
			for b.Loop() {
				if _, err := fused.Backward(&c, s, cur, cot, nil, cotCur); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
