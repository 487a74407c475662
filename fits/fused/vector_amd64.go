//go:build goexperiment.simd && amd64

package fused

import "simd/archsimd"

// The vector code runs 8 neurons per AVX2 instruction, each group of 8 over all T steps with its state in
// registers: the same operations as stepScalar and backwardScalar, in the same order, each an IEEE float32
// operation (no fused multiply-add), so the two give identical values. The per-step dropout mask is the
// same uint32 arithmetic as package dropmask's on 8 counters at once.
//
// Constants are broadcast once per call (vecConsts), outside the time loops: a broadcast can compile to a
// legacy-SSE instruction (xorps for 0), and on Intel CPUs every legacy-SSE instruction between AVX ones
// costs a transition of the vector registers' state.

var hasAVX2 = archsimd.X86.AVX2()

// vectorLanes is the number of neurons one vector instruction handles.
const vectorLanes = 8

// Vector reports whether this build runs the kernel's inner loops with SIMD instructions (built with
// GOEXPERIMENT=simd on amd64 and run on a CPU with AVX2).
func Vector() bool { return hasAVX2 }

type (
	vec  = archsimd.Float32x8
	uvec = archsimd.Uint32x8
)

func load(s []float32, i int) vec { return archsimd.LoadFloat32x8Slice(s[i : i+vectorLanes]) }
func splat(v float32) vec         { return archsimd.BroadcastFloat32x8(v) }

// vecConsts are a call's scalar constants broadcast to the 8 lanes.
type vecConsts struct {
	mu, rho, vth, zero, one, width, scale vec
	// The per-step dropout mask: its key, threshold and scale, fmix32's two multipliers, its shift counts
	// 16 and 13 in every lane (shifts by a vector of counts: a shift by a constant count compiles to a
	// legacy-SSE movq of the count at every use), the lane offsets 0…7 and the counter's increment per time
	// step, N.
	key, threshold, mul1, mul2, shift16, shift13, lanes, stride uvec
	dropScale                                                   vec
}

// vecConsts returns the constants of a call on layers of n neurons with dropout mask drop.
func (x *expanded) vecConsts(n int, drop *mask) *vecConsts {
	k := &vecConsts{mu: splat(x.mu), rho: splat(x.rho), vth: splat(x.vth), zero: splat(0), one: splat(1),
		width: splat(x.width), scale: splat(x.scale)}
	if drop.step {
		lanes := [vectorLanes]uint32{0, 1, 2, 3, 4, 5, 6, 7}
		k.key, k.threshold = archsimd.BroadcastUint32x8(drop.key), archsimd.BroadcastUint32x8(drop.threshold)
		k.mul1, k.mul2 = archsimd.BroadcastUint32x8(0x85EBCA6B), archsimd.BroadcastUint32x8(0xC2B2AE35)
		k.shift16, k.shift13 = archsimd.BroadcastUint32x8(16), archsimd.BroadcastUint32x8(13)
		k.lanes, k.stride = archsimd.LoadUint32x8(&lanes), archsimd.BroadcastUint32x8(uint32(n))
		k.dropScale = splat(drop.scale)
	}
	return k
}

// counters returns the per-step mask's counters of the 8 elements from flat index idx on.
func (k *vecConsts) counters(idx int) uvec {
	return archsimd.BroadcastUint32x8(uint32(idx)).Add(k.lanes)
}

// fmixVec is dropmask's fmix32 (MurmurHash3's finalizer) on 8 lanes.
func fmixVec(h uvec, k *vecConsts) uvec {
	h = h.Xor(h.ShiftRight(k.shift16)).Mul(k.mul1)
	h = h.Xor(h.ShiftRight(k.shift13)).Mul(k.mul2)
	return h.Xor(h.ShiftRight(k.shift16))
}

// stepMask returns the per-step dropout mask of the 8 elements with counters ctr: dropmask.Scale(p) where
// dropmask.Bits(key, ctr) ≥ dropmask.Threshold(p), 0 elsewhere.
func stepMask(ctr uvec, k *vecConsts) vec {
	h := fmixVec(fmixVec(ctr.Add(k.key), k).Xor(k.key), k)
	return k.dropScale.Masked(h.Max(k.threshold).Equal(h)) // h ≥ threshold (unsigned) ⇔ max(h, threshold) = h
}

