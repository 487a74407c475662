package bench

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/xla/xlatest"
	"github.com/gomlx/compute"
)

// TestMain lowers XLA's LLVM optimization level for the equality tests unless XLA_FLAGS is set (they
// check values, not speed); benchmarks (-bench) keep XLA's default.
func TestMain(m *testing.M) {
	bench := false
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.bench") {
			bench = true
		}
	}
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok && !bench {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}

// xlaBackend returns the XLA CPU backend (package xlatest). The variants' equality is checked on XLA only:
// SimpleGo lacks the Pad that the gradient of DynamicSlice needs.
func xlaBackend(tb testing.TB) compute.Backend { return xlatest.XLA(tb) }

// smallSpec is the kernel network scaled down: B = 4, T = 40, 12 inputs, two layers of 8, 5 classes.
func smallSpec(kind neuron.Kind, order int) Spec {
	s := KernelSpec(8, order)
	s.Neuron = neuron.DefaultConfig(kind, order)
	s.Batch, s.Time, s.Inputs, s.Classes = 4, 40, 12, 5
	s.InputRate, s.InputScale = 0.3, 3
	return s
}

type result struct {
	loss  float64
	grads map[string][]float32
}

func runOnce(t *testing.T, b compute.Backend, spec Spec, v Variant, chunk int) result {
	t.Helper()
	r, err := NewRunner(b, spec, v, Options{Chunk: chunk})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Two iterations: the second must reproduce the first (nothing carried over).
	var res result
	for it := range 2 {
		if err := r.Iterate(); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		grads, err := r.Gradients()
		if err != nil {
			t.Fatal(err)
		}
		if it == 1 {
			if r.Loss() != res.loss {
				t.Errorf("%s: second iteration's loss %v differs from the first's %v", v, r.Loss(), res.loss)
			}
			break
		}
		res = result{r.Loss(), grads}
	}
	return res
}

// TestVariantsAgree checks that every variant gives the same loss and the same gradients (within float32 rounding of differently ordered sums) as the unrolled graph, on small shapes.
func TestVariantsAgree(t *testing.T) {
	b := xlaBackend(t)
	for _, tc := range []struct {
		kind  neuron.Kind
		order int
	}{{neuron.FS, 0}, {neuron.FSTS, 2}, {neuron.LIF, 0}} {
		t.Run(fmt.Sprintf("%s-M%d", tc.kind, tc.order), func(t *testing.T) {
			spec := smallSpec(tc.kind, tc.order)
			if tc.kind == neuron.LIF {
				spec.Classes = 0 // the spike-sum loss of the Open Neuromorphic benchmark
				spec.Widths = []int{8}
			}
			ref := runOnce(t, b, spec, Unrolled, 0)
			if tc.kind == neuron.LIF && ref.loss == 0 {
				t.Fatal("no hidden spikes: the test input is too weak to compare anything")
			}
			if len(ref.grads) == 0 {
				t.Fatal("no gradients")
			}
			for _, c := range []struct {
				v     Variant
				chunk int
			}{{Stepwise, 0}, {Chunked, 8}, {Chunked, 40}} {
				got := runOnce(t, b, spec, c.v, c.chunk)
				name := fmt.Sprintf("%s(K=%d)", c.v, c.chunk)
				if math.Abs(got.loss-ref.loss) > 1e-5*math.Max(1, math.Abs(ref.loss)) {
					t.Errorf("%s: loss %v, unrolled %v", name, got.loss, ref.loss)
				}
				if len(got.grads) != len(ref.grads) {
					t.Fatalf("%s: %d gradients, unrolled %d", name, len(got.grads), len(ref.grads))
				}
				for vname, want := range ref.grads {
					g, ok := got.grads[vname]
					if !ok || len(g) != len(want) {
						t.Fatalf("%s: gradient of %s missing or of another size", name, vname)
					}
					scale := 0.0
					for _, w := range want {
						scale = math.Max(scale, math.Abs(float64(w)))
					}
					if scale == 0 {
						t.Errorf("%s: the unrolled gradient of %s is all zero", name, vname)
					}
					for i := range want {
						if d := math.Abs(float64(g[i] - want[i])); d > 1e-4*scale+1e-7 {
							t.Fatalf("%s: d/d%s[%d] = %g, unrolled %g (scale %g)", name, vname, i, g[i], want[i], scale)
						}
					}
				}
			}
		})
	}
}

