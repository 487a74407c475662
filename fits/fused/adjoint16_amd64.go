//go:build goexperiment.simd && amd64

package fused

import (
	"simd/archsimd"
	"unsafe"
)

// adjointArgs16 are the arguments of adjointM1x16 and adjointM1x16x2, in the order their assembly reads
// them (every field 8 bytes).
type adjointArgs16 struct {
	current    unsafe.Pointer // the group's current at step 0: [T] rows of 16 lanes, rowBytes apart
	cotSpikes  unsafe.Pointer // its spike cotangent at step 0, cotStep apart
	cotCurrent unsafe.Pointer // its current's cotangent at step T − 1, written back to step 0
	rows       unsafe.Pointer // T rows of five vectors a group: the recomputed V0, a, V0 and V1 before the step, S̄
	block      *adjointBlock16
	steps      int
	rowBytes   uintptr
	cotStep    uintptr
	strict     int // 1: S = 1 where ṼM > Vth; 0: where ṼM ≥ Vth
	resetGrad  int // 1: the reset S·Vth carries a gradient (not detached); adjointM1x16 only
	stepMask   int // 1: the per-step dropout mask; adjointM1x16x2 only
}

// adjointBlock16 are the vectors the assembly reads (the constants; per group the dropout mask and the
// coefficients) and writes (per group the coefficient cotangents summed over time), at 64-byte-aligned
// addresses; adjointM1x16 uses the first group's, adjointM1x16x2 both.
type adjointBlock16 struct {
	mu, rho, vth, one, width, scale vec16
	g                               [2]adjointGroup16
	// The per-step dropout mask (dropmask): its key and threshold, fmix32's two multipliers, the scale of
	// the kept elements and the counters' step from one time step to the next (N).
	key, threshold, mul1, mul2 uvec16
	dropScale                  vec16
	stride                     uvec16
}

// adjointGroup16 are the vectors of one group in adjointBlock16; ctr is the per-step mask's counters of
// its last step.
type adjointGroup16 struct {
	drop, eta, gamma, beta, lambda, oneMinusLam vec16
	etaSum, gammaSum, betaSum, lambdaSum        vec16
	ctr                                         uvec16
}

// adjointM1x16 runs the adjoint of one group of 16 neurons of an FS+TS layer of order M = 1 over all T
// steps: first the recomputed state before every step into rows, then back in time the cotangent of the
// current and the coefficient cotangents. Written in assembly because the Go compiler keeps the
// loop-carried vectors of this loop in memory (a store and a load per vector and step), which made the
// Go kernel about twice as slow.
//
//go:noescape
func adjointM1x16(a *adjointArgs16)

// adjointM1x16x2 is adjointM1x16 for the two adjacent groups from the arguments' neuron on, stepped
// together: each step's row holds the first group's five vectors, then the second's.
//
//go:noescape
func adjointM1x16x2(a *adjointArgs16)

// callAdjointM1x16 calls adjointM1x16. A Go function zeroes X15 (XORPS, legacy SSE) after every call of
// an assembly function; here it does so after adjointM1x16's VZEROUPPER, with the upper halves of the
// vector registers clean, where it costs nothing, and outside the kernels that TestNoLegacySSE checks.
//
//go:noinline
func callAdjointM1x16(a *adjointArgs16, pair bool) {
	if pair {
		adjointM1x16x2(a)
	} else {
		adjointM1x16(a)
	}
}

// adjointRowBytes is the size of one step's row in adjointM1x16's rows.
const adjointRowBytes = 5 * 4 * lanes16

