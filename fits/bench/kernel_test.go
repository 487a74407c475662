package bench

import (
	"testing"

	"github.com/fits-snn/fits/fits/fused"
)

// TestMeasureKernel times a small layer: one timing per ISA this build and CPU run, in fused.ISAs' order,
// the default ISA named, the ratios the scalar median over the default ISA's, and the kernel's ISA as it
// was before.
func TestMeasureKernel(t *testing.T) {
	before := fused.ActiveISA()
	layer := KernelLayerOf(KernelSpec(24, 2))
	layer.Batch, layer.Time = 3, 20
	if !layer.Adapt || layer.M != 2 || layer.Width != 24 || layer.Dropout != KernelDropout {
		t.Fatalf("KernelLayerOf(KernelSpec(24, 2)) = %+v", layer)
	}
	m, err := MeasureKernel(layer, 3)
	if err != nil {
		t.Fatal(err)
	}
	if fused.ActiveISA() != before {
		t.Errorf("MeasureKernel left the kernel on %v, was %v", fused.ActiveISA(), before)
	}
	if m.DefaultISA != before.String() {
		t.Errorf("default ISA %q, the kernel runs %v", m.DefaultISA, before)
	}
	var want []string
	for _, isa := range fused.ISAs() {
		if isa.Supported() {
			want = append(want, isa.String())
		}
	}
	if len(m.Timings) != len(want) {
		t.Fatalf("%d timings for the ISAs %v", len(m.Timings), want)
	}
	var scalar, def KernelTiming
	for i, tm := range m.Timings {
		if tm.ISA != want[i] || !(tm.ForwardMs > 0) || !(tm.BackwardMs > 0) {
			t.Errorf("timing %d: %+v", i, tm)
		}
		if tm.ISA == "scalar" {
			scalar = tm
		}
		if tm.ISA == m.DefaultISA {
			def = tm
		}
	}
	if m.ForwardVsScalar != scalar.ForwardMs/def.ForwardMs || m.BackwardVsScalar != scalar.BackwardMs/def.BackwardMs {
		t.Errorf("ratios %g, %g for scalar %+v and %s %+v", m.ForwardVsScalar, m.BackwardVsScalar, scalar, m.DefaultISA, def)
	}
	for _, bad := range []KernelLayer{{Batch: 0, Time: 1, Width: 1}, {Batch: 1, Time: 1, Width: 1, M: fused.MaxOrder + 1}} {
		if _, err := MeasureKernel(bad, 1); err == nil {
			t.Errorf("MeasureKernel accepted the layer %+v", bad)
		}
	}
	if _, err := MeasureKernel(layer, 0); err == nil {
		t.Error("MeasureKernel accepted 0 calls")
	}
}
