package golden

import (
	"math"
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/dropmask"
)

func checkMeta(t *testing.T, m Meta) {
	t.Helper()
	if m.Generator != "peers/official_golden.py" || m.Torch == "" || m.Numpy == "" || m.Seed == 0 || m.DType != "float64" {
		t.Errorf("meta %+v: want the generator, both versions, a seed and float64", m)
	}
}

func TestNeurons(t *testing.T) {
	f, err := NeuronSet()
	if err != nil {
		t.Fatal(err)
	}
	checkMeta(t, f.Meta)
	if f.Steps != 2000 {
		t.Errorf("%d steps per case, want 2000", f.Steps)
	}
	seen := map[[2]any]int{}
	gsc := 0
	for _, c := range f.Cases {
		seen[[2]any{c.M, c.TSMix}]++
		if c.TauM == f.Constants["gsc"].TauM && c.TauA == f.Constants["gsc"].TauA && c.Dt == f.Constants["gsc"].Dt {
			gsc++
		}
		if !(c.FHz >= 1 && c.FHz <= 50) || c.Vth != 1 {
			t.Errorf("%s: f* = %g Hz, Vth = %g", c.Name, c.FHz, c.Vth)
		}
		if c.Radius >= 1 || c.Margin < 1e-6 || c.Margin < f.MinMargin {
			t.Errorf("%s: radius %g, margin %g (file's least %g)", c.Name, c.Radius, c.Margin, f.MinMargin)
		}
		count, least := 0, math.Inf(1)
		for k, s := range c.Spikes {
			if s != 0 && s != 1 {
				t.Fatalf("%s: spike %d at step %d", c.Name, s, k)
			}
			count += s
			least = min(least, math.Abs(c.VMixed[k]-c.Vth))
			// The spike decides by Ṽ (strictly above Vth for "official"), and V is Ṽ less the reset.
			if (s == 1) != (c.VMixed[k] > c.Vth) {
				t.Fatalf("%s: step %d: Ṽ = %v with spike %d", c.Name, k, c.VMixed[k], s)
			}
			if c.V[k] != c.VMixed[k]-float64(s)*c.Vth {
				t.Fatalf("%s: step %d: V = %v, Ṽ = %v, spike %d", c.Name, k, c.V[k], c.VMixed[k], s)
			}
		}
		if count != c.SpikeCount || count < 20 || least != c.Margin {
			t.Errorf("%s: %d spikes (recorded %d), margin %g (recorded %g)", c.Name, count, c.SpikeCount, least, c.Margin)
		}
		if c.M >= 2 && c.OtherMixSpikesDiffer == 0 {
			t.Errorf("%s: the other nesting gives the same spikes: the case does not tell them apart", c.Name)
		}
		if c.M <= 1 && c.OtherMixSpikesDiffer != 0 {
			t.Errorf("%s: M = %d yet the nestings differ in %d spikes", c.Name, c.M, c.OtherMixSpikesDiffer)
		}
	}
	for m := range 4 {
		for _, mix := range []string{"official", "paper"} {
			if seen[[2]any{m, mix}] == 0 {
				t.Errorf("no case with M = %d, ts_mix %s", m, mix)
			}
		}
	}
	if gsc == 0 {
		t.Error("no case at GSC's constants")
	}
}

// The first neuron by hand: M = 0 needs only Eq. 5 and Eq. 6, so this recomputes it independently.
func TestNeuronFirstStepsByHand(t *testing.T) {
	cases, err := Neurons()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.M != 0 {
			continue
		}
		mu, rho, dt := 1/c.TauM, 1/c.TauA, c.Dt
		w := 2 * math.Pi * c.FHz / rho
		q := (1 + w*w) * (1 + w*w) / ((1 + mu/rho) * (1 + mu/rho))
		kappa := rho * (rho + mu) * (math.Sqrt(1+q) - 1)
		edt := math.Sqrt(kappa) * dt
		v, a := 0.0, 0.0
		for k := range 200 {
			v0 := (1-mu*dt)*v - edt*a + c.Input[k]
			a = (1-rho*dt)*a + edt*v0
			v = v0
			if v0 > c.Vth {
				v -= c.Vth
			}
			if math.Abs(v0-c.VMixed[k]) > 1e-12 || math.Abs(a-c.A[k]) > 1e-12 {
				t.Fatalf("%s: step %d: Ṽ %v a %v by hand, %v %v in the file", c.Name, k, v0, a, c.VMixed[k], c.A[k])
			}
		}
	}
}

