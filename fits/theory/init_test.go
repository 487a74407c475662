package theory

import (
	"math"
	"testing"
)

func TestLogSpacedHz(t *testing.T) {
	f, err := LogSpacedHz(1, 50, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 5 || f[0] != 1 || f[4] != 50 {
		t.Fatalf("got %v", f)
	}
	ratio := f[1] / f[0]
	for i := 1; i < len(f); i++ {
		if relErr(f[i]/f[i-1], ratio) > 1e-12 {
			t.Errorf("not geometric: %v", f)
		}
	}
	if relErr(ratio, math.Pow(50, 0.25)) > 1e-12 {
		t.Errorf("ratio %g, want 50^(1/4)", ratio)
	}
	if one, _ := LogSpacedHz(2, 30, 1); len(one) != 1 || one[0] != 2 {
		t.Errorf("n=1 gave %v", one)
	}
	for _, bad := range []struct {
		lo, hi float64
		n      int
	}{{0, 50, 3}, {-1, 50, 3}, {10, 5, 3}, {1, 50, 0}, {1, math.Inf(1), 3}, {math.NaN(), 5, 2}} {
		if _, err := LogSpacedHz(bad.lo, bad.hi, bad.n); err == nil {
			t.Errorf("LogSpacedHz(%g, %g, %d) succeeded", bad.lo, bad.hi, bad.n)
		}
	}
}
