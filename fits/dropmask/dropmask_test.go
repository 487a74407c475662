package dropmask

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// The generator's first values, fixed: the PyTorch peer (peers/) computes the same numbers with numpy.
func Example() {
	key := Key(0, 0, 0)
	fmt.Printf("key %#08x\n", key)
	for i := range uint32(3) {
		fmt.Printf("bits(%d) %#08x\n", i, Bits(key, i))
	}
	m, _ := Mask(7, 3, 1, 0.5, 1, 2, 4)
	fmt.Println(m)
	// Output:
	// key 0xf3501b79
	// bits(0) 0xe713f8a8
	// bits(1) 0xf6b6a460
	// bits(2) 0x0e6d0bb2
	// [0 0 0 2 0 2 2 0]
}

func TestThreshold(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want uint32
	}{{0, 0}, {0.5, 1 << 31}, {0.25, 1 << 30}, {math.Nextafter(1, 0), math.MaxUint32}} {
		if got := Threshold(c.p); got != c.want {
			t.Errorf("Threshold(%g) = %d, want %d", c.p, got, c.want)
		}
	}
}

// The kept fraction is 1 − p within a few standard deviations, for each of several keys, and masks of
// different steps and layers differ.
func TestKeptFraction(t *testing.T) {
	const n = 200000
	for _, p := range []float64{0.1, 0.5, 0.65} {
		for step := range int64(3) {
			m, err := Mask(1, step, 0, p, 4, 250, 200)
			if err != nil {
				t.Fatal(err)
			}
			kept := 0
			for _, v := range m {
				switch v {
				case Scale(p):
					kept++
				case 0:
				default:
					t.Fatalf("mask value %g is neither 0 nor %g", v, Scale(p))
				}
			}
			frac, sd := float64(kept)/n, math.Sqrt(p*(1-p)/n)
			if math.Abs(frac-(1-p)) > 5*sd {
				t.Errorf("p = %g step %d: kept %.4f, want %.4f ± %.4f", p, step, frac, 1-p, 5*sd)
			}
		}
	}
	if Key(1, 0, 0) == Key(1, 1, 0) || Key(1, 0, 0) == Key(1, 0, 1) || Key(1, 0, 0) == Key(2, 0, 0) {
		t.Error("keys of different seeds, steps or layers coincide")
	}
}

// Neighbouring elements are not correlated: the fraction of equal keep decisions of element pairs (i, i+1)
// is that of independent draws.
func TestNeighboursIndependent(t *testing.T) {
	const n, p = 100000, 0.5
	m, _ := Mask(3, 5, 2, p, 1, 1, n+1)
	same := 0
	for i := range n {
		if (m[i] == 0) == (m[i+1] == 0) {
			same++
		}
	}
	if frac := float64(same) / n; math.Abs(frac-0.5) > 5*math.Sqrt(0.25/n) {
		t.Errorf("neighbours agree in %.4f of pairs, want 0.5", frac)
	}
}

func TestMaskErrors(t *testing.T) {
	for _, p := range []float64{-0.1, 1, math.NaN()} {
		if _, err := Mask(0, 0, 0, p, 1, 1, 1); err == nil {
			t.Errorf("p = %g accepted", p)
		}
	}
	if _, err := Mask(0, 0, 0, 0.5, 1<<16, 1<<16, 2); err == nil {
		t.Error("a mask of 2^33 elements accepted")
	}
}

// TestMaskGraphEqualsFill draws masks with MaskGraph on XLA CPU and holds them to Mask, element for
// element, for several keys, probabilities and shapes (a conv block's [batch, T, C, H, W] among them).
func TestMaskGraphEqualsFill(t *testing.T) {
	backend := xlatest.XLA(t)
	for _, c := range []struct {
		seed, step int64
		layer      int
		p          float64
		dims       []int
	}{
		{1, 0, 0, 0.3, []int{4, 7, 5}},
		{7, 3, 1, 0.5, []int{1, 2, 4}},
		{42, 123456, 2, 0.25, []int{3, 11, 2, 3, 3}},
		{-5, 9, 0, 0, []int{2, 3, 4}},
		{9, 1 << 40, 3, 0.9, []int{16, 25, 33}},
	} {
		n := 1
		for _, d := range c.dims[2:] {
			n *= d
		}
		want, err := Mask(c.seed, c.step, c.layer, c.p, c.dims[0], c.dims[1], n)
		if err != nil {
			t.Fatal(err)
		}
		key := Key(c.seed, c.step, c.layer)
		out, err := graph.CallOnce(backend, func(k *graph.Node) *graph.Node { return MaskGraph(k, c.p, c.dims...) }, key)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tensors.CopyFlatData[float32](out)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("seed %d step %d layer %d p %g %v: the graph's mask differs from Fill's", c.seed, c.step, c.layer, c.p, c.dims)
		}
		kept := 0
		for _, v := range got {
			if v != 0 {
				kept++
			}
		}
		if c.p > 0 && (kept == 0 || kept == len(got)) {
			t.Errorf("%v: %d of %d kept: the case tests nothing", c.dims, kept, len(got))
		}
	}
}
