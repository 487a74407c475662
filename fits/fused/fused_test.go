package fused_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/fused"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/scan"
	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// kernelCase is a layer to hold the kernel to fits/scan: its coefficients are drawn at random in ranges
// wider than any initialization (adaptation strong enough that a and its cotangent matter).
type kernelCase struct {
	adapt  bool
	m      int
	detach bool
	dims   []int // [batch, T, d1, …, dn]
	shared bool  // one coefficient per channel (the last axis)
	drop   bool  // a time-shared dropout mask [batch, N] multiplies the spikes and their cotangent
}

func (k kernelCase) String() string {
	return fmt.Sprintf("adapt=%v/M=%d/detach=%v/dims=%v/shared=%v/dropout=%v", k.adapt, k.m, k.detach, k.dims, k.shared, k.drop)
}

func kernelCases() []kernelCase {
	var out []kernelCase
	for _, adapt := range []bool{false, true} {
		for m := range 4 {
			out = append(out, kernelCase{adapt, m, false, []int{3, 40, 70}, false, false})
		}
	}
	return append(out,
		kernelCase{true, 2, true, []int{3, 40, 70}, false, false},
		kernelCase{true, 1, false, []int{2, 30, 3, 4, 5}, true, true},
		kernelCase{false, 2, true, []int{1, 1, 130}, false, false},
		kernelCase{true, 3, false, []int{2, 20, 24}, false, true},
	)
}

// draw returns the case's host coefficients, current and spike cotangent.
func (k kernelCase) draw(rng *rand.Rand) (c fused.Coefficients, s fused.Shape, cur, cot []float32, pdims []int) {
	s = fused.Shape{Batch: k.dims[0], Steps: k.dims[1], Neurons: 1}
	for _, d := range k.dims[2:] {
		s.Neurons *= d
	}
	pdims = k.dims[2:]
	if k.shared {
		pdims = k.dims[len(k.dims)-1:]
	}
	p := 1
	for _, d := range pdims {
		p *= d
	}
	uniform := func(lo, hi float64) []float32 {
		v := make([]float32, p)
		for i := range v {
			v[i] = float32(lo + (hi-lo)*rng.Float64())
		}
		return v
	}
	c = fused.Coefficients{MuBar: 0.9, RhoBar: 0.98, Vth: 1, SurrogateWidth: 1, SurrogateScale: 0.3, DetachReset: k.detach}
	if k.adapt {
		c.EtaDt, c.GammaDt = uniform(0.02, 0.15), uniform(0.02, 0.15)
	}
	for range k.m {
		c.Beta = append(c.Beta, uniform(-0.9, 0.9))
		c.Lambda = append(c.Lambda, uniform(0.05, 0.95))
	}
	cur, cot = make([]float32, s.Batch*s.Steps*s.Neurons), make([]float32, s.Batch*s.Steps*s.Neurons)
	for i := range cur {
		cur[i] = float32(0.6 + 0.8*rng.NormFloat64())
		cot[i] = float32(rng.NormFloat64())
	}
	return
}

