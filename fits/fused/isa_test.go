package fused_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/dropmask"
	"github.com/fits-snn/fits/fits/fused"
)

// supportedISAs returns the ISAs this build and CPU run, and logs the others.
func supportedISAs(t *testing.T) []fused.ISA {
	t.Helper()
	var out []fused.ISA
	for _, isa := range fused.ISAs() {
		if isa.Supported() {
			out = append(out, isa)
		} else {
			t.Logf("%v: not supported by this build or CPU, not tested here", isa)
		}
	}
	return out
}

// useISA makes the kernel run isa until the end of the test or benchmark.
func useISA(t testing.TB, isa fused.ISA) {
	t.Helper()
	prev, err := fused.SetISA(isa)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := fused.SetISA(prev); err != nil {
			t.Error(err)
		}
	})
}

// kernelRun is everything Forward and Backward return.
type kernelRun struct {
	out, cotCur []float32
	counts      []int
	g           fused.Grads
}

func runKernel(t *testing.T, c *fused.Coefficients, s fused.Shape, cur, cot []float32, drop *fused.Dropout) kernelRun {
	t.Helper()
	r := kernelRun{out: make([]float32, len(cur)), cotCur: make([]float32, len(cur))}
	var err error
	if r.counts, err = fused.Forward(c, s, cur, drop, r.out); err != nil {
		t.Fatal(err)
	}
	if r.g, err = fused.Backward(c, s, cur, cot, drop, r.cotCur); err != nil {
		t.Fatal(err)
	}
	return r
}

// sameBits reports the first element where a and b differ in their bits.
func sameBits(a, b []float32) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d vs %d values", len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return fmt.Errorf("element %d: %g vs %g", i, a[i], b[i])
		}
	}
	return nil
}

// TestISAsAgree runs Forward and Backward with every ISA this build and CPU support on layers whose neurons
// fall into 16-lane groups, 8-lane groups and scalar neurons (N = 45 = 2·16 + 8 + 5, 70 and 13), for M = 0…3,
// with and without adaptation, strict spikes, the detached reset, time-shared and per-step dropout, the
// backward kernels running all groups together, one at a time, or three at a time (for FS+TS of order 1
// also the Go kernels in place of the assembly ones): the outputs, spike
// counts, cotangents of the current and coefficient cotangents must equal the scalar code's to the bit.
func TestISAsAgree(t *testing.T) {
	isas := supportedISAs(t)
	if len(isas) == 1 {
		t.Log("only the scalar code runs here: nothing to compare")
	}
	type variant struct {
		k      kernelCase
		strict bool
		drop   string // "", "shared" or "step"
	}
	var vs []variant
	for m := range 4 {
		for _, adapt := range []bool{false, true} {
			vs = append(vs, variant{k: kernelCase{adapt: adapt, m: m, dims: []int{3, 37, 45}}, drop: "step"})
		}
	}
	vs = append(vs,
		variant{k: kernelCase{adapt: true, m: 2, dims: []int{2, 50, 70}}},
		variant{k: kernelCase{adapt: true, m: 2, dims: []int{2, 50, 70}}, drop: "shared"},
		variant{k: kernelCase{adapt: true, m: 1, dims: []int{2, 40, 45}, detach: true}, strict: true, drop: "step"},
		// FS+TS of order 1 without the per-step mask, shared mask, strict spikes, detached reset (the last
		// runs the Go kernels): the assembly kernels (forward16x2_amd64.s, adjoint16x2_amd64.s).
		variant{k: kernelCase{adapt: true, m: 1, dims: []int{3, 60, 70}}},
		variant{k: kernelCase{adapt: true, m: 1, dims: []int{2, 50, 53}}, strict: true, drop: "shared"},
		variant{k: kernelCase{adapt: true, m: 1, dims: []int{2, 30, 32}, detach: true}},
		variant{k: kernelCase{adapt: false, m: 3, dims: []int{4, 30, 13}}, strict: true},
		variant{k: kernelCase{adapt: true, m: 2, dims: []int{2, 25, 3, 16}, shared: true}, drop: "step"},
	)
	for i, v := range vs {
		t.Run(fmt.Sprintf("%v/strict=%v/drop=%s", v.k, v.strict, v.drop), func(t *testing.T) {
			c, s, cur, cot, _ := v.k.draw(rand.New(rand.NewPCG(uint64(i), 77)))
			c.StrictSpike = v.strict
			var drop *fused.Dropout
			switch v.drop {
			case "shared":
				rng := rand.New(rand.NewPCG(uint64(i), 78))
				drop = &fused.Dropout{Shared: make([]float32, s.Batch*s.Neurons)}
				for j := range drop.Shared {
					drop.Shared[j] = float32(2 * rng.IntN(2))
				}
			case "step":
				drop = &fused.Dropout{Key: dropmask.Key(int64(i), 3, 1), P: 0.3}
			}
			// The backward kernels in blocks of all groups (the default budget), of one group, and of three
			// groups of 8 neurons (one of 16).
			comps := 1
			if v.k.adapt {
				comps++
			}
			if v.k.m > 0 {
				comps += v.k.m + 1
			}
			budgets := []int{0, 1, 3 * 4 * s.Steps * comps * 8}
			if v.k.m == 1 && v.k.adapt {
				budgets = append(budgets, goAdjoint)
			}
			var want kernelRun
			for _, run := range isaRuns(isas, budgets) {
				isa := run.isa
				useISA(t, isa)
				var got kernelRun
				switch {
				case run.budget == goAdjoint:
					prev := fused.SetAssemblyKernels(false)
					got = runKernel(t, &c, s, cur, cot, drop)
					fused.SetAssemblyKernels(prev)
				case run.budget > 0:
					prev := fused.SetHistBudget(run.budget)
					got = runKernel(t, &c, s, cur, cot, drop)
					fused.SetHistBudget(prev)
				default:
					got = runKernel(t, &c, s, cur, cot, drop)
				}
				if isa == fused.Scalar {
					want = got
					fired := 0
					for _, n := range got.counts {
						fired += n
					}
					if fired == 0 || fired == s.Batch*s.Steps*s.Neurons {
						t.Fatalf("%d spikes of %d: the case does not exercise the threshold", fired, s.Batch*s.Steps*s.Neurons)
					}
					continue
				}
				if err := sameBits(got.out, want.out); err != nil {
					t.Errorf("%v output: %v", run, err)
				}
				if !slices.Equal(got.counts, want.counts) {
					t.Errorf("%v spike counts %v, scalar %v", run, got.counts, want.counts)
				}
				if err := sameBits(got.cotCur, want.cotCur); err != nil {
					t.Errorf("%v cotangent of the current: %v", run, err)
				}
				pairs := [][2][]float64{{got.g.EtaDt, want.g.EtaDt}, {got.g.GammaDt, want.g.GammaDt}}
				for j := range got.g.Beta {
					pairs = append(pairs, [2][]float64{got.g.Beta[j], want.g.Beta[j]}, [2][]float64{got.g.Lambda[j], want.g.Lambda[j]})
				}
				for j, p := range pairs {
					if !slices.Equal(p[0], p[1]) {
						t.Errorf("%v coefficient cotangent %d differs from the scalar code's", run, j)
					}
				}
			}
		})
	}
}

