//go:build goexperiment.simd && amd64

package fused

import (
	"unsafe"

	"github.com/fits-snn/fits/fits/events"
)

// forwardArgs16 are the arguments of forwardM1x16x2, in the order its assembly reads them (every field
// 8 bytes).
type forwardArgs16 struct {
	current unsafe.Pointer // the pair's current at step 0: [T] rows, rowBytes apart
	out     unsafe.Pointer // the pair's output at step 0
	sel     unsafe.Pointer // the 32 bits of the pair in the selection's word of step 0, selStep apart
	block   *adjointBlock16
	steps   int
	rowBytes,
	selStep uintptr
	stepMask int // 1: the per-step dropout mask
}

// forwardM1x16x2 runs two adjacent groups of 16 neurons of an FS+TS layer of order M = 1 over all T
// steps, stepped together, as forward16 runs them: the spikes times the dropout mask into out, the bits of
// ForwardSelect's selection, the spike counts into the block. In assembly for the reason adjointM1x16x2 is.
//
//go:noescape
func forwardM1x16x2(a *forwardArgs16)

// callForwardM1x16x2 calls forwardM1x16x2 (the XORPS after the call: see callAdjointM1x16x2).
//
//go:noinline
func callForwardM1x16x2(a *forwardArgs16) { forwardM1x16x2(a) }

// forwardM1x16 is forward16 for FS+TS layers of order M = 1, pairs of groups over all T steps through
// forwardM1x16x2; it returns the first neuron it did not run and the number of spikes (forward16 runs a
// last single group).
func (x *expanded) forwardM1x16(s Shape, b, from int, current []float32, drop *mask, out []float32, sel []uint64, w *vecWork) (int, int) {
	n, T := s.Neurons, s.Steps
	if x.m != 1 || !x.adapt || from+2*lanes16 > n || from%(2*lanes16) != 0 {
		return from, 0
	}
	k := x.orderOneBlock(w, n, drop)
	if w.forwardArgs16 == nil {
		w.forwardArgs16 = new(forwardArgs16)
	}
	args := w.forwardArgs16
	base := b * T * n
	_, _ = current[base+(T-1)*n+n-1], out[base+(T-1)*n+n-1] // every address the assembly touches
	stride := events.BitStride(n)
	var scratch [1]uint64 // the selection word of a call without a selection
	args.block, args.steps, args.rowBytes, args.stepMask = k, T, uintptr(n)*4, flag(drop.step)
	args.selStep = uintptr(stride) * 8
	if sel == nil {
		args.selStep = 0
	}
	total := 0
	i := from
	for ; i+2*lanes16 <= n; i += 2 * lanes16 {
		x.loadPair16(k, drop, b, n, i, drop.origin+base)
		args.current, args.out = unsafe.Pointer(&current[base+i]), unsafe.Pointer(&out[base+i])
		args.sel = unsafe.Pointer(&scratch[0])
		if sel != nil {
			word := &sel[b*T*stride+i/64]
			args.sel = unsafe.Add(unsafe.Pointer(word), (i%64)/8) // the pair's 32 bits
			_ = sel[(b*T+T-1)*stride+i/64]
		}
		callForwardM1x16x2(args)
		for j := range k.count {
			k.count[j].ConvertToInt32().Store(w.w16.counts[:])
			for l := range w.w16.counts { // by index: ranging over the array's values would copy it
				total += int(w.w16.counts[l])
			}
		}
	}
	return i, total
}
