// Command bad has a function whose vector code holds a legacy-SSE instruction and one whose vector code
// holds none, for the tests of package vexcheck (built with GOEXPERIMENT=simd for amd64).
package main

import (
	"fmt"
	"simd/archsimd"
)

// mixed squares x[:8] with AVX and returns a·x[0] + x[1]·x[2] in scalar code: the Go compiler's scalar float
// multiply is legacy SSE, here and in the inlined call of product.
//
//go:noinline
func mixed(x []float32, a float32) float32 {
	v := archsimd.LoadFloat32x8(x[:8])
	v.Mul(v).Store(x[:8])
	return a*x[0] + // legacy SSE here
		product(x[1], x[2]) // legacy SSE inlined here
}

// product is inlined into its callers.
func product(a, b float32) float32 {
	return a * b // legacy SSE in product
}

// clean squares x[:8] with AVX and clears the upper halves of the vector registers.
//
//go:noinline
func clean(x []float32) {
	v := archsimd.LoadFloat32x8(x[:8])
	v.Mul(v).Store(x[:8])
	archsimd.ClearAVXUpperBits()
}

func main() {
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	if archsimd.X86.AVX2() {
		clean(x)
		fmt.Println(mixed(x, 2))
	}
}