// isaRun is an ISA and the backward kernels' budget for the recomputed state (0: the default; goAdjoint:
// the Go kernels in place of the assembly kernels of order-1 layers).
type isaRun struct {
	isa    fused.ISA
	budget int
}

const goAdjoint = -1

func (r isaRun) String() string {
	switch r.budget {
	case 0:
		return r.isa.String()
	case goAdjoint:
		return r.isa.String() + " (Go kernels, no assembly)"
	}
	return fmt.Sprintf("%v (state budget %d bytes)", r.isa, r.budget)
}

// isaRuns returns the scalar run first, then every vector ISA with each budget.
func isaRuns(isas []fused.ISA, budgets []int) []isaRun {
	var out []isaRun
	for _, isa := range isas {
		if isa == fused.Scalar {
			out = append([]isaRun{{isa: isa}}, out...)
			continue
		}
		for _, b := range budgets {
			out = append(out, isaRun{isa, b})
		}
	}
	return out
}

// TestSetISA checks that SetISA refuses an ISA the build or CPU cannot run and changes nothing then, and
// that ParseISA reads every ISA's name.
func TestSetISA(t *testing.T) {
	for _, isa := range fused.ISAs() {
		got, err := fused.ParseISA(isa.String())
		if err != nil || got != isa {
			t.Errorf("ParseISA(%q) = %v, %v", isa.String(), got, err)
		}
		if isa.Supported() {
			continue
		}
		before := fused.ActiveISA()
		if _, err := fused.SetISA(isa); err == nil {
			t.Errorf("SetISA(%v) accepted an ISA this build or CPU cannot run", isa)
		}
		if fused.ActiveISA() != before {
			t.Errorf("a refused SetISA(%v) changed the active ISA", isa)
		}
	}
	if _, err := fused.ParseISA("sse9"); err == nil {
		t.Error(`ParseISA("sse9") accepted`)
	}
	if d := fused.DefaultISA(); !d.Supported() {
		t.Errorf("DefaultISA() = %v is not supported", d)
	}
	t.Logf("ISA by default here: %v", fused.DefaultISA())
}

// withISA runs f with the kernels' instruction set switched to isa, and switches it back.
func withISA(t *testing.T, isa fused.ISA, f func()) {
	t.Helper()
	prev, err := fused.SetISA(isa)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := fused.SetISA(prev); err != nil {
			t.Fatal(err)
		}
	}()
	f()
}
