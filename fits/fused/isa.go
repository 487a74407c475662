package fused

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// ISA is an instruction set the kernel's inner loops run with. Every ISA computes the same values to the
// bit (the same float32 operations in the same order, lane by lane); they differ in speed only.
type ISA int

const (
	// Scalar runs one neuron at a time in portable Go.
	Scalar ISA = iota
	// AVX2 runs 8 neurons per instruction (builds with GOEXPERIMENT=simd on amd64, CPUs with AVX2).
	AVX2
	// AVX512 runs 16 neurons per instruction, and the rest of a layer in groups of 8 (builds with
	// GOEXPERIMENT=simd on amd64, CPUs with AVX-512 F, CD, BW, DQ and VL).
	AVX512
)

// avx512ByDefault says whether a CPU with AVX-512 runs AVX512 unless SetISA says otherwise: yes, measured
// faster than AVX2 forward and backward on an Intel Xeon with AVX-512 (docs/performance.md).
const avx512ByDefault = true

// ISAs lists every ISA, slowest first.
func ISAs() []ISA { return []ISA{Scalar, AVX2, AVX512} }

// String returns the ISA's name: scalar, avx2 or avx512.
func (i ISA) String() string {
	switch i {
	case Scalar:
		return "scalar"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return fmt.Sprintf("ISA(%d)", int(i))
}

// ParseISA returns the ISA named s (as String names it, any case).
func ParseISA(s string) (ISA, error) {
	for _, i := range ISAs() {
		if strings.EqualFold(strings.TrimSpace(s), i.String()) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("fused: unknown ISA %q (valid: scalar, avx2, avx512)", s)
}

// Supported reports whether this build and CPU can run the ISA.
func (i ISA) Supported() bool { return supported(i) }

// DefaultISA returns the ISA Forward and Backward run unless SetISA chose another: the fastest one this
// build and CPU support, as measured (AVX512, then AVX2, then Scalar).
func DefaultISA() ISA {
	switch {
	case avx512ByDefault && supported(AVX512):
		return AVX512
	case supported(AVX2):
		return AVX2
	}
	return Scalar
}

var activeISA atomic.Int32

func init() { activeISA.Store(int32(DefaultISA())) }

// ActiveISA returns the ISA Forward and Backward run.
func ActiveISA() ISA { return ISA(activeISA.Load()) }

// SetISA makes Forward and Backward run isa from their next call on and returns the ISA they ran before;
// it is an error (and changes nothing) when this build or CPU cannot run isa. The results do not depend on
// the ISA: it is for benchmarks (the vector code's speed-up over the scalar code) and tests. A call already
// running keeps the ISA it started with.
func SetISA(isa ISA) (ISA, error) {
	if !supported(isa) {
		return ActiveISA(), fmt.Errorf("fused: this build or CPU cannot run %v", isa)
	}
	return ISA(activeISA.Swap(int32(isa))), nil
}

// Vector reports whether Forward and Backward run their inner loops with SIMD instructions (ActiveISA is
// not Scalar: built with GOEXPERIMENT=simd on amd64, run on a CPU with AVX2).
func Vector() bool { return ActiveISA() != Scalar }
