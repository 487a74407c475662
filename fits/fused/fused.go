// Package fused runs Algorithm 1 (Appendix A.5) of one FiTS layer over a whole sequence, forward and
// backward, as one hand-written float32 kernel on the host: the CPU analogue of the paper's fused Triton
// kernel (Appendix, kernel runtime table). Each neuron's state stays in registers or cache across the T
// steps; nothing per step goes through memory but the input current, the spike and their cotangents.
//
// Forward computes the spikes of a layer from its input current. Backward computes the cotangent of the
// current and of the per-step coefficients (ηΔt, γΔt, βm, λm) from the cotangent of the spikes: for each
// batch element and block of neurons it recomputes the forward recurrence into a cache-sized buffer
// (rematerialization: the forward keeps nothing but its inputs), then runs the adjoint below in reverse.
// Work is split over the batch across GOMAXPROCS goroutines. Both compute the same values as package
// fits/scan and neuron.LayerFrom (the same operations in the same order, float32 throughout, the
// coefficient cotangents summed per neuron over time in float32 and over the batch in float64).
//
// # The recurrence
//
// One step (Eqs. 6, 9 and 10, with e = ηΔt, g = γΔt, μ̄ = 1 − μΔt, ρ̄ = 1 − ρΔt, Ṽ0 = n0 = V0):
//
//	V0 = μ̄V − e·a + I;  a′ = ρ̄a + g·V0                        (FS, Eq. 6)
//	nm = βm(Vm − n(m−1)) + V(m−1);  Ṽm = (1 − λm)Ṽ(m−1) + λm·nm  (TS, Eqs. 9 and 10), m = 1..M
//	S = Θ(ṼM − Vth);  V′ = ṼM − Vth·S;  the new stages are Vm′ = nm
//
// # The adjoint
//
// Given the cotangents V̄′, ā′, V̄m′ of the state after the step and S̄ of the step's spike, with σ′ the
// triangular surrogate scale·max(0, 1 − |ṼM − Vth|/width):
//
//	ū = V̄′ + σ′·(S̄ − Vth·V̄′)   (σ′·S̄ + V̄′ with DetachReset: the reset carries no gradient)
//	m̄M = ū;  m̄(m−1) = (1 − λm)·m̄m
//	n̄M = V̄M′ + λM·m̄M;  n̄m = V̄m′ + λm·m̄m − β(m+1)·n̄(m+1)
//	V̄0 = m̄0 + V̄0′ − β1·n̄1 + g·ā′   (V̄0 = ū + g·ā′ when M = 0)
//	V̄m(old) = βm·n̄m + n̄(m+1)  (V̄0(old) = n̄1, V̄M(old) = βM·n̄M)
//	ā = ρ̄·ā′ − e·V̄0;  V̄ = μ̄·V̄0;  Ī = V̄0
//
// and the coefficient cotangents ē = −Σ a·V̄0, ḡ = Σ V0·ā′, β̄m = Σ (Vm − n(m−1))·n̄m and
// λ̄m = Σ (nm − Ṽ(m−1))·m̄m, summed over batch and steps (and over neurons sharing a parameter).
//
// # Layout
//
// The current, the spikes and their cotangents are row-major [batch, T, N], N = d1·…·dn the neurons of a
// layer of output shape [d1, …, dn] flattened; a coefficient has P entries, P = N (one per neuron) or P = dn
// (shared per channel: neuron i uses entry i mod dn). The state starts at zero.
package fused

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// MaxOrder is the largest TS order M the kernel runs.
const MaxOrder = 8

// laneBlock is the number of neurons processed together: the backward's recomputed states of one block,
// T × components × laneBlock float32, stay in the core's L2 cache for the paper's T ≤ 784.
const laneBlock = 64

