//go:build goexperiment.simd && amd64

package fused

import (
	"simd/archsimd"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/events"
)

// The AVX2 kernels: groups of lanes8 = 8 neurons, all groups step by step. kernel16_amd64.go is this file
// for AVX-512, generated from it (go test ./fits/fused -run TestKernel16Generated -update); edit this one.
// The rules of vector_amd64.go hold: no struct zeroing or copying of vector data, no scalar float
// operation, nothing but VEX or EVEX code (TestNoLegacySSE).

// lanes8 is the number of neurons one instruction of these kernels handles.
const lanes8 = 8

type (
	vec8  = archsimd.Float32x8
	uvec8 = archsimd.Uint32x8
)

func load8(s []float32, i int) vec8 { return archsimd.LoadFloat32x8(s[i : i+lanes8]) }

// consts8 are a call's scalar constants broadcast to every lane, once per call (outside the time loops).
type consts8 struct {
	mu, rho, vth, zero, one, width, scale vec8
	invWidth                              vec8 // 1/width, used where it is exact (expanded.widthPow2)
	// The per-step dropout mask: its key, threshold and scale, fmix32's two multipliers, its shift counts
	// 16 and 13 in every lane (shifts by a vector of counts: a shift by a constant count compiles to a
	// legacy-SSE movq of the count at every use), the lane offsets 0, 1, … and the counter's increment per
	// time step, N.
	key, threshold, mul1, mul2, shift16, shift13, lanes, stride uvec8
	dropScale                                                   vec8
}

// setConsts8 sets k to the constants of a call on layers of n neurons with dropout mask drop.
func (x *expanded) setConsts8(k *consts8, n int, drop *mask) {
	k.mu, k.rho, k.vth = archsimd.BroadcastFloat32x8(x.mu), archsimd.BroadcastFloat32x8(x.rho), archsimd.BroadcastFloat32x8(x.vth)
	k.zero, k.one = vec8{}, archsimd.BroadcastFloat32x8(1)
	k.width, k.scale = archsimd.BroadcastFloat32x8(x.width), archsimd.BroadcastFloat32x8(x.scale)
	k.invWidth = archsimd.BroadcastFloat32x8(x.invWidth)
	if drop.step {
		k.key, k.threshold = archsimd.BroadcastUint32x8(drop.key), archsimd.BroadcastUint32x8(drop.threshold)
		k.mul1, k.mul2 = archsimd.BroadcastUint32x8(dropmask.FmixMul1), archsimd.BroadcastUint32x8(dropmask.FmixMul2)
		k.shift16, k.shift13 = archsimd.BroadcastUint32x8(16), archsimd.BroadcastUint32x8(13)
		k.lanes, k.stride = archsimd.LoadUint32x8(laneOffsets[:lanes8]), archsimd.BroadcastUint32x8(uint32(n))
		k.dropScale = archsimd.BroadcastFloat32x8(drop.scale)
	}
}

// counters8 returns the per-step mask's counters of the lanes from flat index idx on.
func (k *consts8) counters8(idx int) uvec8 {
	return archsimd.BroadcastUint32x8(uint32(idx)).Add(k.lanes)
}

// fmix8 is dropmask's fmix32 (MurmurHash3's finalizer) on every lane.
func fmix8(h uvec8, k *consts8) uvec8 {
	h = h.Xor(h.ShiftRight(k.shift16)).Mul(k.mul1)
	h = h.Xor(h.ShiftRight(k.shift13)).Mul(k.mul2)
	return h.Xor(h.ShiftRight(k.shift16))
}

// stepMask8 returns the per-step dropout mask of the elements with counters ctr: dropmask.Scale(p) where
// dropmask.Bits(key, ctr) ≥ dropmask.Threshold(p), 0 elsewhere.
func stepMask8(ctr uvec8, k *consts8) vec8 {
	h := fmix8(fmix8(ctr.Add(k.key), k).Xor(k.key), k)
	return k.dropScale.Masked(h.Max(k.threshold).Equal(h)) // h ≥ threshold (unsigned) ⇔ max(h, threshold) = h
}

// coefs8 are the coefficients of a group of neurons.
type coefs8 struct {
	eta, gamma                vec8
	beta, lambda, oneMinusLam [MaxOrder]vec8
}

