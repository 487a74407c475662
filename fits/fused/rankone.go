package fused

import "fmt"

// RankOne is the input of a layer whose synapse has a single input feature, as the first layer of the
// sequential MNIST recipe (one pixel a step) has: the current is I[b, t, i] = X[b, t]·W[i] + Bias[i], the
// product rounded to float32 before the bias is added (the value a dense synapse x·W + b gives, bit for
// bit). ForwardRankOne and BackwardRankOne compute it for one batch element at a time into a buffer of
// [T, N] that stays in the CPU's cache, instead of reading a [batch, T, N] current from memory and writing
// its cotangent back: at the sMNIST shape (256 × 784 × 256) that array is 205 MB, written once and read
// twice a training step, and its cotangent as large again.
type RankOne struct {
	X       []float32 // the input [batch, T] (the feature axis of [batch, T, 1] dropped)
	W, Bias []float32 // the synapse's weights and biases [N]
}

func (r *RankOne) check(s Shape) error {
	if len(r.X) != s.Batch*s.Steps {
		return fmt.Errorf("fused: rank-one input of %d values for [%d, %d]", len(r.X), s.Batch, s.Steps)
	}
	if len(r.W) != s.Neurons || len(r.Bias) != s.Neurons {
		return fmt.Errorf("fused: rank-one weights of %d and biases of %d values for %d neurons", len(r.W), len(r.Bias), s.Neurons)
	}
	return nil
}

// fill writes batch element b's current [T, N] to dst.
func (r *RankOne) fill(isa ISA, s Shape, b int, dst []float32) {
	xs := r.X[b*s.Steps : (b+1)*s.Steps]
	if fillVector(isa, xs, r.W, r.Bias, dst) {
		return
	}
	n := s.Neurons
	for t, x := range xs {
		row := dst[t*n : (t+1)*n]
		for i, w := range r.W {
			row[i] = float32(x*w) + r.Bias[i] // the conversion keeps the product rounded (no fused multiply-add)
		}
	}
}

// sums writes batch element b's sums of the cotangent cot [T, N] of its current to out [2][N]: first
// Σₜ X[b, t]·Ī[t, i], then Σₜ Ī[t, i], each summed in float32 in the order of t (the same bits in every
// instruction set).
func (r *RankOne) sums(isa ISA, s Shape, b int, cot, out []float32) {
	xs := r.X[b*s.Steps : (b+1)*s.Steps]
	if sumsVector(isa, xs, cot, out) {
		return
	}
	n := s.Neurons
	for i := range n {
		var sw, sb float32
		for t, x := range xs {
			c := cot[t*n+i]
			sw += float32(c * x)
			sb += c
		}
		out[i], out[n+i] = sw, sb
	}
}

// timeSum writes Σₜ h[t, i] of one element's h [T, N] to dst [N], in float32 in the order of t.
func timeSum(isa ISA, h, dst []float32) {
	if timeSumVector(isa, h, dst) {
		return
	}
	n := len(dst)
	for i := range n {
		var acc float32
		for t := i; t < len(h); t += n {
			acc += h[t]
		}
		dst[i] = acc
	}
}

// ForwardRankOne is ForwardSelect with the current given as a RankOne input.
func ForwardRankOne(c *Coefficients, s Shape, in RankOne, dropout *Dropout, out []float32, sel []uint64) ([]int, error) {
	if err := s.check(out); err != nil {
		return nil, err
	}
	if err := in.check(s); err != nil {
		return nil, err
	}
	return forward(c, s, Input{RankOne: &in}, dropout, Output{H: out, Selection: sel})
}

// BackwardRankOne is Backward with the current given as a RankOne input: instead of the cotangent of the
// current it returns the gradients of the synapse's weights and biases [N], gradW[i] = Σ_b Σₜ X[b, t]·Ī[b, t, i]
// and gradBias[i] = Σ_b Σₜ Ī[b, t, i] (the sums over t in float32 per batch element, then over the batch in
// float64 in the order of b, so that the result does not depend on the goroutines).
func BackwardRankOne(c *Coefficients, s Shape, in RankOne, cotOut []float32, dropout *Dropout) (g Grads, gradW, gradBias []float32, err error) {
	if err := s.check(); err != nil {
		return Grads{}, nil, nil, err
	}
	if err := in.check(s); err != nil {
		return Grads{}, nil, nil, err
	}
	g, sums, err := backward(c, s, Input{RankOne: &in}, cotOut, dropout, nil, nil)
	if err != nil {
		return Grads{}, nil, nil, err
	}
	n := s.Neurons
	w, bias := make([]float64, n), make([]float64, n)
	for b := range s.Batch {
		row := sums[b*2*n : (b+1)*2*n]
		for i := range n {
			w[i] += float64(row[i])
			bias[i] += float64(row[n+i])
		}
	}
	gradW, gradBias = make([]float32, n), make([]float32, n)
	for i := range n {
		gradW[i], gradBias[i] = float32(w[i]), float32(bias[i])
	}
	return g, gradW, gradBias, nil
}