// Coefficients are the per-step constants of one layer (neuron.Coefficients evaluated on the host).
type Coefficients struct {
	// MuBar = 1 − μΔt and RhoBar = 1 − ρΔt (dimensionless, per step), Vth the threshold.
	MuBar, RhoBar, Vth float32
	// SurrogateWidth and SurrogateScale define σ′(u) = scale·max(0, 1 − |u|/width), u = ṼM − Vth.
	SurrogateWidth, SurrogateScale float32
	// DetachReset: the reset term S·Vth carries no gradient.
	DetachReset bool
	// EtaDt = ηΔt and GammaDt = γΔt, P entries each; both nil without adaptation (LIF).
	EtaDt, GammaDt []float32
	// Beta[m−1] = βm and Lambda[m−1] = λm of stage m = 1..M, P entries each.
	Beta, Lambda [][]float32
}

// Grads are the cotangents of Coefficients' arrays (same layout; nil where the coefficient is absent).
type Grads struct {
	EtaDt, GammaDt []float64
	Beta, Lambda   [][]float64
}

// Shape is the extent of a layer's sequence: Batch examples, Steps = T time steps, Neurons = N.
type Shape struct {
	Batch, Steps, Neurons int
}

func (s Shape) size() int { return s.Batch * s.Steps * s.Neurons }

// adapt reports whether the layer carries the adaptation current a.
func (c *Coefficients) adapt() bool { return c.EtaDt != nil }

// order is the TS order M.
func (c *Coefficients) order() int { return len(c.Beta) }

// components is the number of state arrays: V, a (with adaptation), V0…VM (when M ≥ 1).
func (c *Coefficients) components() int {
	n := 1
	if c.adapt() {
		n++
	}
	if m := c.order(); m > 0 {
		n += m + 1
	}
	return n
}

// check validates c for a layer of n neurons and returns P.
func (c *Coefficients) check(n int) (int, error) {
	if (c.EtaDt == nil) != (c.GammaDt == nil) {
		return 0, fmt.Errorf("fused: EtaDt and GammaDt must both be set or both be nil")
	}
	if len(c.Beta) != len(c.Lambda) {
		return 0, fmt.Errorf("fused: %d Beta but %d Lambda arrays", len(c.Beta), len(c.Lambda))
	}
	if len(c.Beta) > MaxOrder {
		return 0, fmt.Errorf("fused: TS order %d above %d", len(c.Beta), MaxOrder)
	}
	if !(c.SurrogateWidth > 0) {
		return 0, fmt.Errorf("fused: surrogate width %g must be positive", c.SurrogateWidth)
	}
	p := -1
	arrays := append(append([][]float32{c.EtaDt, c.GammaDt}, c.Beta...), c.Lambda...)
	for _, a := range arrays {
		if a == nil {
			continue
		}
		if p >= 0 && len(a) != p {
			return 0, fmt.Errorf("fused: coefficient arrays of %d and %d entries", p, len(a))
		}
		p = len(a)
	}
	if p < 0 {
		return n, nil // LIF with M = 0: no per-neuron coefficient
	}
	if p == 0 || n%p != 0 {
		return 0, fmt.Errorf("fused: %d coefficient entries do not divide %d neurons", p, n)
	}
	return p, nil
}

func (s Shape) check(arrays ...[]float32) error {
	if s.Batch <= 0 || s.Steps <= 0 || s.Neurons <= 0 {
		return fmt.Errorf("fused: shape %+v must be positive", s)
	}
	for _, a := range arrays {
		if len(a) != s.size() {
			return fmt.Errorf("fused: array of %d values for shape [%d, %d, %d]", len(a), s.Batch, s.Steps, s.Neurons)
		}
	}
	return nil
}

// expanded holds the coefficients repeated to one entry per neuron, and 1 − λm.
type expanded struct {
	mu, rho, vth, width, scale float32
	detach, adapt              bool
	m, comps                   int
	eta, gamma                 []float32
	beta, lambda, oneMinusLam  [][]float32
}