// reference runs scan.Forward and scan.Backward (graph code, held to autodiff of neuron.LayerFrom by
// package scan's tests) on the same inputs: the spikes, the cotangent of the current and the coefficient
// cotangents in the order EtaDt, GammaDt, Beta..., Lambda....
func reference(t *testing.T, b compute.Backend, k kernelCase, c fused.Coefficients, cur, cot []float32, pdims []int) (spikes, cotCur []float32, coefCots [][]float32) {
	t.Helper()
	var consts [][]float32
	if k.adapt {
		consts = append(consts, c.EtaDt, c.GammaDt)
	}
	consts = append(append(consts, c.Beta...), c.Lambda...)
	exec, err := NewExec(b, func(curN, cotN *Node) []*Node {
		g := curN.Graph()
		nc := neuron.Coefficients{MuBar: float64(c.MuBar), RhoBar: float64(c.RhoBar), Vth: float64(c.Vth),
			Surrogate: neuron.Surrogate{Width: float64(c.SurrogateWidth), Scale: float64(c.SurrogateScale)}, DetachReset: c.DetachReset}
		node := func(v []float32) *Node { return Const(g, tensors.FromFlatDataAndDimensions(v, pdims...)) }
		if k.adapt {
			nc.EtaDt, nc.GammaDt = node(c.EtaDt), node(c.GammaDt)
		}
		for j := range k.m {
			nc.Beta = append(nc.Beta, node(c.Beta[j]))
			nc.Lambda = append(nc.Lambda, node(c.Lambda[j]))
		}
		sp, _, _ := scan.Forward(nc, curN, nil)
		_, cc, cg := scan.Backward(nc, curN, nil, nil, cotN, nil)
		out := []*Node{sp, cc}
		if k.adapt {
			out = append(out, cg.EtaDt, cg.GammaDt)
		}
		return append(append(out, cg.Beta...), cg.Lambda...)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	outs, err := exec.Call(tensors.FromFlatDataAndDimensions(cur, k.dims...), tensors.FromFlatDataAndDimensions(cot, k.dims...))
	if err != nil {
		t.Fatal(err)
	}
	host := make([][]float32, len(outs))
	for i, o := range outs {
		host[i] = tensors.MustCopyFlatData[float32](o)
	}
	if len(host) != 2+len(consts) {
		t.Fatalf("%d reference outputs, want %d", len(host), 2+len(consts))
	}
	return host[0], host[1], host[2:]
}

// TestKernelMatchesScan holds Forward and Backward to package scan's graph code: identical spikes, and the
// cotangents of the current and of every coefficient within float32 rounding.
func TestKernelMatchesScan(t *testing.T) {
	for _, be := range xlatest.Backends(t) {
		for i, k := range kernelCases() {
			t.Run(be.Name+"/"+k.String(), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), 11))
				c, s, cur, cot, pdims := k.draw(rng)
				var drop []float32
				refCot := cot
				if k.drop {
					drop, refCot = make([]float32, s.Batch*s.Neurons), make([]float32, len(cot))
					for j := range drop {
						drop[j] = float32(2 * rng.IntN(2)) // p = 0.5: 0 or 1/(1 − p)
					}
					for j := range cot {
						b, n := j/(s.Steps*s.Neurons), j%s.Neurons
						refCot[j] = cot[j] * drop[b*s.Neurons+n]
					}
				}
				var dropout *fused.Dropout
				if drop != nil {
					dropout = &fused.Dropout{Shared: drop}
				}
				spikes, out := make([]float32, len(cur)), make([]float32, len(cur))
				counts, err := fused.Forward(&c, s, cur, nil, spikes)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := fused.Forward(&c, s, cur, dropout, out); err != nil {
					t.Fatal(err)
				}
				for j := range spikes {
					b, n := j/(s.Steps*s.Neurons), j%s.Neurons
					if want := spikes[j]; drop != nil && out[j] != want*drop[b*s.Neurons+n] || drop == nil && out[j] != want {
						t.Fatalf("output %d with dropout: %g, spike %g", j, out[j], spikes[j])
					}
					counts[b] -= int(spikes[j])
				}
				for b, left := range counts {
					if left != 0 {
						t.Fatalf("batch element %d: spike count off by %d", b, left)
					}
				}
				cotCur := make([]float32, len(cur))
				g, err := fused.Backward(&c, s, cur, cot, dropout, cotCur)
				if err != nil {
					t.Fatal(err)
				}
				wantSpikes, wantCotCur, wantCoef := reference(t, be.Backend, k, c, cur, refCot, pdims)
				fired := 0
				for j := range spikes {
					if spikes[j] != wantSpikes[j] {
						t.Fatalf("spike %d: %g, scan %g", j, spikes[j], wantSpikes[j])
					}
					fired += int(spikes[j])
				}
				if fired == 0 || fired == len(spikes) {
					t.Fatalf("%d of %d spikes: the case does not exercise the threshold", fired, len(spikes))
				}
				if err := closeTo(cotCur, wantCotCur, 1e-4); err != nil {
					t.Errorf("cotangent of the current: %v", err)
				}
				var got [][]float64
				if k.adapt {
					got = append(got, g.EtaDt, g.GammaDt)
				}
				got = append(append(got, g.Beta...), g.Lambda...)
				if len(got) != len(wantCoef) {
					t.Fatalf("%d coefficient cotangents, scan %d", len(got), len(wantCoef))
				}
				for j := range got {
					f := make([]float32, len(got[j]))
					for l, v := range got[j] {
						f[l] = float32(v)
					}
					if err := closeTo(f, wantCoef[j], 1e-4); err != nil {
						t.Errorf("coefficient cotangent %d: %v", j, err)
					}
				}
			})
		}
	}
}

