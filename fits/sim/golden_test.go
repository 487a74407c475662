package sim

import (
	"math"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/internal/golden"
)

// TestGoldenNeurons holds Algorithm 1 in float64 to the independent PyTorch implementation of the released
// code's semantics (internal/golden, peers/official_golden.py): every single-neuron case, M = 0–3, both
// nestings, SHD/SSC and GSC constants, gives the same spikes at all 2000 steps and the same Ṽ, V and a to
// 1e-11 relative to each trace's scale.
func TestGoldenNeurons(t *testing.T) {
	cases, err := golden.Neurons()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			nesting := theory.OfficialNesting
			if c.TSMix == "paper" {
				nesting = theory.PaperNesting
			}
			p, err := Config{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt, FStar: c.FHz, Beta: c.Beta, Lambda: c.Lambda, Vth: c.Vth,
				Nesting: nesting}.Params()
			if err != nil {
				t.Fatal(err)
			}
			tr, err := RunStates(p, c.Input)
			if err != nil {
				t.Fatal(err)
			}
			mismatches := 0
			for k := range c.Input {
				if tr.Spikes[k] != c.Spikes[k] {
					mismatches++
				}
			}
			if mismatches > 0 {
				t.Fatalf("%d spike mismatches in %d steps", mismatches, len(c.Input))
			}
			for _, tc := range []struct {
				name      string
				got, want []float64
			}{{"v_mixed", tr.VPre, c.VMixed}, {"v", tr.V, c.V}, {"a", tr.A, c.A}} {
				scale := 0.0
				for _, x := range tc.want {
					scale = math.Max(scale, math.Abs(x))
				}
				for k := range tc.want {
					if d := math.Abs(tc.got[k] - tc.want[k]); d > 1e-11*math.Max(1, scale) {
						t.Fatalf("%s[%d] = %.17g, golden %.17g", tc.name, k, tc.got[k], tc.want[k])
					}
				}
			}
		})
	}
}