func expand(c *Coefficients, n int) expanded {
	rep := func(a []float32) []float32 {
		if a == nil {
			return nil
		}
		out := make([]float32, n)
		for i := range out {
			out[i] = a[i%len(a)]
		}
		return out
	}
	x := expanded{mu: c.MuBar, rho: c.RhoBar, vth: c.Vth, width: c.SurrogateWidth, scale: c.SurrogateScale,
		detach: c.DetachReset, adapt: c.adapt(), m: c.order(), comps: c.components(),
		eta: rep(c.EtaDt), gamma: rep(c.GammaDt)}
	for j := range x.m {
		x.beta = append(x.beta, rep(c.Beta[j]))
		lam := rep(c.Lambda[j])
		x.lambda = append(x.lambda, lam)
		oml := make([]float32, n)
		for i, l := range lam {
			oml[i] = 1 - l
		}
		x.oneMinusLam = append(x.oneMinusLam, oml)
	}
	return x
}

// block is one worker's view of a block of neurons [lo, hi): the expanded coefficients sliced to it.
type block struct {
	lo, n                     int
	eta, gamma                []float32
	beta, lambda, oneMinusLam [][]float32
}

func (x *expanded) block(lo, hi int) block {
	b := block{lo: lo, n: hi - lo}
	if x.adapt {
		b.eta, b.gamma = x.eta[lo:hi], x.gamma[lo:hi]
	}
	for j := range x.m {
		b.beta = append(b.beta, x.beta[j][lo:hi])
		b.lambda = append(b.lambda, x.lambda[j][lo:hi])
		b.oneMinusLam = append(b.oneMinusLam, x.oneMinusLam[j][lo:hi])
	}
	return b
}

// parallel runs work(worker, b) for every batch element b on min(GOMAXPROCS, batch) goroutines; worker is
// in [0, workers).
func parallel(batch int, work func(worker, b int)) int {
	workers := max(1, min(runtime.GOMAXPROCS(0), batch))
	var wg sync.WaitGroup
	next := make(chan int, batch)
	for b := range batch {
		next <- b
	}
	close(next)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				work(w, b)
			}
		}()
	}
	wg.Wait()
	return workers
}

// Forward runs the layer over current [batch, T, N] from the zero state and writes its spikes (exactly 0
// or 1) to spikes [batch, T, N].
func Forward(c *Coefficients, s Shape, current, spikes []float32) error {
	if err := s.check(current, spikes); err != nil {
		return err
	}
	if _, err := c.check(s.Neurons); err != nil {
		return err
	}
	x := expand(c, s.Neurons)
	parallel(s.Batch, func(_, b int) {
		state := make([]float32, x.comps*laneBlock)
		for lo := 0; lo < s.Neurons; lo += laneBlock {
			hi := min(lo+laneBlock, s.Neurons)
			blk := x.block(lo, hi)
			clear(state)
			st := state[:x.comps*blk.n]
			for t := range s.Steps {
				row := (b*s.Steps+t)*s.Neurons + lo
				x.step(&blk, st, st, current[row:row+blk.n], spikes[row:row+blk.n])
			}
		}
	})
	return nil
}

