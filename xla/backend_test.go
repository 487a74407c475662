package xla

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// availableConfigs lists the backend configurations usable on this machine.
func availableConfigs(t *testing.T) []string {
	configs := []string{SimpleGoConfig}
	plugins := Plugins()
	if _, ok := plugins["cpu"]; ok {
		configs = append(configs, "xla:cpu")
	} else if os.Getenv("FITS_REQUIRE_XLA") == "1" {
		t.Fatalf("FITS_REQUIRE_XLA=1 but no XLA CPU PJRT plugin was found (plugins: %v); run `make setup`", plugins)
	} else {
		t.Logf("XLA CPU PJRT plugin not found: comparing SimpleGo only (run `make setup`)")
	}
	if _, ok := plugins["cuda"]; ok && HasNVIDIAGPU() {
		configs = append(configs, "xla:cuda")
	}
	return configs
}

// smallGraph computes y = Σ tanh(x·w + b)² and its gradients with respect to w and b:
// x [2, 3], w [3, 4], b [4].
func smallGraph(x, w, b *Node) []*Node {
	h := Tanh(Add(DotProduct(x, w), Reshape(b, 1, -1)))
	y := ReduceAllSum(Square(h))
	grads := Gradient(y, w, b)
	return []*Node{y, grads[0], grads[1]}
}

// reference computes smallGraph in float64 by hand.
func reference(x [2][3]float64, w [3][4]float64, b [4]float64) (y float64, dw [3][4]float64, db [4]float64) {
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			z := b[j]
			for k := 0; k < 3; k++ {
				z += x[i][k] * w[k][j]
			}
			h := math.Tanh(z)
			y += h * h
			g := 2 * h * (1 - h*h) // d(h²)/dz
			db[j] += g
			for k := 0; k < 3; k++ {
				dw[k][j] += g * x[i][k]
			}
		}
	}
	return
}

func TestSameGraphOnEveryBackend(t *testing.T) {
	x := [2][3]float64{{0.5, -1, 2}, {1.5, 0.25, -0.75}}
	w := [3][4]float64{{0.1, -0.2, 0.3, 0.05}, {0.4, 0.1, -0.3, 0.2}, {-0.1, 0.2, 0.15, -0.25}}
	bias := [4]float64{0.1, -0.1, 0.2, 0}
	wantY, wantDW, wantDB := reference(x, w, bias)

	toF32 := func(rows ...[]float64) []float32 {
		var out []float32
		for _, r := range rows {
			for _, v := range r {
				out = append(out, float32(v))
			}
		}
		return out
	}
	for _, cfg := range availableConfigs(t) {
		t.Run(strings.ReplaceAll(cfg, ":", "_"), func(t *testing.T) {
			backend, err := New(cfg)
			if err != nil {
				t.Fatalf("New(%q): %v", cfg, err)
			}
			defer backend.Finalize()
			exec, err := NewExec(backend, smallGraph)
			if err != nil {
				t.Fatal(err)
			}
			// Fresh tensors per backend: a tensor caches its buffer on the backend it was used on.
			xT := tensors.FromFlatDataAndDimensions(toF32(x[0][:], x[1][:]), 2, 3)
			wT := tensors.FromFlatDataAndDimensions(toF32(w[0][:], w[1][:], w[2][:]), 3, 4)
			bT := tensors.FromFlatDataAndDimensions(toF32(bias[:]), 4)
			out, err := exec.Call(xT, wT, bT)
			if err != nil {
				t.Fatalf("exec on %s: %v", cfg, err)
			}
			y := tensors.ToScalar[float32](out[0])
			dw := tensors.MustCopyFlatData[float32](out[1])
			db := tensors.MustCopyFlatData[float32](out[2])
			const tol = 1e-5
			if math.Abs(float64(y)-wantY) > tol {
				t.Errorf("y = %v, want %v", y, wantY)
			}
			for k := 0; k < 3; k++ {
				for j := 0; j < 4; j++ {
					if got := float64(dw[k*4+j]); math.Abs(got-wantDW[k][j]) > tol {
						t.Errorf("dy/dw[%d][%d] = %v, want %v", k, j, got, wantDW[k][j])
					}
				}
			}
			for j := 0; j < 4; j++ {
				if got := float64(db[j]); math.Abs(got-wantDB[j]) > tol {
					t.Errorf("dy/db[%d] = %v, want %v", j, got, wantDB[j])
				}
			}
		})
	}
}

func TestChoose(t *testing.T) {
	t.Setenv(EnvBackend, "")
	if c := Choose("go:ops_sequential"); c.Config != "go:ops_sequential" || !strings.Contains(c.Reason, "--backend") {
		t.Errorf("explicit config not respected: %+v", c)
	}
	t.Setenv(EnvBackend, "xla:cpu")
	if c := Choose(""); c.Config != "xla:cpu" || !strings.Contains(c.Reason, EnvBackend) {
		t.Errorf("$%s not respected: %+v", EnvBackend, c)
	}
	t.Setenv(EnvBackend, "")
	c := Choose("")
	_, hasCPU := Plugins()["cpu"]
	switch {
	case HasNVIDIAGPU() && Plugins()["cuda"] != "":
		if c.Config != "xla:cuda" {
			t.Errorf("GPU and CUDA plugin present but chose %+v", c)
		}
	case hasCPU:
		if c.Config != "xla:cpu" {
			t.Errorf("CPU plugin present but chose %+v", c)
		}
	default:
		if c.Config != SimpleGoConfig {
			t.Errorf("no plugin but chose %+v", c)
		}
	}
}

func TestNewUnknownBackendIsAnError(t *testing.T) {
	if _, err := New("no-such-backend"); err == nil {
		t.Fatal("expected an error for an unknown backend")
	}
}

// Compile-time check that New returns the GoMLX interface.
var _ func(string) (compute.Backend, error) = New