// vecCoefs are the coefficients of a group of 8 neurons.
type vecCoefs struct {
	eta, gamma                vec
	beta, lambda, oneMinusLam [MaxOrder]vec
}

func (x *expanded) vecCoefs(i int) (c vecCoefs) {
	if x.adapt {
		c.eta, c.gamma = load(x.eta, i), load(x.gamma, i)
	}
	for j := range x.m {
		c.beta[j], c.lambda[j], c.oneMinusLam[j] = load(x.beta[j], i), load(x.lambda[j], i), load(x.oneMinusLam[j], i)
	}
	return
}

// vecState is the state of a group of 8 neurons.
type vecState struct {
	v, a  vec
	stage [MaxOrder + 1]vec
}

// stepVec is stepScalar for a group of 8 neurons.
func (x *expanded) stepVec(c *vecCoefs, k *vecConsts, st *vecState, in vec) vec {
	mu, rho, vth := k.mu, k.rho, k.vth
	v0 := st.v.Mul(mu).Add(in)
	if x.adapt {
		v0 = v0.Sub(c.eta.Mul(st.a))
		st.a = st.a.Mul(rho).Add(c.gamma.Mul(v0))
	}
	mixed := v0
	if m := x.m; m > 0 {
		prevOld, prevNew := st.stage[0], v0
		st.stage[0] = v0
		for j := 1; j <= m; j++ {
			old := st.stage[j]
			nj := c.beta[j-1].Mul(old.Sub(prevNew)).Add(prevOld)
			st.stage[j] = nj
			mixed = c.oneMinusLam[j-1].Mul(mixed).Add(c.lambda[j-1].Mul(nj))
			prevOld, prevNew = old, nj
		}
	}
	u := mixed.Sub(vth)
	fire := u.GreaterEqual(k.zero)
	if x.strict {
		fire = u.Greater(k.zero)
	}
	spike := k.one.Masked(fire).Add(u.Sub(u))
	st.v = mixed.Sub(spike.Mul(vth))
	return spike
}

// forwardVector runs the groups of 8 neurons of batch element b over the T steps (their output times the
// dropout mask) and returns how many neurons it ran and their number of spikes.
func (x *expanded) forwardVector(s Shape, b int, current []float32, drop *mask, out []float32) (int, int) {
	n := s.Neurons
	nv := n - n%vectorLanes
	if !hasAVX2 || nv == 0 {
		return 0, 0
	}
	k := x.vecConsts(n, drop)
	shared, step := drop.shared != nil, drop.step
	total := 0
	var lanes [vectorLanes]float32
	for i := 0; i < nv; i += vectorLanes {
		c := x.vecCoefs(i)
		var st vecState
		var count vec // per lane at most T spikes: exact in float32
		idx := b*s.Steps*n + i
		var d vec
		var ctr uvec
		if shared {
			d = load(drop.shared, b*n+i)
		}
		if step {
			ctr = k.counters(idx)
		}
		for range s.Steps {
			spike := x.stepVec(&c, k, &st, load(current, idx))
			count = count.Add(spike)
			if shared {
				spike = spike.Mul(d)
			} else if step {
				spike = spike.Mul(stepMask(ctr, k))
				ctr = ctr.Add(k.stride)
			}
			spike.StoreSlice(out[idx:])
			idx += n
		}
		count.Store(&lanes)
		for _, v := range lanes {
			total += int(v)
		}
	}
	return nv, total
}