// Backward returns the cotangents of the coefficients and writes the cotangent of the current to cotCurrent
// [batch, T, N], given current [batch, T, N] (Forward's input) and the cotangent of the spikes cotSpikes
// [batch, T, N]. The final state's cotangent is zero (the loss reads the spikes only).
func Backward(c *Coefficients, s Shape, current, cotSpikes, cotCurrent []float32) (Grads, error) {
	if err := s.check(current, cotSpikes, cotCurrent); err != nil {
		return Grads{}, err
	}
	p, err := c.check(s.Neurons)
	if err != nil {
		return Grads{}, err
	}
	x := expand(c, s.Neurons)
	workers := max(1, min(runtime.GOMAXPROCS(0), s.Batch))
	// Per worker, per neuron accumulators of the coefficient cotangents: [2 + 2M][N].
	nacc := 2 + 2*x.m
	acc := make([][]float64, workers)
	for w := range acc {
		acc[w] = make([]float64, nacc*s.Neurons)
	}
	parallel(s.Batch, func(w, b int) {
		hist := make([]float32, s.Steps*x.comps*laneBlock)
		adj := make([]float32, x.comps*laneBlock)
		sums := make([]float32, nacc*laneBlock)
		for lo := 0; lo < s.Neurons; lo += laneBlock {
			hi := min(lo+laneBlock, s.Neurons)
			blk := x.block(lo, hi)
			k := x.comps * blk.n
			// Recompute the states before every step: hist[t] is the state before step t.
			clear(hist[:k])
			for t := 0; t < s.Steps-1; t++ {
				row := (b*s.Steps+t)*s.Neurons + lo
				x.step(&blk, hist[t*k:(t+1)*k], hist[(t+1)*k:(t+2)*k], current[row:row+blk.n], nil)
			}
			clear(adj[:k])
			sm := sums[:nacc*blk.n]
			clear(sm)
			for t := s.Steps - 1; t >= 0; t-- {
				row := (b*s.Steps+t)*s.Neurons + lo
				x.adjoint(&blk, hist[t*k:(t+1)*k], adj[:k], current[row:row+blk.n], cotSpikes[row:row+blk.n],
					cotCurrent[row:row+blk.n], sm)
			}
			a := acc[w]
			for j := range nacc {
				dst := a[j*s.Neurons+lo : j*s.Neurons+hi]
				for i, v := range sm[j*blk.n : (j+1)*blk.n] {
					dst[i] += float64(v)
				}
			}
		}
	})
	// Sum over workers and over the neurons sharing a coefficient entry.
	reduce := func(j int) []float64 {
		out := make([]float64, p)
		for w := range acc {
			for i, v := range acc[w][j*s.Neurons : (j+1)*s.Neurons] {
				out[i%p] += v
			}
		}
		return out
	}
	var g Grads
	if x.adapt {
		g.EtaDt, g.GammaDt = reduce(0), reduce(1)
		for i := range g.EtaDt {
			g.EtaDt[i] = -g.EtaDt[i]
		}
	}
	for j := range x.m {
		g.Beta = append(g.Beta, reduce(2+j))
		g.Lambda = append(g.Lambda, reduce(2+x.m+j))
	}
	return g, nil
}

// step runs one step for a block of neurons from the state pre to the state post (each components × n
// values, component-major: V, a, V0…VM; they may be the same slice), with the input in. It writes the
// spikes to out unless out is nil.
func (x *expanded) step(blk *block, pre, post, in, out []float32) {
	n := blk.n
	in = in[:n]
	var stage, stageNew [MaxOrder + 1][]float32
	v, vNew := pre[:n], post[:n]
	off := n
	var a, aNew []float32
	if x.adapt {
		a, aNew = pre[off:off+n], post[off:off+n]
		off += n
	}
	if x.m > 0 {
		for j := 0; j <= x.m; j++ {
			stage[j], stageNew[j] = pre[off:off+n], post[off:off+n]
			off += n
		}
	}
	var old [MaxOrder + 1]float32
	for i := range n {
		v0 := v[i]*x.mu + in[i]
		if x.adapt {
			ai := a[i]
			v0 = v0 - blk.eta[i]*ai
			aNew[i] = ai*x.rho + blk.gamma[i]*v0
		}
		mixed := v0
		if x.m > 0 {
			for j := 0; j <= x.m; j++ {
				old[j] = stage[j][i]
			}
			prev := v0
			stageNew[0][i] = v0
			for j := 1; j <= x.m; j++ {
				nj := blk.beta[j-1][i]*(old[j]-prev) + old[j-1]
				stageNew[j][i] = nj
				mixed = blk.oneMinusLam[j-1][i]*mixed + blk.lambda[j-1][i]*nj
				prev = nj
			}
		}
		var spike float32
		if mixed-x.vth >= 0 {
			spike = 1
		}
		vNew[i] = mixed - spike*x.vth
		if out != nil {
			out[i] = spike
		}
	}
}

