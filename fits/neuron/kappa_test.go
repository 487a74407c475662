package neuron

import (
	"math"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestKappaGraphMatchesTheory holds the GoMLX versions of the inverse maps to package theory's float64
// closed forms: Theorem 1's κ*(Ω*) (Eq. 5) and the DT-exact κ̄(ω) of Theorem 2, in float64 (to 1e-12) and
// float32 (to 1e-6, relative).
func TestKappaGraphMatchesTheory(t *testing.T) {
	for _, k := range []theory.Constants{theory.SSC, theory.GSC} {
		mu, rho := k.Mu(), k.Rho()
		var omegaCT, omegaDT []float64
		for f := 0.0; f <= 75; f += 0.5 { // Hz, 0 included (κ* → the threshold κ0)
			omegaCT = append(omegaCT, theory.RadPerSecFromHz(f))
		}
		for w := 0.01; w < 3.1; w += 0.01 { // rad/sample
			omegaDT = append(omegaDT, w)
		}
		wantCT := make([]float64, len(omegaCT))
		for i, w := range omegaCT {
			wantCT[i] = theory.KappaStar(mu, rho, w)
		}
		wantDT := make([]float64, len(omegaDT))
		for i, w := range omegaDT {
			kb, err := theory.KappaBarForTarget(k.MuBar(), k.RhoBar(), w)
			if err != nil {
				t.Fatalf("theory.KappaBarForTarget(ω = %g): %v", w, err)
			}
			wantDT[i] = kb
		}
		for _, tb := range testBackends(t) {
			exec := MustNewExec(tb.b, func(ct, dt *Node) []*Node {
				return []*Node{KappaStar(ct, mu, rho), KappaBarDTExact(dt, k.MuBar(), k.RhoBar())}
			})
			check := func(name string, got, want []float64, tol float64) {
				for i := range want {
					if math.Abs(got[i]-want[i]) > tol*math.Abs(want[i]) {
						t.Errorf("%s %s (τm=%g): entry %d = %.17g, theory %.17g", tb.name, name, k.TauM, i, got[i], want[i])
						return
					}
				}
			}
			out := exec.MustCall(omegaCT, omegaDT)
			check("float64 κ*", tensors.MustCopyFlatData[float64](out[0]), wantCT, 1e-12)
			check("float64 κ̄ DT-exact", tensors.MustCopyFlatData[float64](out[1]), wantDT, 1e-12)

			out = exec.MustCall(toFloat32(omegaCT), toFloat32(omegaDT))
			check("float32 κ*", fromFloat32(tensors.MustCopyFlatData[float32](out[0])), wantCT, 1e-6)
			check("float32 κ̄ DT-exact", fromFloat32(tensors.MustCopyFlatData[float32](out[1])), wantDT, 1e-5)
		}
	}
}

func toFloat32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func fromFloat32(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