// loadCoefs8 sets c to the coefficients of the group from neuron i on.
func (x *expanded) loadCoefs8(c *coefs8, i int) {
	if x.adapt {
		c.eta, c.gamma = load8(x.eta, i), load8(x.gamma, i)
	}
	for j := range x.m {
		c.beta[j], c.lambda[j], c.oneMinusLam[j] = load8(x.beta[j], i), load8(x.lambda[j], i), load8(x.oneMinusLam[j], i)
	}
}

// state8 is the state of a group of neurons.
type state8 struct {
	v, a  vec8
	stage [MaxOrder + 1]vec8
}

// reset8 sets the state of order m to zero, lane by lane.
func (st *state8) reset8(m int) {
	st.v, st.a = vec8{}, vec8{}
	for j := 0; m > 0 && j <= m; j++ {
		st.stage[j] = vec8{}
	}
}

// adjoint8 is the adjoint's state of a group of neurons (the cotangents after the step, the coefficient
// cotangents summed so far) and the group's dropout mask and counters.
type adjoint8 struct {
	vBar, aBar, etaSum, gammaSum vec8
	stageBar                     [MaxOrder + 1]vec8
	betaSum, lambdaSum           [MaxOrder]vec8
	drop                         vec8
	ctr                          uvec8
}

// temps8 are one step's values of the adjoint, recomputed for one group after the other.
type temps8 struct {
	pre                state8
	nodes, mixes, nBar [MaxOrder + 1]vec8
}

// work8 is the memory of these kernels: a call's constants, the coefficients, state, spike counts and
// adjoints of a block of groups, and one step's temporaries. It lives in the caller's buffer (vecWork),
// neither zeroed nor copied by the compiler.
type work8 struct {
	k      *consts8
	c      []coefs8
	st     []state8
	adj    []adjoint8
	count  []vec8
	tmp    *temps8
	counts [lanes8]int32
}

// grow8 makes w hold blocks of ng groups, every vector at an address that is a multiple of 64 bytes
// (alignedSlice).
func (w *work8) grow8(ng int) {
	if w.k == nil {
		w.k, w.tmp = &alignedSlice[consts8](1)[0], &alignedSlice[temps8](1)[0]
	}
	if len(w.c) < ng {
		w.c, w.st, w.adj, w.count = alignedSlice[coefs8](ng), alignedSlice[state8](ng), alignedSlice[adjoint8](ng), alignedSlice[vec8](ng)
	}
}

// step8 is stepScalar for a group of neurons; it returns the spikes and u = ṼM − Vth.
func (x *expanded) step8(c *coefs8, k *consts8, st *state8, in vec8) (vec8, vec8) {
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
	return spike, u
}

// forward8 runs the groups of neurons of batch element b from neuron `from` on over the T steps (their
// output times the dropout mask); it returns the first neuron it did not run and the number of spikes. It
// runs all groups together, one after the other within each step: their recurrences are independent chains
// of dependent instructions, which the CPU overlaps, and each step reads and writes a contiguous row. With
// sel not nil it sets the bits of the entries that ForwardSelect describes (sel's rows of element b zeroed).
func (x *expanded) forward8(s Shape, b, from int, current []float32, drop *mask, out []float32, sel []uint64, w *work8) (int, int) {
	n := s.Neurons
	ng := (n - from) / lanes8
	if ng == 0 {
		return from, 0
	}
	w.grow8(ng)
	k := w.k
	x.setConsts8(k, n, drop)
	shared, step := drop.shared != nil, drop.step
	base := b*s.Steps*n + from
	for g := range ng {
		x.loadCoefs8(&w.c[g], from+g*lanes8)
		w.st[g].reset8(x.m)
		w.count[g] = vec8{} // per lane at most T spikes: exact in float32
		a := &w.adj[g]
		if shared {
			a.drop = load8(drop.shared, b*n+from+g*lanes8)
		}
		if step {
			a.ctr = k.counters8(drop.origin + base + g*lanes8)
		}
	}
	idx := base
	stride := events.BitStride(n)
	word := b * s.Steps * stride // sel's first word of the step's row
	for range s.Steps {
		for g := range ng {
			a, j := &w.adj[g], idx+g*lanes8
			spike, u := x.step8(&w.c[g], k, &w.st[g], load8(current, j))
			w.count[g] = w.count[g].Add(spike)
			d := k.one
			if shared {
				d = a.drop
				spike = spike.Mul(d)
			} else if step {
				d = stepMask8(a.ctr, k)
				spike = spike.Mul(d)
				a.ctr = a.ctr.Add(k.stride)
			}
			spike.Store(out[j:])
			if sel != nil {
				// |u| < width (σ′ ≠ 0 needs it) where D ≠ 0.
				on := u.Max(k.zero.Sub(u)).Less(k.width).And(d.NotEqual(k.zero))
				i := from + g*lanes8
				sel[word+i/64] |= uint64(on.ToBits()) << (i % 64)
			}
		}
		idx += n
		word += stride
	}
	total := 0
	for g := range ng {
		w.count[g].ConvertToInt32().Store(w.counts[:])
		for j := range w.counts { // by index: ranging over the array's values would copy it
			total += int(w.counts[j])
		}
	}
	return from + ng*lanes8, total
}

