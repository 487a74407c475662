// Package fused runs Algorithm 1 (Appendix A.5) of one FiTS layer over a whole sequence, forward and
// backward, as one hand-written float32 kernel on the host: the CPU analogue of the paper's fused Triton
// kernel (Appendix, kernel runtime table). Each neuron's state stays in registers or cache across the T
// steps; nothing per step goes through memory but the input current, the spike and their cotangents.
//
// Forward (or ForwardSelect) computes the spikes [batch, T, N] of a layer from its input current
// [batch, T, N] and its per-step Coefficients; Backward computes the cotangent of the current and of the
// coefficients from the cotangent of the spikes, recomputing the forward per group of neurons. Both take
// an optional Dropout, regenerated in the kernel. The results are those of package fits/scan and
// neuron.LayerFrom, and identical to the bit in every instruction set (AVX-512, AVX2, scalar; DefaultISA,
// SetISA). Package fits/step's fused engine calls it; Example shows a direct call.
//
// The kernels run one batch element at a time, so the current need not exist as a [batch, T, N] array:
// ForwardInput and BackwardInput take it as an Input (the whole array, a RankOne synapse, or a Fill function
// that computes one element's current in cache), write the output or only its sum over time (Output), and
// hand each element's cotangent of the current to a consumer while it is in cache.
//
// The recurrence and its adjoint, the layout, dropout and the selection bits are derived in
// docs/algorithm.md; measured times are in docs/performance.md.
package fused

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/events"
)

// MaxOrder is the largest TS order M the kernel runs.
const MaxOrder = 8