// adjoint runs one step of the adjoint for a block of neurons: pre is the state before the step, adj the
// cotangent of the state after it (overwritten with the cotangent of the state before it), in the step's
// input, sBar the cotangent of its spike; it writes Ī to inBar and adds the coefficient cotangents to sums
// ([2 + 2M][n]: Σ a·V̄0 (negated by the caller), Σ V0·ā′, then β̄1…β̄M, then λ̄1…λ̄M).
func (x *expanded) adjoint(blk *block, pre, adj, in, sBar, inBar, sums []float32) {
	n := blk.n
	m := x.m
	in, sBar, inBar = in[:n], sBar[:n], inBar[:n]
	var stage, stageBar [MaxOrder + 1][]float32
	var betaSum, lambdaSum [MaxOrder][]float32
	v, vBar := pre[:n], adj[:n]
	off := n
	var a, aBar []float32
	if x.adapt {
		a, aBar = pre[off:off+n], adj[off:off+n]
		off += n
	}
	for j := 0; m > 0 && j <= m; j++ {
		stage[j], stageBar[j] = pre[off:off+n], adj[off:off+n]
		off += n
	}
	etaSum, gammaSum := sums[:n], sums[n:2*n]
	for j := range m {
		betaSum[j] = sums[(2+j)*n : (3+j)*n]
		lambdaSum[j] = sums[(2+m+j)*n : (3+m+j)*n]
	}
	var nodes, mixes, nBar [MaxOrder + 1]float32
	for i := range n {
		// The step's local values, recomputed as step computes them.
		v0 := v[i]*x.mu + in[i]
		var ai float32
		if x.adapt {
			ai = a[i]
			v0 = v0 - blk.eta[i]*ai
		}
		nodes[0], mixes[0] = v0, v0
		for j := 1; j <= m; j++ {
			nodes[j] = blk.beta[j-1][i]*(stage[j][i]-nodes[j-1]) + stage[j-1][i]
			mixes[j] = blk.oneMinusLam[j-1][i]*mixes[j-1] + blk.lambda[j-1][i]*nodes[j]
		}
		u := mixes[m] - x.vth
		surr := float32(math.Max(0, float64(1-float32(math.Abs(float64(u)))/x.width))) * x.scale

		// The reverse of the step.
		vb := vBar[i]
		sb := sBar[i]
		if !x.detach {
			sb = sb - vb*x.vth
		}
		uBar := vb + surr*sb
		v0Bar := uBar
		if m > 0 {
			mBar := uBar
			for j := m; j >= 1; j-- {
				nb := stageBar[j][i] + blk.lambda[j-1][i]*mBar
				if j < m {
					nb = nb - blk.beta[j][i]*nBar[j+1]
				}
				nBar[j] = nb
				betaSum[j-1][i] += (stage[j][i] - nodes[j-1]) * nb
				lambdaSum[j-1][i] += (nodes[j] - mixes[j-1]) * mBar
				mBar = blk.oneMinusLam[j-1][i] * mBar
			}
			v0Bar = (mBar + stageBar[0][i]) - blk.beta[0][i]*nBar[1]
			stageBar[0][i] = nBar[1]
			for j := 1; j <= m; j++ {
				sbj := blk.beta[j-1][i] * nBar[j]
				if j < m {
					sbj = sbj + nBar[j+1]
				}
				stageBar[j][i] = sbj
			}
		}
		if x.adapt {
			ab := aBar[i]
			v0Bar = v0Bar + blk.gamma[i]*ab
			etaSum[i] += ai * v0Bar
			gammaSum[i] += v0 * ab
			aBar[i] = ab*x.rho - blk.eta[i]*v0Bar
		}
		vBar[i] = v0Bar * x.mu
		inBar[i] = v0Bar
	}
}
