//go:build goexperiment.simd && amd64

package fused

import (
	"math"
	"simd/archsimd"
	"unsafe"

	"github.com/fits-snn/fits/fits/dropmask"
)

// adjointArgs16 are the arguments of adjointM1x16x2, in the order its assembly reads them (every field
// 8 bytes).
type adjointArgs16 struct {
	current    unsafe.Pointer // the group's current at step 0: [T] rows of 16 lanes, rowBytes apart
	cotSpikes  unsafe.Pointer // its spike cotangent at step 0, cotStep apart
	cotCurrent unsafe.Pointer // its current's cotangent at step T − 1, written back to step 0
	rows       unsafe.Pointer // T rows of five vectors a group: the recomputed V0, a, V0 and V1 before the step, S̄
	block      *adjointBlock16
	steps      int
	rowBytes   uintptr
	cotStep    uintptr
	stepMask   int // 1: the per-step dropout mask
}

// adjointBlock16 are the vectors the assembly reads (the constants; per group the dropout mask and the
// coefficients) and writes (per group the coefficient cotangents summed over time), at 64-byte-aligned
// addresses.
type adjointBlock16 struct {
	mu, rho, vth, one, width, scale vec16
	g                               [2]adjointGroup16
	// The per-step dropout mask (dropmask): its key and threshold, fmix32's two multipliers, the scale of
	// the kept elements and the counters' step from one time step to the next (N).
	key, threshold, mul1, mul2 uvec16
	dropScale                  vec16
	stride                     uvec16
	// The comparand of u > fireAt that fires (0 for strict spikes, else −2⁻¹⁴⁹: m1x16_amd64.h), and
	// forwardM1x16x2's spike counts.
	fireAt vec16
	count  [2]vec16
}

// adjointGroup16 are the vectors of one group in adjointBlock16; ctr is the per-step mask's counters of
// its last step.
type adjointGroup16 struct {
	drop, eta, gamma, beta, lambda, oneMinusLam vec16
	etaSum, gammaSum, betaSum, lambdaSum        vec16
	ctr                                         uvec16
}

// adjointM1x16x2 runs the adjoint of two adjacent groups of 16 neurons of an FS+TS layer of order M = 1
// over all T steps, stepped together so that the CPU overlaps their chains of dependent instructions:
// first the recomputed state before every step into rows (each step's row the first group's five vectors,
// then the second's), then back in time the cotangent of the current and the coefficient cotangents.
// Written in assembly because the Go compiler keeps the loop-carried vectors of this loop in memory (a
// store and a load per vector and step), which made the Go kernel about twice as slow.
//
//go:noescape
func adjointM1x16x2(a *adjointArgs16)

// callAdjointM1x16x2 calls adjointM1x16x2. A Go function zeroes X15 (XORPS, legacy SSE) after every call
// of an assembly function; here it does so after the assembly's VZEROUPPER, with the upper halves of the
// vector registers clean, where it costs nothing, and outside the kernels that TestNoLegacySSE checks.
//
//go:noinline
func callAdjointM1x16x2(a *adjointArgs16) { adjointM1x16x2(a) }

// orderOneBlock returns w's block of vectors for the order-1 assembly kernels with a call's constants set:
// μ̄, ρ̄, Vth, 1, the surrogate's width and scale, the firing comparand (u > fireAt fires where x's spike
// rule does: u > 0 when strict, else u ≥ 0) and, with the per-step mask, its key, threshold, fmix32's
// multipliers, scale and the counters' step from one time step to the next (n).
func (x *expanded) orderOneBlock(w *vecWork, n int, drop *mask) *adjointBlock16 {
	if w.adjoint16 == nil {
		w.adjoint16 = &alignedSlice[adjointBlock16](1)[0]
	}
	k := w.adjoint16
	k.mu, k.rho, k.vth = archsimd.BroadcastFloat32x16(x.mu), archsimd.BroadcastFloat32x16(x.rho), archsimd.BroadcastFloat32x16(x.vth)
	k.one, k.width, k.scale = archsimd.BroadcastFloat32x16(1), archsimd.BroadcastFloat32x16(x.width), archsimd.BroadcastFloat32x16(x.scale)
	k.fireAt = archsimd.BroadcastFloat32x16(-math.SmallestNonzeroFloat32) // u > −2⁻¹⁴⁹ ⇔ u ≥ 0
	if x.strict {
		k.fireAt = k.one.Sub(k.one) // 0, without a legacy-SSE zeroing
	}
	if drop.step {
		k.key, k.threshold = archsimd.BroadcastUint32x16(drop.key), archsimd.BroadcastUint32x16(drop.threshold)
		k.mul1, k.mul2 = archsimd.BroadcastUint32x16(dropmask.FmixMul1), archsimd.BroadcastUint32x16(dropmask.FmixMul2)
		k.dropScale, k.stride = archsimd.BroadcastFloat32x16(drop.scale), archsimd.BroadcastUint32x16(uint32(n))
	}
	return k
}