// closeTo reports the first element where |a − b| > rel·max|b|.
func closeTo(a, b []float32, rel float64) error {
	if len(a) != len(b) {
		return fmt.Errorf("length %d vs %d", len(a), len(b))
	}
	scale := 0.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	if scale == 0 {
		return fmt.Errorf("reference is all zero")
	}
	for i := range a {
		if d := math.Abs(float64(a[i]) - float64(b[i])); d > rel*scale || math.IsNaN(d) {
			return fmt.Errorf("element %d: %g vs %g (scale %g)", i, a[i], b[i], scale)
		}
	}
	return nil
}

// TestBadInput checks that mismatched arrays and coefficients are errors, not panics.
func TestBadInput(t *testing.T) {
	s := fused.Shape{Batch: 2, Steps: 3, Neurons: 4}
	ok := make([]float32, 24)
	good := fused.Coefficients{MuBar: 0.9, Vth: 1, SurrogateWidth: 1, SurrogateScale: 0.3}
	cases := []struct {
		name string
		c    fused.Coefficients
		s    fused.Shape
		cur  []float32
	}{
		{"short current", good, s, make([]float32, 23)},
		{"zero batch", good, fused.Shape{Steps: 3, Neurons: 4}, nil},
		{"eta without gamma", fused.Coefficients{EtaDt: make([]float32, 4), SurrogateWidth: 1}, s, ok},
		{"beta without lambda", fused.Coefficients{Beta: [][]float32{make([]float32, 4)}, SurrogateWidth: 1}, s, ok},
		{"3 entries for 4 neurons", fused.Coefficients{EtaDt: make([]float32, 3), GammaDt: make([]float32, 3), SurrogateWidth: 1}, s, ok},
		{"zero surrogate width", fused.Coefficients{}, s, ok},
		{"order above MaxOrder", fused.Coefficients{Beta: make([][]float32, fused.MaxOrder+1), Lambda: make([][]float32, fused.MaxOrder+1), SurrogateWidth: 1}, s, ok},
	}
	for _, tc := range cases {
		if _, err := fused.Forward(&tc.c, tc.s, tc.cur, nil, make([]float32, len(tc.cur))); err == nil {
			t.Errorf("%s: Forward accepted it", tc.name)
		}
		if _, err := fused.Backward(&tc.c, tc.s, tc.cur, tc.cur, nil, make([]float32, len(tc.cur))); err == nil {
			t.Errorf("%s: Backward accepted it", tc.name)
		}
	}
	if _, err := fused.Backward(&good, s, ok, ok, &fused.Dropout{Shared: make([]float32, 7)}, make([]float32, 24)); err == nil {
		t.Error("a dropout mask of 7 values for [2, 4] accepted")
	}
	if _, err := fused.Forward(&good, s, ok, &fused.Dropout{Shared: make([]float32, 9)}, make([]float32, 24)); err == nil {
		t.Error("Forward accepted a dropout mask of 9 values for [2, 4]")
	}
	for _, p := range []float64{-0.5, 1, math.NaN()} {
		if _, err := fused.Forward(&good, s, ok, &fused.Dropout{Key: 1, P: p}, make([]float32, 24)); err == nil {
			t.Errorf("Forward accepted a per-step dropout probability %g", p)
		}
		if _, err := fused.Backward(&good, s, ok, ok, &fused.Dropout{Key: 1, P: p}, make([]float32, 24)); err == nil {
			t.Errorf("Backward accepted a per-step dropout probability %g", p)
		}
	}
	if _, err := fused.Forward(&good, s, ok, nil, make([]float32, 24)); err != nil {
		t.Errorf("a valid LIF layer: %v", err)
	}
}

