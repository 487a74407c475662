package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/fused"
)

// KernelLayer is one hidden layer as the host kernel of fits/fused runs it in the Fused variant: Batch
// sequences of Time steps of Width neurons of TS order M, with or without the adaptation current, and the
// per-step dropout mask of probability Dropout (none when 0).
type KernelLayer struct {
	Batch   int     `json:"batch"`
	Time    int     `json:"time"`
	Width   int     `json:"width"`
	M       int     `json:"m"`
	Adapt   bool    `json:"adapt"`
	Dropout float64 `json:"dropout"`
}

// KernelLayerOf returns the first hidden layer of spec as the host kernel runs it.
func KernelLayerOf(spec Spec) KernelLayer {
	return KernelLayer{Batch: spec.Batch, Time: spec.Time, Width: spec.Widths[0], M: spec.Neuron.Order,
		Adapt: spec.Neuron.Kind.HasAdaptation(), Dropout: spec.Dropout}
}

// KernelTiming is the median wall time of one call of fused.Forward and of fused.Backward with one ISA,
// milliseconds, on GOMAXPROCS threads.
type KernelTiming struct {
	ISA        string  `json:"isa"`
	ForwardMs  float64 `json:"forward_ms"`
	BackwardMs float64 `json:"backward_ms"`
}

// KernelMeasurement is the host kernel on one layer with every ISA this build and CPU run (fused.ISAs), and
// the speed-up of the ISA it runs by default over the scalar code: the scalar code's median divided by the
// default ISA's, forward and backward (1 when the default is the scalar code).
type KernelMeasurement struct {
	KernelLayer
	DefaultISA       string         `json:"default_isa"`
	Timings          []KernelTiming `json:"timings"`
	ForwardVsScalar  float64        `json:"forward_vector_vs_scalar"`
	BackwardVsScalar float64        `json:"backward_vector_vs_scalar"`
}

// MeasureKernel times fused.Forward and fused.Backward on layer with every ISA this build and CPU run,
// iters calls each after one untimed call, the ISAs interleaved call by call (so that a load that comes and
// goes on the machine falls on all of them alike), and returns the medians. The coefficients and the
// current are drawn with a fixed seed in the ranges the kernel's tests use. It sets the kernel's ISA
// (fused.SetISA) while it runs and restores it after: nothing else may run the kernel meanwhile.
func MeasureKernel(layer KernelLayer, iters int) (KernelMeasurement, error) {
	m := KernelMeasurement{KernelLayer: layer, DefaultISA: fused.ActiveISA().String()}
	if iters < 1 {
		return m, fmt.Errorf("bench: %d timed kernel calls (need at least 1)", iters)
	}
	if layer.Batch < 1 || layer.Time < 1 || layer.Width < 1 || layer.M < 0 || layer.M > fused.MaxOrder {
		return m, fmt.Errorf("bench: kernel layer %+v", layer)
	}
	c, s, cur, cot := layer.draw()
	var drop *fused.Dropout
	if layer.Dropout > 0 {
		drop = &fused.Dropout{Key: dropmask.Key(1, 0, 0), P: layer.Dropout}
	}
	out, cotCur := make([]float32, len(cur)), make([]float32, len(cur))
	isas := slices.DeleteFunc(slices.Clone(fused.ISAs()), func(isa fused.ISA) bool { return !isa.Supported() })
	prev := fused.ActiveISA()
	defer func() { _, _ = fused.SetISA(prev) }()
	fwd, bwd := make([][]float64, len(isas)), make([][]float64, len(isas))
	for it := -1; it < iters; it++ {
		for k, isa := range isas {
			if _, err := fused.SetISA(isa); err != nil {
				return m, err
			}
			t0 := time.Now()
			if _, err := fused.Forward(&c, s, cur, drop, out); err != nil {
				return m, err
			}
			t1 := time.Now()
			if _, err := fused.Backward(&c, s, cur, cot, drop, cotCur); err != nil {
				return m, err
			}
			t2 := time.Now()
			if it >= 0 {
				fwd[k] = append(fwd[k], float64(t1.Sub(t0))/float64(time.Millisecond))
				bwd[k] = append(bwd[k], float64(t2.Sub(t1))/float64(time.Millisecond))
			}
		}
	}
	var scalar, def KernelTiming
	for k, isa := range isas {
		t := KernelTiming{ISA: isa.String(), ForwardMs: Median(fwd[k]), BackwardMs: Median(bwd[k])}
		m.Timings = append(m.Timings, t)
		if isa == fused.Scalar {
			scalar = t
		}
		if isa == prev {
			def = t
		}
	}
	m.ForwardVsScalar, m.BackwardVsScalar = scalar.ForwardMs/def.ForwardMs, scalar.BackwardMs/def.BackwardMs
	return m, nil
}

// draw returns the layer's coefficients (ηΔt, γΔt in [0.02, 0.15], β in [−0.9, 0.9], λ in [0.05, 0.95], one
// per neuron), shape, current (normal, mean 0.6, deviation 0.8) and spike cotangent (standard normal).
func (l KernelLayer) draw() (fused.Coefficients, fused.Shape, []float32, []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	uniform := func(lo, hi float64) []float32 {
		v := make([]float32, l.Width)
		for i := range v {
			v[i] = float32(lo + (hi-lo)*rng.Float64())
		}
		return v
	}
	c := fused.Coefficients{MuBar: 0.9, RhoBar: 0.98, Vth: 1, SurrogateWidth: 1, SurrogateScale: 0.3}
	if l.Adapt {
		c.EtaDt, c.GammaDt = uniform(0.02, 0.15), uniform(0.02, 0.15)
	}
	for range l.M {
		c.Beta = append(c.Beta, uniform(-0.9, 0.9))
		c.Lambda = append(c.Lambda, uniform(0.05, 0.95))
	}
	s := fused.Shape{Batch: l.Batch, Steps: l.Time, Neurons: l.Width}
	cur, cot := make([]float32, l.Batch*l.Time*l.Width), make([]float32, l.Batch*l.Time*l.Width)
	for i := range cur {
		cur[i] = float32(0.6 + 0.8*rng.NormFloat64())
		cot[i] = float32(rng.NormFloat64())
	}
	return c, s, cur, cot
}