func TestSpecValidate(t *testing.T) {
	good := KernelSpec(64, 2)
	if err := good.Validate(); err != nil {
		t.Fatalf("kernel spec: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"batch", func(s *Spec) { s.Batch = 0 }, "input shape"},
		{"time", func(s *Spec) { s.Time = -1 }, "input shape"},
		{"no layers", func(s *Spec) { s.Widths = nil }, "no hidden layer"},
		{"width", func(s *Spec) { s.Widths = []int{64, 0} }, "width 0"},
		{"one class", func(s *Spec) { s.Classes = 1 }, "classes"},
		{"rate", func(s *Spec) { s.InputRate = 1.5 }, "input rate"},
		{"neuron", func(s *Spec) { s.Neuron.Dt = 0 }, ""},
	} {
		s := KernelSpec(64, 2)
		tc.edit(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestKernelAndOpenNeuromorphicSpecs(t *testing.T) {
	k := KernelSpec(128, 0)
	if k.Batch != 128 || k.Time != 250 || k.Inputs != 140 || k.Classes != 35 || len(k.Widths) != 2 || k.Widths[1] != 128 {
		t.Errorf("kernel spec %+v", k)
	}
	if k.Neuron.Kind != neuron.FS || KernelSpec(64, 1).Neuron.Kind != neuron.FSTS || KernelSpec(64, 2).Neuron.Order != 2 {
		t.Error("kernel spec: M = 0 must be fs and M ≥ 1 fsts of order M")
	}
	o := OpenNeuromorphicSpec(16384, neuron.LIF, 0)
	if o.Batch != 16 || o.Time != 500 || o.Inputs != 16384 || len(o.Widths) != 1 || o.Widths[0] != 16384 || o.Classes != 0 || o.InputRate != 0 {
		t.Errorf("open-neuromorphic spec %+v", o)
	}
}

func TestVariantsAndChunks(t *testing.T) {
	for _, v := range Variants() {
		got, err := ParseVariant(strings.ToUpper(string(v)))
		if err != nil || got != v {
			t.Errorf("ParseVariant(%q) = %v, %v", v, got, err)
		}
	}
	if _, err := ParseVariant("nosuch"); err == nil || !strings.Contains(err.Error(), "stepwise") {
		t.Errorf("ParseVariant(nosuch): %v", err)
	}
	if _, err := NewRunner(nil, smallSpec(neuron.FS, 0), Chunked, Options{Chunk: 7}); err == nil || !strings.Contains(err.Error(), "divide") {
		t.Errorf("chunk 7 of T = 40: %v", err)
	}
}

func TestMedianAndVmHWM(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(tc.v); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
	got, err := parseVmHWM(strings.NewReader("Name:\tfits\nVmPeak:\t  999 kB\nVmHWM:\t  2048 kB\nVmRSS:\t 1 kB\n"))
	if err != nil || got != 2048*1024 {
		t.Errorf("parseVmHWM = %d, %v; want %d", got, err, 2048*1024)
	}
	if _, err := parseVmHWM(strings.NewReader("VmRSS: 1 kB\n")); err == nil {
		t.Error("parseVmHWM without a VmHWM line: no error")
	}
	if rss, err := PeakRSS(); err == nil && rss <= 0 {
		t.Errorf("PeakRSS = %d", rss)
	}
}

// BenchmarkIteration measures one training iteration on the paper's kernel-table shapes (B = 128,
// T = 250, 140 inputs, 35 classes, two hidden layers) for each variant, W = 64 and 128, M = 0 and 2. The
// first iteration (graph building and compilation) is reported apart as compile-s.
//
//	go test ./fits/bench -run '^$' -bench Iteration -benchtime 3x
//	go test ./fits/bench -run '^$' -bench 'Iteration/W128-M2/chunked' -benchtime 5x
func BenchmarkIteration(b *testing.B) {
	for _, wm := range [][2]int{{64, 0}, {64, 2}, {128, 0}, {128, 2}} {
		for _, v := range Variants() {
			b.Run(fmt.Sprintf("W%d-M%d/%s", wm[0], wm[1], v), func(b *testing.B) {
				backend := xlaBackend(b)
				r, err := NewRunner(backend, KernelSpec(wm[0], wm[1]), v, Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				start := time.Now()
				if err := r.Iterate(); err != nil {
					b.Fatal(err)
				}
				first := time.Since(start)
				start = time.Now()
				if err := r.Iterate(); err != nil {
					b.Fatal(err)
				}
				second := time.Since(start)
				b.ResetTimer()
				for b.Loop() {
					if err := r.Iterate(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(max(0, (first-second).Seconds()), "compile-s")
			})
		}
	}
}