// TestMain lowers XLA's LLVM optimization level for the reference graphs unless XLA_FLAGS is set: they
// compile faster, and the tests check values, not speed.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}

// TestBackwardReproducible runs Backward with 1 and with 3 goroutines: the cotangents must be identical to
// the bit (the batch is summed in a fixed order whatever goroutine ran which element), so a resumed training
// run repeats an uninterrupted one exactly.
func TestBackwardReproducible(t *testing.T) {
	k := kernelCase{adapt: true, m: 2, dims: []int{7, 30, 37}, drop: true}
	c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(5, 6)))
	run := func(procs int) ([]float32, fused.Grads) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		out := make([]float32, len(cur))
		g, err := fused.Backward(&c, s, cur, cot, &fused.Dropout{Key: 99, P: 0.4}, out)
		if err != nil {
			t.Fatal(err)
		}
		return out, g
	}
	out1, g1 := run(1)
	out3, g3 := run(3)
	if !slices.Equal(out1, out3) {
		t.Error("the cotangent of the current depends on the number of goroutines")
	}
	for j, pair := range [][2][]float64{{g1.EtaDt, g3.EtaDt}, {g1.GammaDt, g3.GammaDt}, {g1.Beta[0], g3.Beta[0]},
		{g1.Beta[1], g3.Beta[1]}, {g1.Lambda[0], g3.Lambda[0]}, {g1.Lambda[1], g3.Lambda[1]}} {
		if !slices.Equal(pair[0], pair[1]) {
			t.Errorf("coefficient cotangent %d depends on the number of goroutines", j)
		}
	}
}

// TestNonFinitePropagates checks that a NaN or infinite current gives NaN spikes from that step on (as
// neuron.Spike does), so that a diverged training run shows a NaN loss instead of silence.
func TestNonFinitePropagates(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		k := kernelCase{adapt: true, m: 1, dims: []int{1, 5, 9}}
		c, s, cur, _, _ := k.draw(rand.New(rand.NewPCG(1, 1)))
		for i := range cur {
			cur[i] = 0.5
		}
		cur[2*9+0], cur[2*9+8] = bad, bad // step 2 of a vector lane and of the scalar lane
		out := make([]float32, len(cur))
		if _, err := fused.Forward(&c, s, cur, nil, out); err != nil {
			t.Fatal(err)
		}
		for step := range 5 {
			for _, i := range []int{0, 8} {
				if v := out[step*9+i]; math.IsNaN(float64(v)) != (step >= 2) {
					t.Errorf("current %g at step 2, neuron %d: spike %g at step %d", bad, i, v, step)
				}
			}
			if v := out[step*9+4]; v != 0 && v != 1 {
				t.Errorf("an unaffected neuron spiked %g", v)
			}
		}
	}
}

// TestVectorEqualsScalar gives neuron 8 of 9 (run by the scalar code) the coefficients, current and spike
// cotangent of neuron 0 (run by the vector code where the build has it): every output must be identical to
// the bit, for M = 0 and 2, with and without adaptation and time-shared dropout. With per-step dropout, whose
// mask differs between the two neurons, both must equal to the bit the run without dropout with the mask
// applied by hand (stepReference), itself held to the lane copy. It runs with every ISA this build and CPU
// support (with AVX512 the 9 neurons run as one group of 8 and one scalar neuron).
func TestVectorEqualsScalar(t *testing.T) {
	for _, isa := range supportedISAs(t) {
		t.Run(isa.String(), func(t *testing.T) {
			useISA(t, isa)
			vectorEqualsScalar(t)
		})
	}
}

