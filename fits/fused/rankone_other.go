//go:build !(goexperiment.simd && amd64)

package fused

// fillVector is absent from this build: RankOne.fill runs its scalar loop.
func fillVector(_ ISA, _, _, _, _ []float32) bool { return false }

// sumsVector is absent from this build: RankOne.sums runs its scalar loop.
func sumsVector(_ ISA, _, _, _ []float32) bool { return false }

// timeSumVector is absent from this build: timeSum runs its scalar loop.
func timeSumVector(_ ISA, _, _ []float32) bool { return false }