// backwardVector is backwardScalar for the groups of 8 neurons of batch element b; it returns how many
// neurons it ran. hist holds T × components × 8 values.
func (x *expanded) backwardVector(s Shape, b int, in backwardIn, hist, acc []float32) int {
	n, m, comps := s.Neurons, x.m, x.comps
	nv := n - n%vectorLanes
	if !hasAVX2 || nv == 0 {
		return 0
	}
	cs := x.vecConsts(n, in.drop)
	shared, step := in.drop.shared != nil, in.drop.step
	mu, rho, vth := cs.mu, cs.rho, cs.vth
	one, zero := cs.one, cs.zero
	width, scale := cs.width, cs.scale
	base := b * s.Steps * n
	for i := 0; i < nv; i += vectorLanes {
		c := x.vecCoefs(i)
		// The state before every step.
		var st vecState
		for t := range s.Steps {
			h := hist[t*comps*vectorLanes:]
			st.v.StoreSlice(h)
			k := vectorLanes
			if x.adapt {
				st.a.StoreSlice(h[k:])
				k += vectorLanes
			}
			for j := 0; m > 0 && j <= m; j++ {
				st.stage[j].StoreSlice(h[k:])
				k += vectorLanes
			}
			if t < s.Steps-1 {
				x.stepVec(&c, cs, &st, load(in.current, base+t*n+i))
			}
		}
		drop := one
		var ctr uvec
		if shared {
			drop = load(in.drop.shared, b*n+i)
		}
		if step {
			ctr = cs.counters(base + (s.Steps-1)*n + i) // the last step's; the loop runs back in time
		}
		var vBar, aBar, etaSum, gammaSum vec
		var stageBar, nodes, mixes, nBar [MaxOrder + 1]vec
		var betaSum, lambdaSum [MaxOrder]vec
		var pre vecState
		for t := s.Steps - 1; t >= 0; t-- {
			h := hist[t*comps*vectorLanes:]
			pre.v = load(h, 0)
			k := vectorLanes
			if x.adapt {
				pre.a = load(h, k)
				k += vectorLanes
			}
			for j := 0; m > 0 && j <= m; j++ {
				pre.stage[j] = load(h, k)
				k += vectorLanes
			}
			idx := base + t*n + i
			v0 := pre.v.Mul(mu).Add(load(in.current, idx))
			if x.adapt {
				v0 = v0.Sub(c.eta.Mul(pre.a))
			}
			nodes[0], mixes[0] = v0, v0
			for j := 1; j <= m; j++ {
				nodes[j] = c.beta[j-1].Mul(pre.stage[j].Sub(nodes[j-1])).Add(pre.stage[j-1])
				mixes[j] = c.oneMinusLam[j-1].Mul(mixes[j-1]).Add(c.lambda[j-1].Mul(nodes[j]))
			}
			u := mixes[m].Sub(vth)
			abs := u.Max(zero.Sub(u))
			surr := one.Sub(abs.Div(width)).Max(zero).Mul(scale)

			sb := load(in.cotSpikes, idx)
			if shared {
				sb = sb.Mul(drop)
			} else if step {
				sb = sb.Mul(stepMask(ctr, cs))
				ctr = ctr.Sub(cs.stride)
			}
			if !x.detach {
				sb = sb.Sub(vBar.Mul(vth))
			}
			uBar := vBar.Add(surr.Mul(sb))
			v0Bar := uBar
			if m > 0 {
				mBar := uBar
				for j := m; j >= 1; j-- {
					nb := stageBar[j].Add(c.lambda[j-1].Mul(mBar))
					if j < m {
						nb = nb.Sub(c.beta[j].Mul(nBar[j+1]))
					}
					nBar[j] = nb
					betaSum[j-1] = betaSum[j-1].Add(pre.stage[j].Sub(nodes[j-1]).Mul(nb))
					lambdaSum[j-1] = lambdaSum[j-1].Add(nodes[j].Sub(mixes[j-1]).Mul(mBar))
					mBar = c.oneMinusLam[j-1].Mul(mBar)
				}
				v0Bar = mBar.Add(stageBar[0]).Sub(c.beta[0].Mul(nBar[1]))
				stageBar[0] = nBar[1]
				for j := 1; j <= m; j++ {
					sbj := c.beta[j-1].Mul(nBar[j])
					if j < m {
						sbj = sbj.Add(nBar[j+1])
					}
					stageBar[j] = sbj
				}
			}
			if x.adapt {
				v0Bar = v0Bar.Add(c.gamma.Mul(aBar))
				etaSum = etaSum.Add(pre.a.Mul(v0Bar))
				gammaSum = gammaSum.Add(v0.Mul(aBar))
				aBar = aBar.Mul(rho).Sub(c.eta.Mul(v0Bar))
			}
			vBar = v0Bar.Mul(mu)
			v0Bar.StoreSlice(in.cotCurrent[idx:])
		}
		etaSum.StoreSlice(acc[i:])
		gammaSum.StoreSlice(acc[n+i:])
		for j := range m {
			betaSum[j].StoreSlice(acc[(2+j)*n+i:])
			lambdaSum[j].StoreSlice(acc[(2+m+j)*n+i:])
		}
	}
	return nv
}