// backwardM1x16 is backward16 for FS+TS layers of order M = 1 with the reset not detached (every released
// recipe of that order), two groups of neurons over all T steps (adjointM1x16x2), then the next two, and a
// last single group (adjointM1x16, without the per-step dropout mask); it returns the first neuron it did
// not run. The same operations in the same order as
// backward16, so the same bits (TestISAsAgree). On the sMNIST shape (B = 256, T = 784, N = 256) it took
// 43 ms where backward16 took 85–115 ms on 2 cores of an AMD EPYC (BenchmarkKernelSMNIST), about the time
// its memory traffic takes: the current and the spike cotangent read, the cotangent written.
// hist holds at least 2T rows of adjointRowBytes.
func (x *expanded) backwardM1x16(s Shape, b, from int, in *backwardIn, hist, acc []float32, w *vecWork) int {
	n, T := s.Neurons, s.Steps
	if x.m != 1 || !x.adapt || x.detach || from+lanes16 > n || len(hist)*4 < 2*T*adjointRowBytes {
		return from
	}
	if w.adjoint16 == nil {
		w.adjoint16, w.adjointArgs16 = &alignedSlice[adjointBlock16](1)[0], new(adjointArgs16)
	}
	k, args := w.adjoint16, w.adjointArgs16
	k.mu, k.rho, k.vth = archsimd.BroadcastFloat32x16(x.mu), archsimd.BroadcastFloat32x16(x.rho), archsimd.BroadcastFloat32x16(x.vth)
	k.one, k.width, k.scale = archsimd.BroadcastFloat32x16(1), archsimd.BroadcastFloat32x16(x.width), archsimd.BroadcastFloat32x16(x.scale)
	base := b * T * n
	last := base + (T-1)*n
	// Every address the assembly touches lies within the arrays (the last group's last step).
	_, _, _ = in.current[last+n-1], in.cotCurrent[last+n-1], in.cotSpikes[in.cotSpikesAt(b, T-1, n)+n-1]
	// Field by field: a composite literal zeroes the struct with legacy-SSE stores first.
	args.rows, args.block, args.steps, args.rowBytes = unsafe.Pointer(unsafe.SliceData(hist)), k, T, uintptr(n)*4
	args.cotStep, args.strict, args.resetGrad, args.stepMask = args.rowBytes, 0, 1, 0
	if in.cotRows == 1 {
		args.cotStep = 0 // the same row at every step
	}
	if x.strict {
		args.strict = 1
	}
	step := in.drop.step
	if step {
		args.stepMask = 1
		k.key, k.threshold = archsimd.BroadcastUint32x16(in.drop.key), archsimd.BroadcastUint32x16(in.drop.threshold)
		k.mul1, k.mul2 = archsimd.BroadcastUint32x16(0x85EBCA6B), archsimd.BroadcastUint32x16(0xC2B2AE35)
		k.dropScale, k.stride = archsimd.BroadcastFloat32x16(in.drop.scale), archsimd.BroadcastUint32x16(uint32(n))
	}
	lanes := archsimd.LoadUint32x16(laneOffsets[:lanes16])
	i := from
	for i+lanes16 <= n {
		pair := i+2*lanes16 <= n && adjointPairs
		if !pair && step {
			break // adjointM1x16 has no per-step mask: backward16 runs the last group
		}
		groups := 1
		if pair {
			groups = 2
		}
		for j := range groups {
			g, at := &k.g[j], i+j*lanes16
			g.drop = k.one
			if in.drop.shared != nil {
				g.drop = load16(in.drop.shared, b*n+at)
			}
			g.eta, g.gamma = load16(x.eta, at), load16(x.gamma, at)
			g.beta, g.lambda, g.oneMinusLam = load16(x.beta[0], at), load16(x.lambda[0], at), load16(x.oneMinusLam[0], at)
			if step {
				g.ctr = archsimd.BroadcastUint32x16(uint32(last + at)).Add(lanes)
			}
		}
		args.current = unsafe.Pointer(&in.current[base+i])
		args.cotSpikes = unsafe.Pointer(&in.cotSpikes[in.cotSpikesAt(b, 0, n)+i])
		args.cotCurrent = unsafe.Pointer(&in.cotCurrent[last+i])
		callAdjointM1x16(args, pair)
		for j := range groups {
			g, at := &k.g[j], i+j*lanes16
			g.etaSum.Store(acc[at:])
			g.gammaSum.Store(acc[n+at:])
			g.betaSum.Store(acc[2*n+at:])
			g.lambdaSum.Store(acc[3*n+at:])
		}
		i += groups * lanes16
	}
	return i
}