// backward8 is backwardScalar for the groups of neurons of batch element b from neuron `from` on, in blocks
// of groups whose recomputed state fits hist (backwardBlock), the groups of a block together as forward8
// runs them; it returns the first neuron it did not run.
func (x *expanded) backward8(s Shape, b, from int, in *backwardIn, hist, acc []float32, w *work8) int {
	n, m, comps := s.Neurons, x.m, x.comps
	if from+lanes8 > n {
		return from
	}
	block := backwardBlock(n, s.Steps, comps+1, lanes8)
	w.grow8(block)
	cs, tmp := w.k, w.tmp
	x.setConsts8(cs, n, in.drop)
	shared, step := in.drop.shared != nil, in.drop.step
	mu, rho, vth := cs.mu, cs.rho, cs.vth
	one, zero := cs.one, cs.zero
	width, scale := cs.width, cs.scale
	base := b * s.Steps * n
	stride := (comps + 1) * lanes8 // one group's state and spike cotangent in hist
	i := from
	for i+lanes8 <= n {
		ng := min(block, (n-i)/lanes8)
		row := ng * stride // one step's state of the block in hist
		for g := range ng {
			x.loadCoefs8(&w.c[g], i+g*lanes8)
			w.st[g].reset8(m)
		}
		// The state before every step, with V replaced by the step's V0 = μ̄V − e·a + I (what the adjoint
		// needs of V and the current: it reads neither again).
		for t := range s.Steps {
			for g := range ng {
				st := &w.st[g]
				h := hist[t*row+g*stride:]
				cur := load8(in.current, base+t*n+i+g*lanes8)
				v0 := st.v.Mul(mu).Add(cur)
				if x.adapt {
					v0 = v0.Sub(w.c[g].eta.Mul(st.a))
				}
				v0.Store(h)
				k := lanes8
				if x.adapt {
					st.a.Store(h[k:])
					k += lanes8
				}
				for j := 0; m > 0 && j <= m; j++ {
					st.stage[j].Store(h[k:])
					k += lanes8
				}
				// The cotangent of the spikes, read here in increasing time: read in the reverse loop
				// straight from the [batch, T, N] array, every load missed the cache.
				load8(in.cotSpikes, in.cotSpikesAt(b, t, n)+i+g*lanes8).Store(h[k:])
				if t < s.Steps-1 {
					x.step8(&w.c[g], cs, st, cur)
				}
			}
		}
		for g := range ng {
			a := &w.adj[g]
			a.vBar, a.aBar, a.etaSum, a.gammaSum = vec8{}, vec8{}, vec8{}, vec8{}
			for j := 0; m > 0 && j <= m; j++ {
				a.stageBar[j] = vec8{}
			}
			for j := range m {
				a.betaSum[j], a.lambdaSum[j] = vec8{}, vec8{}
			}
			a.drop = one
			if shared {
				a.drop = load8(in.drop.shared, b*n+i+g*lanes8)
			}
			if step {
				a.ctr = cs.counters8(in.drop.origin + base + (s.Steps-1)*n + i + g*lanes8) // the last step's; the loop runs back in time
			}
		}
		for t := s.Steps - 1; t >= 0; t-- {
			for g := range ng {
				c, a := &w.c[g], &w.adj[g]
				pre, nodes, mixes, nBar, stageBar := &tmp.pre, &tmp.nodes, &tmp.mixes, &tmp.nBar, &a.stageBar
				h := hist[t*row+g*stride:]
				v0 := load8(h, 0)
				k := lanes8
				var preA vec8
				if x.adapt {
					preA = load8(h, k)
					k += lanes8
				}
				idx := base + t*n + i + g*lanes8
				// The step's local values, recomputed as step8 computes them: with M = 1 in variables
				// (registers), for other orders in tmp's arrays.
				var s0, s1, n1, top vec8
				if m == 1 {
					s0, s1 = load8(h, k), load8(h, k+lanes8)
					n1 = c.beta[0].Mul(s1.Sub(v0)).Add(s0)
					top = c.oneMinusLam[0].Mul(v0).Add(c.lambda[0].Mul(n1))
				} else {
					for j := 0; m > 0 && j <= m; j++ {
						pre.stage[j] = load8(h, k)
						k += lanes8
					}
					nodes[0], mixes[0] = v0, v0
					for j := 1; j <= m; j++ {
						nodes[j] = c.beta[j-1].Mul(pre.stage[j].Sub(nodes[j-1])).Add(pre.stage[j-1])
						mixes[j] = c.oneMinusLam[j-1].Mul(mixes[j-1]).Add(c.lambda[j-1].Mul(nodes[j]))
					}
					top = mixes[m]
				}
				u := top.Sub(vth)
				abs := u.Max(zero.Sub(u))
				var surr vec8
				if x.widthPow2 {
					surr = one.Sub(abs.Mul(cs.invWidth)).Max(zero).Mul(scale) // the same value: 1/width is exact
				} else {
					surr = one.Sub(abs.Div(width)).Max(zero).Mul(scale)
				}

				sb := load8(h, stride-lanes8)
				if shared {
					sb = sb.Mul(a.drop)
				} else if step {
					sb = sb.Mul(stepMask8(a.ctr, cs))
					a.ctr = a.ctr.Sub(cs.stride)
				}
				vBar := a.vBar
				if !x.detach {
					sb = sb.Sub(vBar.Mul(vth))
				}
				uBar := vBar.Add(surr.Mul(sb))
				v0Bar := uBar
				if m == 1 {
					nb := stageBar[1].Add(c.lambda[0].Mul(uBar))
					a.betaSum[0] = a.betaSum[0].Add(s1.Sub(v0).Mul(nb))
					a.lambdaSum[0] = a.lambdaSum[0].Add(n1.Sub(v0).Mul(uBar))
					v0Bar = c.oneMinusLam[0].Mul(uBar).Add(stageBar[0]).Sub(c.beta[0].Mul(nb))
					stageBar[0] = nb
					stageBar[1] = c.beta[0].Mul(nb)
				} else if m > 0 {
					mBar := uBar
					for j := m; j >= 1; j-- {
						nb := stageBar[j].Add(c.lambda[j-1].Mul(mBar))
						if j < m {
							nb = nb.Sub(c.beta[j].Mul(nBar[j+1]))
						}
						nBar[j] = nb
						a.betaSum[j-1] = a.betaSum[j-1].Add(pre.stage[j].Sub(nodes[j-1]).Mul(nb))
						a.lambdaSum[j-1] = a.lambdaSum[j-1].Add(nodes[j].Sub(mixes[j-1]).Mul(mBar))
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
					aBar := a.aBar
					v0Bar = v0Bar.Add(c.gamma.Mul(aBar))
					a.etaSum = a.etaSum.Add(preA.Mul(v0Bar))
					a.gammaSum = a.gammaSum.Add(v0.Mul(aBar))
					a.aBar = aBar.Mul(rho).Sub(c.eta.Mul(v0Bar))
				}
				a.vBar = v0Bar.Mul(mu)
				v0Bar.Store(in.cotCurrent[idx:])
			}
		}
		for g := range ng {
			a, j := &w.adj[g], i+g*lanes8
			a.etaSum.Store(acc[j:])
			a.gammaSum.Store(acc[n+j:])
			for l := range m {
				a.betaSum[l].Store(acc[(2+l)*n+j:])
				a.lambdaSum[l].Store(acc[(2+m+l)*n+j:])
			}
		}
		i += ng * lanes8
	}
	return i
}
