// Package dropmask draws dropout masks from a counter-based generator: the keep/drop decision of element i
// of a mask is a pure function of (seed, step, layer, i), so every engine sees the same masks for the same
// run and optimizer step, a resumed run draws what an uninterrupted one would, and a kernel can regenerate
// a mask in its backward pass instead of storing it.
//
// This is the released FiTS code's per-step dropout (nn.Dropout on the spikes [batch, time, neurons] after
// every hidden layer: an independent mask per example, time step and neuron, scaled by 1/(1 − p)), with its
// random numbers drawn from this generator instead of PyTorch's.
//
// # The generator (all arithmetic on uint32, wrapping)
//
//	fmix32(h):  h ^= h >> 16;  h *= 0x85EBCA6B;  h ^= h >> 13;  h *= 0xC2B2AE35;  h ^= h >> 16
//	Key(seed, step, layer) = k3, with
//	    k1 = fmix32(uint32(seed) ^ 0x243F6A88)
//	    k2 = fmix32(k1 ^ uint32(step))
//	    k3 = fmix32(k2 ^ ((uint32(layer) + 1) * 0x9E3779B9))
//	Bits(key, i) = fmix32(fmix32(i + key) ^ key)
//	keep element i  ⇔  Bits(key, i) ≥ Threshold(p),  Threshold(p) = min(⌊p·2³²⌋, 2³² − 1)
//
// uint32(x) keeps the low 32 bits of the two's complement of x. Element i of a mask of shape [batch, T, N]
// (row-major) is i = (b·T + t)·N + n. A kept element is scaled by Scale(p) = float32(1/(1 − p)) (computed in
// float64, then rounded); a dropped one is 0. fmix32 is MurmurHash3's finalizer, a bijection of uint32, so
// distinct counters never collide before the last step.
package dropmask

import (
	"fmt"
	"math"
)

// FmixMul1 and FmixMul2 are the two multipliers of MurmurHash3's 32-bit finalizer (fmix32), for the
// vector kernels that hash a mask's counters themselves.
const (
	FmixMul1 = 0x85EBCA6B
	FmixMul2 = 0xC2B2AE35
)

// fmix32 is MurmurHash3's 32-bit finalizer.
func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= FmixMul1
	h ^= h >> 13
	h *= FmixMul2
	h ^= h >> 16
	return h
}

// Key returns the key of the mask of hidden layer layer (0-based) at optimizer step step (0-based, counted
// over the whole run) of the run with this seed.
func Key(seed, step int64, layer int) uint32 {
	k := fmix32(uint32(seed) ^ 0x243F6A88)
	k = fmix32(k ^ uint32(step))
	return fmix32(k ^ ((uint32(layer) + 1) * 0x9E3779B9))
}

// Bits returns the 32 random bits of element i of the mask of key.
func Bits(key, i uint32) uint32 { return fmix32(fmix32(i+key) ^ key) }

// Threshold returns the uint32 threshold of the drop probability p ∈ [0, 1): an element is kept when its
// Bits are at least the threshold, which happens with probability 1 − p up to 2⁻³².
func Threshold(p float64) uint32 {
	t := math.Floor(p * (1 << 32))
	if t >= math.MaxUint32 {
		return math.MaxUint32
	}
	if !(t > 0) {
		return 0
	}
	return uint32(t)
}

// Scale returns the factor of a kept element, float32(1/(1 − p)).
func Scale(p float64) float32 { return float32(1 / (1 - p)) }

// Check reports whether p is a valid drop probability.
func Check(p float64) error {
	if !(p >= 0 && p < 1) {
		return fmt.Errorf("dropout probability must lie in [0, 1), got %g", p)
	}
	return nil
}

// Fill writes the mask of key and probability p into out, elements first..first+len(out)−1 of the
// row-major mask: out[j] = Scale(p) when element first+j is kept, 0 otherwise.
func Fill(out []float32, key uint32, p float64, first int) {
	thr, scale := Threshold(p), Scale(p)
	for j := range out {
		if Bits(key, uint32(first+j)) >= thr {
			out[j] = scale
		} else {
			out[j] = 0
		}
	}
}

// Mask returns the mask of shape [batch, steps, neurons] (row-major) of hidden layer layer at optimizer step
// step of the run with this seed, for drop probability p.
func Mask(seed, step int64, layer int, p float64, batch, steps, neurons int) ([]float32, error) {
	if err := Check(p); err != nil {
		return nil, err
	}
	if batch < 0 || steps < 0 || neurons < 0 || float64(batch)*float64(steps)*float64(neurons) > math.MaxUint32 {
		return nil, fmt.Errorf("dropmask: mask [%d, %d, %d] is negative or has more than 2^32 elements", batch, steps, neurons)
	}
	out := make([]float32, batch*steps*neurons)
	Fill(out, Key(seed, step, layer), p, 0)
	return out, nil
}
