package paper

import (
	"math"
	"testing"
)

// TestKernelRuntimesAreTheTable holds the twelve cells against the paper's table (tab:app_kernel_runtime)
// as printed, and checks that each printed speedup is PyTorch/Triton rounded to two decimals.
func TestKernelRuntimesAreTheTable(t *testing.T) {
	want := map[[2]int][2]float64{
		{64, 0}: {426.7, 8.3}, {64, 1}: {627.1, 7.3}, {64, 2}: {861.8, 6.7},
		{128, 0}: {521.8, 7.3}, {128, 1}: {704.2, 12.8}, {128, 2}: {876.6, 10.4},
		{256, 0}: {537.8, 17.3}, {256, 1}: {933.3, 6.9}, {256, 2}: {1099.9, 20.6},
		{512, 0}: {1079.4, 33.5}, {512, 1}: {1385.9, 25.0}, {512, 2}: {1437.2, 33.0},
	}
	cells := KernelRuntimes()
	if len(cells) != len(want) {
		t.Fatalf("%d cells, want %d", len(cells), len(want))
	}
	seen := map[[2]int]bool{}
	for _, c := range cells {
		key := [2]int{c.Width, c.Order}
		w, ok := want[key]
		if !ok || seen[key] {
			t.Errorf("unexpected or repeated cell W=%d M=%d", c.Width, c.Order)
			continue
		}
		seen[key] = true
		if c.PyTorchMs != w[0] || c.TritonMs != w[1] {
			t.Errorf("W=%d M=%d: %v / %v ms, the paper prints %v / %v", c.Width, c.Order, c.PyTorchMs, c.TritonMs, w[0], w[1])
		}
		// The paper's speedups are computed from unrounded times, so allow the rounding of both inputs.
		ratio := c.PyTorchMs / c.TritonMs
		lo := (c.PyTorchMs - 0.05) / (c.TritonMs + 0.05)
		hi := (c.PyTorchMs + 0.05) / (c.TritonMs - 0.05)
		if c.Speedup < lo-0.005 || c.Speedup > hi+0.005 {
			t.Errorf("W=%d M=%d: printed speedup %.2f outside [%.2f, %.2f] (ratio %.2f)", c.Width, c.Order, c.Speedup, lo, hi, ratio)
		}
		got, ok := KernelRuntimeFor(c.Width, c.Order)
		if !ok || got != c {
			t.Errorf("KernelRuntimeFor(%d, %d) = %v, %v", c.Width, c.Order, got, ok)
		}
	}
	if _, ok := KernelRuntimeFor(32, 0); ok {
		t.Error("KernelRuntimeFor(32, 0) found a cell the paper does not have")
	}
}

// TestFrameworkRuntimes checks the 16k-neuron totals quoted with the benchmark (spyx fp32 0.076 s,
// SpikingJelly CuPy 0.118 s, Norse torch.compile 0.110 s, snnTorch 3.08 s per iteration).
func TestFrameworkRuntimes(t *testing.T) {
	want := map[string]float64{"spyx fp32": 0.076, "SpikingJelly CuPy": 0.118, "Norse torch.compile": 0.110, "snnTorch": 3.08}
	n := 0
	for _, f := range FrameworkRuntimes() {
		if f.ForwardS <= 0 || f.BackwardS <= 0 {
			t.Errorf("%s %d: non-positive time", f.Framework, f.Neurons)
		}
		if f.Neurons != 16384 {
			continue
		}
		w, ok := want[f.Framework]
		if !ok {
			t.Errorf("unexpected framework %q", f.Framework)
			continue
		}
		n++
		digits := 3.0
		if w >= 1 {
			digits = 2
		}
		// One unit of the quoted last digit: the quoted Norse total (0.110 s) rounds 0.1095 s up.
		if math.Abs(f.TotalS()-w) > math.Pow(10, -digits) {
			t.Errorf("%s: %.4f s, published total %.3f s", f.Framework, f.TotalS(), w)
		}
	}
	if n != len(want) {
		t.Errorf("%d frameworks at 16k neurons, want %d", n, len(want))
	}
}