func vectorEqualsScalar(t *testing.T) {
	for _, k := range []kernelCase{
		{adapt: true, m: 2, dims: []int{2, 60, 9}, drop: true},
		{adapt: false, m: 0, dims: []int{2, 60, 9}},
		{adapt: true, m: 0, dims: []int{2, 60, 9}, detach: true},
	} {
		if !k.drop {
			c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(8, 9)))
			for _, p := range []float64{0.5, 0.2} {
				key := dropmask.Key(3, 17, 1)
				if err := matchStepReference(&c, s, cur, cot, key, p); err != nil {
					t.Errorf("%v, per-step dropout p = %g: %v", k, p, err)
				}
			}
		}
		c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(8, 9)))
		copyLane := func(a []float32, stride int) {
			for r := 0; r < len(a)/stride; r++ {
				a[r*stride+8] = a[r*stride]
			}
		}
		for _, a := range append(append([][]float32{c.EtaDt, c.GammaDt}, c.Beta...), c.Lambda...) {
			if a != nil {
				a[8] = a[0]
			}
		}
		copyLane(cur, 9)
		copyLane(cot, 9)
		var drop *fused.Dropout
		if k.drop {
			drop = &fused.Dropout{Shared: []float32{2, 0, 2, 2, 0, 2, 2, 2, 2, 0, 2, 2, 0, 2, 2, 2, 2, 0}}
			copyLane(drop.Shared, 9)
		}
		out, cotCur := make([]float32, len(cur)), make([]float32, len(cur))
		if _, err := fused.Forward(&c, s, cur, drop, out); err != nil {
			t.Fatal(err)
		}
		if _, err := fused.Backward(&c, s, cur, cot, drop, cotCur); err != nil {
			t.Fatal(err)
		}
		for r := 0; r < len(out)/9; r++ {
			if out[r*9] != out[r*9+8] || cotCur[r*9] != cotCur[r*9+8] {
				t.Fatalf("%v, row %d: neuron 0 gives %g, %g; neuron 8 %g, %g", k, r, out[r*9], cotCur[r*9], out[r*9+8], cotCur[r*9+8])
			}
		}
	}
}

// stepReference computes, without the kernel's per-step dropout, what Forward and Backward give with the
// per-step mask D = dropmask.Mask of key and p: the spikes of a run without dropout times D (Forward's
// output h), and Backward without dropout on the cotangent cot·D.
func stepReference(c *fused.Coefficients, s fused.Shape, cur, cot []float32, key uint32, p float64) (out, cotCur []float32, g fused.Grads, err error) {
	d := make([]float32, len(cur))
	dropmask.Fill(d, key, p, 0)
	out = make([]float32, len(cur))
	if _, err = fused.Forward(c, s, cur, nil, out); err != nil {
		return
	}
	masked := make([]float32, len(cot))
	for i := range out {
		out[i] *= d[i]
		masked[i] = cot[i] * d[i]
	}
	cotCur = make([]float32, len(cur))
	g, err = fused.Backward(c, s, cur, masked, nil, cotCur)
	return
}

// matchStepReference runs Forward and Backward with the per-step dropout of key and p and reports where they
// differ from stepReference by as much as a bit, and a mask that drops nothing or everything.
func matchStepReference(c *fused.Coefficients, s fused.Shape, cur, cot []float32, key uint32, p float64) error {
	wantOut, wantCot, wantG, err := stepReference(c, s, cur, cot, key, p)
	if err != nil {
		return err
	}
	drop := &fused.Dropout{Key: key, P: p}
	out, cotCur := make([]float32, len(cur)), make([]float32, len(cur))
	if _, err := fused.Forward(c, s, cur, drop, out); err != nil {
		return err
	}
	g, err := fused.Backward(c, s, cur, cot, drop, cotCur)
	if err != nil {
		return err
	}
	dropped := 0
	for i := range out {
		if math.Float32bits(out[i]) != math.Float32bits(wantOut[i]) {
			return fmt.Errorf("output %d (neuron %d): %g, reference %g", i, i%s.Neurons, out[i], wantOut[i])
		}
		if math.Float32bits(cotCur[i]) != math.Float32bits(wantCot[i]) {
			return fmt.Errorf("cotangent of current %d (neuron %d): %g, reference %g", i, i%s.Neurons, cotCur[i], wantCot[i])
		}
		if wantCot[i] == 0 {
			dropped++
		}
	}
	if p > 0 && (dropped == 0 || dropped == len(out)) {
		return fmt.Errorf("%d of %d cotangents are zero: the mask does not exercise dropout", dropped, len(out))
	}
	pairs := [][2][]float64{{g.EtaDt, wantG.EtaDt}, {g.GammaDt, wantG.GammaDt}}
	for j := range g.Beta {
		pairs = append(pairs, [2][]float64{g.Beta[j], wantG.Beta[j]}, [2][]float64{g.Lambda[j], wantG.Lambda[j]})
	}
	for j, pair := range pairs {
		if !slices.Equal(pair[0], pair[1]) {
			return fmt.Errorf("coefficient cotangent %d differs from the reference", j)
		}
	}
	return nil
}