// Coefficients are the per-step constants of one layer (neuron.Coefficients evaluated on the host).
type Coefficients struct {
	// MuBar = 1 − μΔt and RhoBar = 1 − ρΔt (dimensionless, per step), Vth the threshold.
	MuBar, RhoBar, Vth float32
	// SurrogateWidth and SurrogateScale define σ′(u) = scale·max(0, 1 − |u|/width), u = ṼM − Vth.
	SurrogateWidth, SurrogateScale float32
	// DetachReset: the reset term S·Vth carries no gradient.
	DetachReset bool
	// StrictSpike: S = 1 when ṼM > Vth (the released code); otherwise when ṼM ≥ Vth (the paper).
	StrictSpike bool
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

// Dropout is the dropout mask D that multiplies a layer's spikes: Forward writes S·D, Backward multiplies the
// cotangent of its output by D. A nil *Dropout is no dropout (D = 1).
type Dropout struct {
	// Shared, when not nil, is a time-shared mask [batch, N]: D[b, t, i] = Shared[b·N + i].
	Shared []float32
	// Key and P define the per-step mask of package fits/dropmask when Shared is nil: D[b, t, i] =
	// dropmask.Scale(P) when dropmask.Bits(Key, (b·T + t)·N + i) ≥ dropmask.Threshold(P), 0 otherwise (the
	// values of dropmask.Mask for Key = dropmask.Key(seed, step, layer)). P lies in [0, 1).
	Key uint32
	P   float64
}

// mask is a Dropout as the kernel reads it.
type mask struct {
	shared         []float32 // [batch, N], or nil
	step           bool      // the per-step mask of key, threshold and scale
	key, threshold uint32
	scale          float32
	// origin is the flat index (b·T + t)·N + i of the layer's element that the kernel's arrays start at: 0
	// for the whole batch, b·T·N for the arrays of batch element b alone (element).
	origin int
}

// element is m as the kernel reads it for the arrays of batch element b alone ([T, N] instead of [batch,
// T, N]), in a layer of shape s.
func (m mask) element(s Shape, b int) mask {
	if m.shared != nil {
		m.shared = m.shared[b*s.Neurons : (b+1)*s.Neurons]
	}
	m.origin += b * s.Steps * s.Neurons
	return m
}

// compile checks d against s and returns the kernel's view of it (the zero mask, no dropout, for nil).
func (d *Dropout) compile(s Shape) (mask, error) {
	if d == nil {
		return mask{}, nil
	}
	if d.Shared != nil {
		if len(d.Shared) != s.Batch*s.Neurons {
			return mask{}, fmt.Errorf("fused: dropout mask of %d values for [%d, %d]", len(d.Shared), s.Batch, s.Neurons)
		}
		return mask{shared: d.Shared}, nil
	}
	if err := dropmask.Check(d.P); err != nil {
		return mask{}, fmt.Errorf("fused: %w", err)
	}
	if s.size() > 1<<32 {
		return mask{}, fmt.Errorf("fused: a per-step dropout mask of [%d, %d, %d] has more than 2^32 elements", s.Batch, s.Steps, s.Neurons)
	}
	return mask{step: true, key: d.Key, threshold: dropmask.Threshold(d.P), scale: dropmask.Scale(d.P)}, nil
}

// stepAt returns D at flat index idx = (b·T + t)·N + i (from the mask's origin) of a per-step mask.
func (m *mask) stepAt(idx int) float32 {
	if dropmask.Bits(m.key, uint32(m.origin+idx)) >= m.threshold {
		return m.scale
	}
	return 0
}

// expanded holds the coefficients repeated to one entry per neuron, and 1 − λm.
type expanded struct {
	mu, rho, vth, width, scale float32
	// widthPow2: the surrogate's width is a power of two (1/α = 0.5 for the released α = 2), so that
	// multiplying by invWidth = 1/width gives exactly the quotient by width (the vector code then does).
	widthPow2                 bool
	invWidth                  float32
	detach, adapt, strict     bool
	m, comps                  int
	eta, gamma                []float32
	beta, lambda, oneMinusLam [MaxOrder][]float32
}

func expand(c *Coefficients, n int) *expanded {
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
	x := &expanded{mu: c.MuBar, rho: c.RhoBar, vth: c.Vth, width: c.SurrogateWidth, scale: c.SurrogateScale,
		detach: c.DetachReset, strict: c.StrictSpike, adapt: c.adapt(), m: c.order(), comps: c.components(),
		eta: rep(c.EtaDt), gamma: rep(c.GammaDt)}
	if frac, exp := math.Frexp(float64(c.SurrogateWidth)); frac == 0.5 && exp > -120 && exp < 120 {
		x.widthPow2, x.invWidth = true, 1/c.SurrogateWidth
	}
	for j := range x.m {
		x.beta[j] = rep(c.Beta[j])
		x.lambda[j] = rep(c.Lambda[j])
		x.oneMinusLam[j] = make([]float32, n)
		for i, l := range x.lambda[j] {
			x.oneMinusLam[j][i] = 1 - l
		}
	}
	return x
}

// histBudget bounds a worker's buffer for the state the backward vector kernels recompute, bytes (a
// variable for the tests).
var histBudget = 4 << 20

// assemblyKernels runs the assembly kernels of order-1 layers (forwardM1x16 and backwardM1x16, AVX-512)
// where they apply (a variable for the tests and benchmarks).
var assemblyKernels = true

// workers is the number of goroutines parallel uses for a batch: min(GOMAXPROCS, batch), at least 1.
func workers(batch int) int { return max(1, min(runtime.GOMAXPROCS(0), batch)) }

// parallel runs work(worker, b) for every batch element b on workers(batch) goroutines; worker is in
// [0, workers(batch)).
func parallel(batch int, work func(worker, b int)) {
	workers := workers(batch)
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
}

// parallelStatic is parallel with a fixed share of the batch per worker: worker w of W = workers(batch)
// runs b in [w·batch/W, (w+1)·batch/W), in increasing order.
func parallelStatic(batch int, work func(worker, b int)) {
	n := workers(batch)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := w * batch / n; b < (w+1)*batch/n; b++ {
				work(w, b)
			}
		}()
	}
	wg.Wait()
}

// Forward runs the layer over current [batch, T, N] from the zero state, writes its output h = S·D to out
// [batch, T, N] (S the spikes, exactly 0 or 1; D the dropout mask, 1 when dropout is nil), and returns the
// number of spikes of each batch element (before the mask).
func Forward(c *Coefficients, s Shape, current []float32, dropout *Dropout, out []float32) ([]int, error) {
	return ForwardSelect(c, s, current, dropout, out, nil)
}

// SelectionWords is the length of a selection (ForwardSelect) for a layer of shape s: events.BitStride(N)
// 64-bit words for each of the batch·T rows, the layout events.SelectedInputCotangent reads.
func SelectionWords(s Shape) int { return s.Batch * s.Steps * events.BitStride(s.Neurons) }