// loadPair16 sets the vectors of k's two groups, the neurons from i on of batch element b in a layer of n:
// the time-shared dropout mask (1 without one), the coefficients and, with the per-step mask, the counters
// of the step whose neuron 0 has the flat index row.
func (x *expanded) loadPair16(k *adjointBlock16, drop *mask, b, n, i, row int) {
	for j := range k.g {
		g, at := &k.g[j], i+j*lanes16
		g.drop = k.one
		if drop.shared != nil {
			g.drop = load16(drop.shared, b*n+at)
		}
		g.eta, g.gamma = load16(x.eta, at), load16(x.gamma, at)
		g.beta, g.lambda, g.oneMinusLam = load16(x.beta[0], at), load16(x.lambda[0], at), load16(x.oneMinusLam[0], at)
		if drop.step {
			g.ctr = archsimd.BroadcastUint32x16(uint32(row + at)).Add(archsimd.LoadUint32x16(laneOffsets[:lanes16]))
		}
	}
}

// flag is 1 for true, 0 for false.
func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// adjointRowBytes is the size of one group's row of one step in adjointM1x16x2's rows.
const adjointRowBytes = 5 * 4 * lanes16

// backwardM1x16 is backward16 for FS+TS layers of order M = 1 with the reset not detached (every released
// recipe of that order), two groups of neurons over all T steps (adjointM1x16x2), then the next two; it
// returns the first neuron it did not run (backward16 runs a last single group: the paper's widths are
// multiples of 32). The same operations in the same order as backward16, so the same bits (TestISAsAgree).
// On the sMNIST shape (B = 256, T = 784, N = 256) it took 43 ms where backward16 took 85–115 ms on 2 cores
// of an AMD EPYC (BenchmarkKernelSMNIST; one group at a time in assembly, 49 ms), about the time its memory
// traffic takes: the current and the spike cotangent read, the cotangent written. hist holds at least 2T
// rows of adjointRowBytes.
func (x *expanded) backwardM1x16(s Shape, b, from int, in *backwardIn, hist, acc []float32, w *vecWork) int {
	n, T := s.Neurons, s.Steps
	if x.m != 1 || !x.adapt || x.detach || from+2*lanes16 > n || len(hist)*4 < 2*T*adjointRowBytes {
		return from
	}
	k := x.orderOneBlock(w, n, in.drop)
	if w.adjointArgs16 == nil {
		w.adjointArgs16 = new(adjointArgs16)
	}
	args := w.adjointArgs16
	base := b * T * n
	last := base + (T-1)*n
	// Every address the assembly touches lies within the arrays (the last group's last step).
	_, _, _ = in.current[last+n-1], in.cotCurrent[last+n-1], in.cotSpikes[in.cotSpikesAt(b, T-1, n)+n-1]
	// Field by field, and no two zero constants side by side: the compiler writes a composite literal, or
	// adjacent zero fields, with legacy-SSE stores of X15.
	args.rows, args.block, args.steps, args.rowBytes = unsafe.Pointer(unsafe.SliceData(hist)), k, T, uintptr(n)*4
	args.cotStep, args.stepMask = args.rowBytes, flag(in.drop.step)
	if in.cotRows == 1 {
		args.cotStep = 0 // the same row at every step
	}
	i := from
	for ; i+2*lanes16 <= n; i += 2 * lanes16 {
		x.loadPair16(k, in.drop, b, n, i, in.drop.origin+last)
		args.current = unsafe.Pointer(&in.current[base+i])
		args.cotSpikes = unsafe.Pointer(&in.cotSpikes[in.cotSpikesAt(b, 0, n)+i])
		args.cotCurrent = unsafe.Pointer(&in.cotCurrent[last+i])
		callAdjointM1x16x2(args)
		for j := range k.g {
			g, at := &k.g[j], i+j*lanes16
			g.etaSum.Store(acc[at:])
			g.gammaSum.Store(acc[n+at:])
			g.betaSum.Store(acc[2*n+at:])
			g.lambdaSum.Store(acc[3*n+at:])
		}
	}
	return i
}
