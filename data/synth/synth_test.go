package synth

import (
	"math"
	"slices"
	"testing"

	"github.com/fits-snn/fits/data"
)

// testConfig is a task with fewer examples, so the statistical tests stay fast.
func testConfig(c Config) Config {
	c.Train, c.Val, c.Test = 256, 16, 16
	return c
}

func TestDeterministic(t *testing.T) {
	cfg := SmallConfig()
	a, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range []struct {
		name string
		x, y *data.Set
	}{{"train", a.Train, b.Train}, {"val", a.Val, b.Val}, {"test", a.Test, b.Test}} {
		if !slices.Equal(sp.x.Dense(), sp.y.Dense()) || !slices.Equal(sp.x.Labels, sp.y.Labels) {
			t.Errorf("%s split differs between two generations with the same seed", sp.name)
		}
	}
	if slices.Equal(a.Train.Example(0), a.Test.Example(0)) {
		t.Error("train and test splits start with the same example")
	}
	cfg.Seed++
	c, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Train.Dense(), c.Train.Dense()) {
		t.Error("a different seed gave the same training inputs")
	}
}

func TestShapesAndValues(t *testing.T) {
	binary := SmallConfig()
	binary.Afferents = 1
	odd := SmallConfig()
	odd.Channels, odd.Groups, odd.Classes = 30, 4, 3
	odd.Train, odd.Val, odd.Test = 9, 0, 6
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"small", SmallConfig()}, {"binary", binary}, {"odd", odd}} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Generate(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			if d.Classes != tc.cfg.Classes || d.Dt != tc.cfg.Dt || d.Name != Name {
				t.Errorf("dataset header %q %d classes dt=%g", d.Name, d.Classes, d.Dt)
			}
			for _, sp := range []struct {
				set *data.Set
				n   int
			}{{d.Train, tc.cfg.Train}, {d.Val, tc.cfg.Val}, {d.Test, tc.cfg.Test}} {
				if sp.set.N != sp.n || sp.set.T != tc.cfg.T || sp.set.F != tc.cfg.Channels {
					t.Fatalf("split [N=%d, T=%d, F=%d], want [%d, %d, %d]",
						sp.set.N, sp.set.T, sp.set.F, sp.n, tc.cfg.T, tc.cfg.Channels)
				}
				counts := make([]int, tc.cfg.Classes)
				for _, l := range sp.set.Labels {
					counts[l]++
				}
				if sp.n > 0 && slices.Max(counts)-slices.Min(counts) > 1 {
					t.Errorf("unbalanced classes %v", counts)
				}
				for _, v := range sp.set.Dense() {
					if v < 0 || v > float32(tc.cfg.Afferents) || v != float32(math.Round(float64(v))) {
						t.Fatalf("value %g is not a count in [0, %d]", v, tc.cfg.Afferents)
					}
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"one class", func(c *Config) { c.Classes = 1 }},
		{"too many classes", func(c *Config) { c.Groups, c.Classes = 3, 7 }},
		{"above nyquist", func(c *Config) { c.FreqMax = 130 }},
		{"probability above one", func(c *Config) { c.BaseRate = 200 }},
		{"onset after end", func(c *Config) { c.Onsets = []float64{2} }},
		{"depth", func(c *Config) { c.MaxDepth = 1.5 }},
		{"no afferents", func(c *Config) { c.Afferents = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			if _, err := Generate(c); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestEqualMeanRates checks that the mean spike count per bin of every channel group is the same in every
// class: BaseRate·Dt·Afferents, within a statistical tolerance.
func TestEqualMeanRates(t *testing.T) {
	cfg := testConfig(DefaultConfig())
	task, err := NewTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := task.Sample(cfg.Train, streamTrain)
	want := cfg.BaseRate * cfg.Dt * float64(cfg.Afferents)
	sum := make([][]float64, cfg.Classes)
	n := make([][]float64, cfg.Classes)
	for c := range sum {
		sum[c] = make([]float64, cfg.Groups)
		n[c] = make([]float64, cfg.Groups)
	}
	for i := range set.N {
		c := set.Labels[i]
		ex := set.Example(i)
		for k, v := range ex {
			g := task.GroupOf[k%cfg.Channels]
			sum[c][g] += float64(v)
			n[c][g]++
		}
	}
	for c := range sum {
		for g := range sum[c] {
			mean := sum[c][g] / n[c][g]
			// 32 examples × 250 bins × 20 channels: the sampling error is well below 3%.
			if math.Abs(mean-want) > 0.03*want {
				t.Errorf("class %d group %d (%.1f Hz): mean count %.4f per bin, want %.4f ± 3%%",
					c, g, task.Codes[c].Freq[g], mean, want)
			}
		}
	}
}

// TestClassSpectra checks that, in every class, the summed spike count of each channel group has its
// dominant frequency (peak of the mean periodogram, 1/(T·Dt) = 1 Hz resolution) at the frequency the class
// code assigns to that group, and that classes differ.
func TestClassSpectra(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"default", DefaultConfig()}, {"long", LongConfig()}, {"shallow", ShallowConfig()}} {
		t.Run(tc.name, func(t *testing.T) { testClassSpectra(t, testConfig(tc.cfg)) })
	}
}

func testClassSpectra(t *testing.T, cfg Config) {
	task, err := NewTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := task.Sample(cfg.Train, streamTrain)
	df := 1 / (float64(cfg.T) * cfg.Dt)
	nBins := int(1.5*cfg.FreqMax/df) + 1 // look up to 1.5·FreqMax
	for c := range cfg.Classes {
		for g := range cfg.Groups {
			power := make([]float64, nBins)
			x := make([]float64, cfg.T)
			for i := range set.N {
				if int(set.Labels[i]) != c {
					continue
				}
				ex := set.Example(i)
				clear(x)
				for k := range cfg.T {
					for ch := range cfg.Channels {
						if task.GroupOf[ch] == g {
							x[k] += float64(ex[k*cfg.Channels+ch])
						}
					}
				}
				addPeriodogram(power, x)
			}
			peak := df * float64(argmax(power[1:])+1)
			f := task.Codes[c].Freq[g]
			if math.Abs(peak-f) > math.Max(1.01*df, 0.1*f) {
				t.Errorf("class %d group %d: spectral peak at %.1f Hz, code frequency %.2f Hz", c, g, peak, f)
			}
		}
	}
	differ := false
	for c := 1; c < cfg.Classes; c++ {
		if !slices.Equal(task.Codes[c].Freq, task.Codes[0].Freq) {
			differ = true
		}
	}
	if !differ {
		t.Error("all classes have the same code")
	}
}

// TestCodesArePermutations checks that every class uses the same multiset of frequencies, depths and onsets,
// so the classes cannot be told apart by total modulation power.
func TestCodesArePermutations(t *testing.T) {
	task, err := NewTask(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	sorted := func(v []float64) []float64 { s := slices.Clone(v); slices.Sort(s); return s }
	for c, code := range task.Codes {
		if !slices.Equal(sorted(code.Freq), task.Frequencies) {
			t.Errorf("class %d frequencies %v, want a permutation of %v", c, code.Freq, task.Frequencies)
		}
		if !slices.Equal(sorted(code.Depth), sorted(task.Codes[0].Depth)) ||
			!slices.Equal(sorted(code.Onset), sorted(task.Codes[0].Onset)) {
			t.Errorf("class %d depths/onsets are not a permutation of class 0's", c)
		}
		// Depths equalize the amplitude after the low-pass: depth·gain is the same for every group.
		for g := range code.Freq {
			a := code.Depth[g] * lowPassGain(code.Freq[g], task.Config.LowPassTau)
			b := code.Depth[0] * lowPassGain(code.Freq[0], task.Config.LowPassTau)
			if math.Abs(a-b) > 1e-12 {
				t.Errorf("class %d group %d: low-passed amplitude %g, group 0 has %g", c, g, a, b)
			}
		}
	}
	if f := task.Frequencies; math.Abs(f[0]-5) > 1e-12 || math.Abs(f[len(f)-1]-40) > 1e-9 {
		t.Errorf("frequencies %v, want 5 to 40 Hz", f)
	}
}

func TestRegistered(t *testing.T) {
	if !slices.Contains(data.Names(), Name) || !slices.Contains(data.Names(), LongName) {
		t.Fatalf("%q or %q not registered: %v", Name, LongName, data.Names())
	}
	long, err := data.Load(LongName, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if long.Name != LongName || long.Train.T != 250 || long.Dt != 0.004 {
		t.Errorf("%s: name %q, %d bins of %g s", LongName, long.Name, long.Train.T, long.Dt)
	}
	shallow, err := data.Load(ShallowName, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	def, err := data.Load(Name, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if shallow.Name != ShallowName || shallow.Train.N != 512 || shallow.Train.T != 100 || !slices.Equal(shallow.Train.Labels, def.Train.Labels) {
		t.Errorf("%s: name %q, %d examples of %d bins; want the default task's 512 examples and labels", ShallowName, shallow.Name, shallow.Train.N, shallow.Train.T)
	}
	// Same codes, phases and mean rates, shallower modulation: the spike counts differ, their totals barely.
	var same, sumS, sumD int
	sx, dx := shallow.Train.Dense(), def.Train.Dense()
	for i, v := range sx {
		if v == dx[i] {
			same++
		}
		sumS += int(v)
		sumD += int(dx[i])
	}
	if same == len(dx) || math.Abs(float64(sumS-sumD)) > 0.01*float64(sumD) {
		t.Errorf("%s: %d of %d counts equal to the default task's, total %d vs %d", ShallowName, same, len(dx), sumS, sumD)
	}
	d, err := data.Load(Name, data.Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.N != SmallConfig().Train || d.Train.F != 140 {
		t.Errorf("small synthetic: %d examples of %d channels", d.Train.N, d.Train.F)
	}
}

// addPeriodogram adds |DFT(x − mean)|² at bins 0..len(power)-1 to power.
func addPeriodogram(power, x []float64) {
	mean := 0.0
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	n := len(x)
	for b := range power {
		var re, im float64
		for k, v := range x {
			s, c := math.Sincos(-2 * math.Pi * float64((b*k)%n) / float64(n))
			re += (v - mean) * c
			im += (v - mean) * s
		}
		power[b] += re*re + im*im
	}
}

func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func TestLowPassGain(t *testing.T) {
	for _, tc := range []struct{ f, tau, want float64 }{
		{0, 0.04, 1},
		{1 / (2 * math.Pi * 0.04), 0.04, 1 / math.Sqrt2}, // corner frequency
		{40, 0.04, 1 / math.Sqrt(1+math.Pow(2*math.Pi*40*0.04, 2))},
		{10, 0, 1},
	} {
		if got := lowPassGain(tc.f, tc.tau); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("lowPassGain(%g Hz, %g s) = %g, want %g", tc.f, tc.tau, got, tc.want)
		}
	}
}