// ForwardSelect is Forward that also writes, when sel is not nil (SelectionWords(s) words), the selection
// of the entries whose output cotangent Backward reads: bit i mod 64 of word (b·T + t)·⌈N/64⌉ + i/64 is set
// where |ṼM − Vth| < SurrogateWidth (the surrogate σ′ is zero elsewhere) and D ≠ 0 at (b, t, i). Backward
// multiplies the cotangent of the output by D·σ′, so it gives the same result, for a finite cotangent, when
// the cotangent is replaced by 0 at every entry whose bit is clear (package fits/events computes the input
// cotangent of the next synapse only at the selected entries).
func ForwardSelect(c *Coefficients, s Shape, current []float32, dropout *Dropout, out []float32, sel []uint64) ([]int, error) {
	if err := s.check(current); err != nil {
		return nil, err
	}
	return forward(c, s, Input{Current: current}, dropout, Output{H: out, Selection: sel})
}

// ForwardTimeSum is Forward for a layer whose output only its sum over time is read (the last layer under
// the mean and sum readouts): instead of h = S·D [batch, T, N] it writes Σₜ h[b, t, i] to sums [batch, N],
// summed in float32 in the order of t (the exact spike counts without dropout). Each batch element's h
// stays in a buffer in the CPU's cache: at the sMNIST shape 205 MB a step are neither written nor read.
func ForwardTimeSum(c *Coefficients, s Shape, current []float32, dropout *Dropout, sums []float32) ([]int, error) {
	if err := s.check(current); err != nil {
		return nil, err
	}
	if len(sums) != s.Batch*s.Neurons {
		return nil, fmt.Errorf("fused: time sums of %d values for [%d, %d]", len(sums), s.Batch, s.Neurons)
	}
	return forward(c, s, Input{Current: current}, dropout, Output{TimeSum: sums})
}