func TestGuard(t *testing.T) {
	g, err := Guard()
	if err != nil {
		t.Fatal(err)
	}
	checkMeta(t, g.Meta)
	if g.Safety != 0.98 || math.Abs(g.FSafeHz-76.42) > 0.005 || math.Abs(g.FRawCap-math.Log(g.FSafeHz)) > 1e-15 {
		t.Errorf("safety %g, f_safe %g Hz, cap %g", g.Safety, g.FSafeHz, g.FRawCap)
	}
	want := map[string]float64{"shd": 76.42, "gsc": 30.57, "smnist": 0.3106}
	for _, c := range g.Caps {
		if w, ok := want[c.Name]; !ok || math.Abs(c.FSafeHz-w) > 0.005*w {
			t.Errorf("cap %s: %g Hz, want %g", c.Name, c.FSafeHz, w)
		}
	}
	if len(g.Steps) < 10 || g.ProjectedTotal == 0 || g.Steps[len(g.Steps)-1].Count != g.ProjectedTotal {
		t.Fatalf("%d steps, %d projections", len(g.Steps), g.ProjectedTotal)
	}
	count, masked, moved := 0, 0, 0
	for i, s := range g.Steps {
		if i > 0 && !slices.Equal(s.FRawBefore, g.Steps[i-1].FRawAfter) {
			t.Fatalf("step %d does not start where step %d ended", s.Step, i-1)
		}
		for j := range s.Grad {
			onCap := s.FRawBefore[j] >= g.FRawCap && s.Grad[j] < 0
			if s.Masked[j] != onCap || (s.Masked[j] && s.GradMasked[j] != 0) || (!s.Masked[j] && s.GradMasked[j] != s.Grad[j]) {
				t.Errorf("step %d entry %d: f_raw %v grad %v masked %v -> %v", s.Step, j, s.FRawBefore[j], s.Grad[j], s.Masked[j], s.GradMasked[j])
			}
			if s.FRawAfter[j] > g.FRawCap {
				t.Errorf("step %d entry %d: f_raw %v above the cap %v", s.Step, j, s.FRawAfter[j], g.FRawCap)
			}
			if s.Projected[j] && (s.FRawAfter[j] != g.FRawCap || s.ExpAvg[j] < 0) {
				t.Errorf("step %d entry %d: projected to %v with exp_avg %v", s.Step, j, s.FRawAfter[j], s.ExpAvg[j])
			}
			if s.Projected[j] {
				count++
			}
			if s.Masked[j] {
				masked++
			}
			if s.FRawAfter[j] < s.FRawBefore[j] && s.FRawBefore[j] == g.FRawCap {
				moved++ // left the cap downwards
			}
		}
		if s.Count != count {
			t.Errorf("step %d: count %d, projected entries so far %d", s.Step, s.Count, count)
		}
	}
	if masked == 0 || moved == 0 {
		t.Errorf("%d masked gradients, %d departures from the cap: the case exercises too little", masked, moved)
	}
}

func TestSteps(t *testing.T) {
	f, err := StepSet()
	if err != nil {
		t.Fatal(err)
	}
	checkMeta(t, f.Meta)
	if f.MinMargin < 1e-3 || f.MarginRequired != 1e-3 {
		t.Errorf("least margin %g, required %g", f.MinMargin, f.MarginRequired)
	}
	count := map[string]int{}
	for _, c := range f.Cases {
		count["m"+string(rune('0'+c.M))]++
		count[c.Readout]++
		count[c.Target]++
		if c.Dropout > 0 {
			count["dropout"]++
		} else {
			count["no dropout"]++
		}
		if c.TSMix != "official" || c.SurrogateAlpha != 2 || c.MinMargin < f.MinMargin {
			t.Errorf("%s: ts_mix %s, alpha %g, margin %g", c.Name, c.TSMix, c.SurrogateAlpha, c.MinMargin)
		}
		if !(c.Loss > 0) || math.IsInf(c.Loss, 0) {
			t.Errorf("%s: loss %g", c.Name, c.Loss)
		}
		for _, r := range c.SpikeRates {
			if r < 0.05 || r > 0.3 {
				t.Errorf("%s: spike rate %g", c.Name, r)
			}
		}
		for name, g := range c.Grads {
			if slices.Max(g.Data) == 0 && slices.Min(g.Data) == 0 {
				t.Errorf("%s: the gradient of %s is zero", c.Name, name)
			}
		}
		// The masks are those of fits/dropmask.
		for l, name := range []string{"layer0", "layer1"} {
			want, err := dropmask.Mask(c.MaskSeed, c.MaskStep, l, c.Dropout, c.Batch, c.Time, c.Hidden)
			if err != nil {
				t.Fatal(err)
			}
			got := c.Masks[name].Data
			zeros := 0
			for i := range want {
				if got[i] != float64(want[i]) {
					t.Fatalf("%s: mask %s element %d is %v, dropmask gives %v", c.Name, name, i, got[i], want[i])
				}
				if got[i] == 0 {
					zeros++
				}
			}
			if (c.Dropout > 0) != (zeros > 0) {
				t.Errorf("%s: p = %g with %d dropped elements", c.Name, c.Dropout, zeros)
			}
		}
	}
	for _, key := range []string{"m0", "m1", "m2", "m3", "sum", "mean", "log-hz", "omega", "dropout", "no dropout"} {
		if count[key] < 2 {
			t.Errorf("%d cases of %s, want at least 2", count[key], key)
		}
	}
}
