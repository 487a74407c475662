package sim

import (
	"math"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
)

// TestCAdLIFTwinClamp checks the clamp of η and γ to [0, √(0.99·κmax)]: the largest values give κ at 0.99
// of the Jury bound (still a decaying response), negative values give no adaptation.
func TestCAdLIFTwinClamp(t *testing.T) {
	tw, err := LookupTwin("cadlif")
	if err != nil {
		t.Fatal(err)
	}
	l := sscLayer(0)
	kmax := theory.KappaMaxSemiImplicit(25, 5, 0.004)
	p, err := tw.Params(l, Vars{"eta": {1e4}, "gamma": {2e3}})
	if err != nil || !near(p.Eta*p.Gamma, 0.99*kmax) || p.Eta != p.Gamma {
		t.Fatalf("clamped params %+v, %v; want η = γ = √(0.99·%g)", p, err, kmax)
	}
	in := make([]float64, 4000)
	in[0] = 1
	p.Vth = math.MaxFloat64
	tr, err := Run(p, in)
	if err != nil {
		t.Fatal(err)
	}
	if tail := math.Abs(tr.VPre[len(in)-1]); !(tail < 1e-6) {
		t.Errorf("impulse response at the clamp does not decay: |v| = %g after %d steps", tail, len(in))
	}
	p, err = tw.Params(l, Vars{"eta": {-3}, "gamma": {12}})
	if err != nil || p.Eta != 0 || p.Gamma != 12 {
		t.Errorf("negative η: %+v, %v; want η = 0, γ = 12", p, err)
	}
}