// TestStepDropoutMatchesMask holds the kernel's per-step dropout, regenerated from (key, p) in the forward
// and in the backward, to the explicit mask [batch, T, N] of dropmask.Mask applied by hand: identical bits
// for the output, the cotangent of the current and the coefficient cotangents, on layers whose neurons run
// in the vector code and in the scalar code (N not a multiple of 8), with per-channel coefficients, the
// detached reset, and several keys (seeds, steps, layers) and probabilities.
func TestStepDropoutMatchesMask(t *testing.T) {
	cases := []kernelCase{
		{adapt: true, m: 2, dims: []int{3, 40, 70}},
		{adapt: false, m: 0, dims: []int{2, 25, 21}},
		{adapt: true, m: 1, dims: []int{2, 30, 3, 4, 5}, shared: true},
		{adapt: true, m: 3, dims: []int{4, 20, 16}, detach: true},
	}
	for ci, k := range cases {
		for _, key := range []struct {
			seed, step int64
			layer      int
			p          float64
		}{{1, 0, 0, 0.5}, {1, 1, 0, 0.5}, {1, 0, 1, 0.25}, {42, 1234567, 2, 0.65}} {
			name := fmt.Sprintf("%v/seed=%d/step=%d/layer=%d/p=%g", k, key.seed, key.step, key.layer, key.p)
			t.Run(name, func(t *testing.T) {
				c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(uint64(ci), 21)))
				want, err := dropmask.Mask(key.seed, key.step, key.layer, key.p, s.Batch, s.Steps, s.Neurons)
				if err != nil {
					t.Fatal(err)
				}
				d := make([]float32, len(want))
				dropmask.Fill(d, dropmask.Key(key.seed, key.step, key.layer), key.p, 0)
				if !slices.Equal(d, want) {
					t.Fatal("dropmask.Fill and dropmask.Mask disagree")
				}
				if err := matchStepReference(&c, s, cur, cot, dropmask.Key(key.seed, key.step, key.layer), key.p); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestStepDropoutZero checks that per-step dropout with p = 0 keeps every spike unscaled.
func TestStepDropoutZero(t *testing.T) {
	k := kernelCase{adapt: true, m: 1, dims: []int{2, 20, 19}}
	c, s, cur, cot, _ := k.draw(rand.New(rand.NewPCG(3, 4)))
	plain, out := make([]float32, len(cur)), make([]float32, len(cur))
	if _, err := fused.Forward(&c, s, cur, nil, plain); err != nil {
		t.Fatal(err)
	}
	if _, err := fused.Forward(&c, s, cur, &fused.Dropout{Key: 7}, out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain, out) {
		t.Error("per-step dropout with p = 0 changed the output")
	}
	plainCot, cotCur := make([]float32, len(cur)), make([]float32, len(cur))
	if _, err := fused.Backward(&c, s, cur, cot, nil, plainCot); err != nil {
		t.Fatal(err)
	}
	if _, err := fused.Backward(&c, s, cur, cot, &fused.Dropout{Key: 7}, cotCur); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plainCot, cotCur) {
		t.Error("per-step dropout with p = 0 changed the cotangent of the current")
	}
}