// forward is ForwardSelect with the current read from src and the output written to out.
func forward(c *Coefficients, s Shape, src Input, dropout *Dropout, out Output) ([]int, error) {
	sel := out.Selection
	if out.TimeSum == nil {
		if err := s.check(out.H); err != nil {
			return nil, err
		}
	}
	if sel != nil && len(sel) != SelectionWords(s) {
		return nil, fmt.Errorf("fused: selection of %d words for shape [%d, %d, %d]", len(sel), s.Batch, s.Steps, s.Neurons)
	}
	drop, err := dropout.compile(s)
	if err != nil {
		return nil, err
	}
	if _, err := c.check(s.Neurons); err != nil {
		return nil, err
	}
	x := expand(c, s.Neurons)
	isa := ActiveISA()
	work := make([]vecWork, workers(s.Batch))
	scratch := src.scratch(s)
	var hBufs [][]float32 // the workers' buffers of one element's h [T, N] (ForwardTimeSum)
	if out.TimeSum != nil {
		hBufs = elementBuffers(s)
	}
	counts := make([]int, s.Batch)
	errs := make([]error, workers(s.Batch)) // of the workers' Fill calls
	stride := events.BitStride(s.Neurons)
	one, size := Shape{Batch: 1, Steps: s.Steps, Neurons: s.Neurons}, s.Steps*s.Neurons
	parallel(s.Batch, func(w, b int) {
		// The kernels run on batch element b's arrays alone, as a batch of one.
		var rows []uint64
		if sel != nil {
			rows = sel[b*s.Steps*stride : (b+1)*s.Steps*stride]
			clear(rows)
		}
		cur, d := src.element(isa, s, b, scratch[w], &errs[w]), drop.element(s, b)
		if errs[w] != nil {
			return
		}
		var o []float32
		if hBufs != nil {
			o = hBufs[w]
		} else {
			o = out.H[b*size : (b+1)*size]
		}
		i, count := x.forwardVector(isa, one, 0, cur, &d, o, rows, &work[w])
		for ; i < s.Neurons; i++ {
			count += x.forwardScalar(one, 0, i, cur, &d, o, rows)
		}
		counts[b] = count
		if hBufs != nil {
			timeSum(isa, o, out.TimeSum[b*s.Neurons:(b+1)*s.Neurons])
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return counts, nil
}

// Backward returns the cotangents of the coefficients and writes the cotangent of the current to cotCurrent
// [batch, T, N], given current [batch, T, N] (Forward's input) and cotOut [batch, T, N], the cotangent of
// the layer's output h = S·D: the cotangent of the spikes is S̄ = cotOut·D (D the dropout mask Forward
// applied, 1 when dropout is nil; a per-step mask is regenerated, not read). The final state's cotangent is
// zero (the loss reads the spikes only).
//
// cotOut may also be [batch, N]: a cotangent that is the same at every time step, cotOut[b, t, i] =
// cotOut[b, i], as the sum and mean readouts (and the spike-count loss) give the last layer. The result is
// the same to the bit as with that array broadcast over T, without its batch·T·N values being written
// and read.
func Backward(c *Coefficients, s Shape, current, cotOut []float32, dropout *Dropout, cotCurrent []float32) (Grads, error) {
	if err := s.check(current, cotCurrent); err != nil {
		return Grads{}, err
	}
	g, _, err := backward(c, s, Input{Current: current}, cotOut, dropout, cotCurrent, nil)
	return g, err
}

// Workers is the number of goroutines a call on a batch of this size runs, min(GOMAXPROCS, batch): the
// worker numbers BackwardConsume passes to its consumer are below it.
func Workers(batch int) int { return workers(batch) }

// BackwardConsume is Backward that hands each batch element's cotangent of the current [T, N] to
// consume(worker, b, cot) while it is in the CPU's cache, instead of writing a [batch, T, N] array: cot is
// a buffer of the worker's, overwritten by its next element. Worker w of W = Workers(batch) runs the
// elements [w·batch/W, (w+1)·batch/W) in increasing order, so that what a consumer sums per worker is the
// same from run to run for a given number of workers.
func BackwardConsume(c *Coefficients, s Shape, current, cotOut []float32, dropout *Dropout, consume func(worker, b int, cot []float32)) (Grads, error) {
	if err := s.check(current); err != nil {
		return Grads{}, err
	}
	if consume == nil {
		return Grads{}, fmt.Errorf("fused: BackwardConsume without a consumer")
	}
	g, _, err := backward(c, s, Input{Current: current}, cotOut, dropout, nil, consume)
	return g, err
}

// backward is Backward with the current read from src. With src.rank set it writes no cotangent of the
// current (cotCurrent is nil) and also returns, per batch element, the sums RankOne's gradients add up
// ([batch][2][N]: Σₜ X[b, t]·Ī[b, t, i], then Σₜ Ī[b, t, i]). With consume set it hands each element's
// cotangent of the current to it instead of writing it (BackwardConsume).
func backward(c *Coefficients, s Shape, src Input, cotOut []float32, dropout *Dropout, cotCurrent []float32, consume func(worker, b int, cot []float32)) (Grads, []float32, error) {
	cotRows := s.Steps
	if len(cotOut) == s.Batch*s.Neurons && s.Steps > 1 {
		cotRows = 1
	}
	if len(cotOut) != s.Batch*cotRows*s.Neurons {
		return Grads{}, nil, fmt.Errorf("fused: output cotangent of %d values for shape [%d, %d, %d] (or [%d, %d])",
			len(cotOut), s.Batch, s.Steps, s.Neurons, s.Batch, s.Neurons)
	}
	drop, err := dropout.compile(s)
	if err != nil {
		return Grads{}, nil, err
	}
	p, err := c.check(s.Neurons)
	if err != nil {
		return Grads{}, nil, err
	}
	x := expand(c, s.Neurons)
	// Per batch element, per neuron sums of the coefficient cotangents over time: [2 + 2M][N] (Σ a·V̄0,
	// Σ V0·ā′, β̄m, λ̄m). They are summed over the batch in a fixed order afterwards, so that the result
	// does not depend on which goroutine ran which element (training is reproducible to the bit).
	nacc := 2 + 2*x.m
	acc := make([]float32, s.Batch*nacc*s.Neurons)
	isa := ActiveISA()
	size := s.Steps * x.comps // the scalar code's
	if isa != Scalar {
		size = max(size, histSize(s.Neurons, s.Steps, x.comps+1)) // the state and the spike cotangent
	}
	hist := make([][]float32, workers(s.Batch))
	for w := range hist {
		hist[w] = make([]float32, size)
	}
	work := make([]vecWork, workers(s.Batch))
	scratch, cotScratch := src.scratch(s), src.scratch(s)
	run := parallel
	if consume != nil {
		cotScratch, run = elementBuffers(s), parallelStatic
	}
	errs := make([]error, workers(s.Batch)) // of the workers' Fill calls
	var sums []float32
	if src.RankOne != nil {
		sums = make([]float32, s.Batch*2*s.Neurons)
	}
	one, elem := Shape{Batch: 1, Steps: s.Steps, Neurons: s.Neurons}, s.Steps*s.Neurons
	run(s.Batch, func(w, b int) {
		// The kernels run on batch element b's arrays alone, as a batch of one.
		d := drop.element(s, b)
		cur := src.element(isa, s, b, scratch[w], &errs[w])
		if errs[w] != nil {
			return
		}
		in := backwardIn{current: cur, drop: &d, cotRows: cotRows,
			cotSpikes: cotOut[b*cotRows*s.Neurons : (b+1)*cotRows*s.Neurons]}
		if src.RankOne != nil || consume != nil {
			in.cotCurrent = cotScratch[w]
		} else {
			in.cotCurrent = cotCurrent[b*elem : (b+1)*elem]
		}
		a := acc[b*nacc*s.Neurons : (b+1)*nacc*s.Neurons]
		for i := x.backwardVector(isa, one, 0, &in, hist[w], a, &work[w]); i < s.Neurons; i++ {
			x.backwardScalar(one, 0, i, in, hist[w], a)
		}
		if src.RankOne != nil {
			src.RankOne.sums(isa, s, b, in.cotCurrent, sums[b*2*s.Neurons:(b+1)*2*s.Neurons])
		}
		if consume != nil {
			consume(w, b, in.cotCurrent)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return Grads{}, nil, err
	}
	// Sum over the batch and over the neurons sharing a coefficient entry, in float64.
	reduce := func(j int) []float64 {
		out := make([]float64, p)
		for b := range s.Batch {
			row := acc[(b*nacc+j)*s.Neurons : (b*nacc+j+1)*s.Neurons]
			for i, v := range row {
				out[i%p] += float64(v)
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
	return g, sums, nil
}

// backwardIn are Backward's arrays and its dropout mask.
type backwardIn struct {
	current, cotSpikes, cotCurrent []float32
	drop                           *mask
	// cotRows is the number of time rows of cotSpikes: T, or 1 for a cotangent constant over time.
	cotRows int
}

// cotSpikesAt returns the offset in cotSpikes of batch element b, step t, neuron 0, for n neurons.
func (in *backwardIn) cotSpikesAt(b, t, n int) int {
	if in.cotRows == 1 {
		return b * n
	}
	return (b*in.cotRows + t) * n
}

// scalarState is the state of one neuron: V, a and the stages V0…VM.
type scalarState struct {
	v, a  float32
	stage [MaxOrder + 1]float32
}

// stepScalar runs one step of neuron i from st with input current in, and returns the spike and
// u = ṼM − Vth.
func (x *expanded) stepScalar(i int, st *scalarState, in float32) (float32, float32) {
	v0 := st.v*x.mu + in
	if x.adapt {
		v0 = v0 - x.eta[i]*st.a
		st.a = st.a*x.rho + x.gamma[i]*v0
	}
	mixed := v0
	if x.m > 0 {
		prevOld, prevNew := st.stage[0], v0
		st.stage[0] = v0
		for j := 1; j <= x.m; j++ {
			old := st.stage[j]
			nj := x.beta[j-1][i]*(old-prevNew) + prevOld
			st.stage[j] = nj
			mixed = x.oneMinusLam[j-1][i]*mixed + x.lambda[j-1][i]*nj
			prevOld, prevNew = old, nj
		}
	}
	// S = Θ(u) + (u − u), u = ṼM − Vth, as neuron.Spike computes it: exactly Θ(u) for a finite u, NaN
	// when the state is NaN or infinite, so that a diverged run shows in the loss.
	u := mixed - x.vth
	var spike float32
	if u > 0 || (u == 0 && !x.strict) {
		spike = 1
	}
	spike = spike + (u - u)
	st.v = mixed - spike*x.vth
	return spike, u
}

// forwardScalar runs neuron i of batch element b over the T steps (its output times the dropout mask) and
// returns its number of spikes; it sets the neuron's bits of rows, the selection's rows of element b, when
// rows is not nil.
func (x *expanded) forwardScalar(s Shape, b, i int, current []float32, drop *mask, out []float32, rows []uint64) int {
	var st scalarState
	idx := b*s.Steps*s.Neurons + i
	var d float32 = 1
	if drop.shared != nil {
		d = drop.shared[b*s.Neurons+i]
	}
	count := 0
	stride := events.BitStride(s.Neurons)
	for t := range s.Steps {
		spike, u := x.stepScalar(i, &st, current[idx])
		if spike != 0 {
			count++
		}
		if drop.step {
			d = drop.stepAt(idx)
		}
		if drop.shared != nil || drop.step {
			spike = spike * d
		}
		out[idx] = spike
		if rows != nil && float32(math.Abs(float64(u))) < x.width && d != 0 {
			rows[t*stride+i/64] |= 1 << (i % 64)
		}
		idx += s.Neurons
	}
	return count
}

// backwardScalar runs the adjoint of neuron i of batch element b: it recomputes the state before every
// step into hist (T × components values), then runs the reverse steps (see the package documentation),
// writing Ī and the neuron's coefficient cotangents summed over time to acc ([2 + 2M][N] of element b).
func (x *expanded) backwardScalar(s Shape, b, i int, in backwardIn, hist, acc []float32) {
	m, comps, n := x.m, x.comps, s.Neurons
	base := b * s.Steps * n
	var st scalarState
	for t := range s.Steps {
		h := hist[t*comps : (t+1)*comps]
		h[0] = st.v
		k := 1
		if x.adapt {
			h[1] = st.a
			k = 2
		}
		if m > 0 {
			copy(h[k:], st.stage[:m+1])
		}
		if t < s.Steps-1 {
			x.stepScalar(i, &st, in.current[base+t*n+i])
		}
	}
	var drop float32 = 1
	if in.drop.shared != nil {
		drop = in.drop.shared[b*n+i]
	}
	var vBar, aBar, etaSum, gammaSum float32
	var stageBar, nodes, mixes, nBar [MaxOrder + 1]float32
	var betaSum, lambdaSum [MaxOrder]float32
	var pre scalarState
	for t := s.Steps - 1; t >= 0; t-- {
		h := hist[t*comps : (t+1)*comps]
		pre.v = h[0]
		k := 1
		if x.adapt {
			pre.a = h[1]
			k = 2
		}
		if m > 0 {
			copy(pre.stage[:m+1], h[k:])
		}
		idx := base + t*n + i
		// The step's local values, recomputed as stepScalar computes them.
		v0 := pre.v*x.mu + in.current[idx]
		if x.adapt {
			v0 = v0 - x.eta[i]*pre.a
		}
		nodes[0], mixes[0] = v0, v0
		for j := 1; j <= m; j++ {
			nodes[j] = x.beta[j-1][i]*(pre.stage[j]-nodes[j-1]) + pre.stage[j-1]
			mixes[j] = x.oneMinusLam[j-1][i]*mixes[j-1] + x.lambda[j-1][i]*nodes[j]
		}
		u := mixes[m] - x.vth
		surr := float32(math.Max(0, float64(1-float32(math.Abs(float64(u)))/x.width))) * x.scale

		// The reverse of the step.
		sb := in.cotSpikes[in.cotSpikesAt(b, t, n)+i]
		if in.drop.shared != nil {
			sb = sb * drop
		} else if in.drop.step {
			sb = sb * in.drop.stepAt(idx)
		}
		if !x.detach {
			sb = sb - vBar*x.vth
		}
		uBar := vBar + surr*sb
		v0Bar := uBar
		if m > 0 {
			mBar := uBar
			for j := m; j >= 1; j-- {
				nb := stageBar[j] + x.lambda[j-1][i]*mBar
				if j < m {
					nb = nb - x.beta[j][i]*nBar[j+1]
				}
				nBar[j] = nb
				betaSum[j-1] += (pre.stage[j] - nodes[j-1]) * nb
				lambdaSum[j-1] += (nodes[j] - mixes[j-1]) * mBar
				mBar = x.oneMinusLam[j-1][i] * mBar
			}
			v0Bar = (mBar + stageBar[0]) - x.beta[0][i]*nBar[1]
			stageBar[0] = nBar[1]
			for j := 1; j <= m; j++ {
				sbj := x.beta[j-1][i] * nBar[j]
				if j < m {
					sbj = sbj + nBar[j+1]
				}
				stageBar[j] = sbj
			}
		}
		if x.adapt {
			v0Bar = v0Bar + x.gamma[i]*aBar
			etaSum += pre.a * v0Bar
			gammaSum += v0 * aBar
			aBar = aBar*x.rho - x.eta[i]*v0Bar
		}
		vBar = v0Bar * x.mu
		in.cotCurrent[idx] = v0Bar
	}
	acc[i], acc[n+i] = etaSum, gammaSum
	for j := range m {
		acc[(2+j)*n+i], acc[(2+m+j)*n+i] = betaSum[j], lambdaSum[j]
	}
}
