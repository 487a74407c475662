package espeak

import (
	"context"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/shd"
)

func TestResampleTone(t *testing.T) {
	const f = 1000.0
	x := make([]float64, 22050)
	for i := range x {
		x[i] = math.Sin(2 * math.Pi * f * float64(i) / 22050)
	}
	y := Resample(x, 22050, 16000)
	if len(y) != 16000 {
		t.Fatalf("%d samples", len(y))
	}
	// Away from the edges the output is the same tone sampled at 16 kHz.
	for i := 200; i < 15800; i++ {
		want := math.Sin(2 * math.Pi * f * float64(i) / 16000)
		if math.Abs(y[i]-want) > 0.01 {
			t.Fatalf("sample %d: %v, want %v", i, y[i], want)
		}
	}
	// A tone above the new Nyquist frequency (8 kHz) is removed.
	for i := range x {
		x[i] = math.Sin(2 * math.Pi * 10000 * float64(i) / 22050)
	}
	y = Resample(x, 22050, 16000)
	var e float64
	for _, v := range y[200:15800] {
		e += v * v
	}
	if rms := math.Sqrt(e / 15600); rms > 0.02 {
		t.Errorf("10 kHz tone leaks with RMS %v after resampling to 16 kHz", rms)
	}
}

func TestCochleaTone(t *testing.T) {
	co, err := NewCochlea(CochleaConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []float64{300, 1200, 4000} {
		x := make([]float64, 16000)
		for i := 2000; i < 14000; i++ {
			x[i] = 0.3 * math.Sin(2*math.Pi*f*float64(i)/16000)
		}
		times, units, err := co.Encode(x, 1)
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]int, co.Channels())
		for i, u := range units {
			counts[u]++
			if i > 0 && times[i] < times[i-1] {
				t.Fatal("spike times not sorted")
			}
			// A 16 ms frame centred within 8 ms of the tone sees it.
			if times[i] < 0.125-0.0085 || times[i] > 0.875+0.0085 {
				t.Fatalf("spike at %.4f s outside the tone (0.125–0.875 s)", times[i])
			}
		}
		best := 0
		for c := range counts {
			if counts[c] > counts[best] {
				best = c
			}
		}
		cf := co.CentreFrequencies()[best]
		if math.Abs(cf-f) > 0.05*f {
			t.Errorf("%g Hz tone: most spikes in channel %d (centre %.0f Hz)", f, best, cf)
		}
		// Full drive for 0.75 s at 60 Hz: about 45 spikes in the loudest channel.
		if counts[best] < 40 || counts[best] > 47 {
			t.Errorf("%g Hz: %d spikes in the loudest channel, want about 45", f, counts[best])
		}
	}
}

func TestPlan(t *testing.T) {
	c := DefaultConfig()
	tr, _ := c.Plan("train")
	te, _ := c.Plan("test")
	if len(tr) != 480 || len(te) != 160 || te[0].Speaker != 6 {
		t.Fatalf("plan sizes %d/%d", len(tr), len(te))
	}
	if k := Keys(); len(k) != Classes || k[0] != "english zero" || k[19] != "german neun" {
		t.Fatalf("keys %v", k)
	}
	if _, err := c.Plan("valid"); err == nil {
		t.Error("unknown split accepted")
	}
	c.Binary = "no-such-synthesizer"
	if err := Generate(context.Background(), c, t.TempDir(), nil); err != ErrNoSynthesizer {
		t.Errorf("missing synthesizer: %v", err)
	}
}

func TestGenerateSmall(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed")
	}
	c := Config{Variants: []string{"m3"}, TestVariants: []string{"f3"}, Speeds: []int{160}, Pitches: []int{50}, Binary: "espeak-ng", Seed: 3, Labels: []int32{2, 13}}
	dir := t.TempDir()
	if err := Generate(context.Background(), c, dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, split := range []string{"train", "test"} {
		p := filepath.Join(dir, FileName(split))
		f, err := shd.Open(p, Classes)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := f.Read(0, f.Len())
		if err != nil {
			t.Fatal(err)
		}
		if f.Len() != 2 || f.Labels()[0] != 2 || f.Labels()[1] != 13 {
			t.Fatalf("%s: %d samples", split, f.Len())
		}
		n := len(sp.Times) / f.Len()
		t.Logf("%s: %d spikes per utterance on average", split, n)
		if n < 1000 || n > 30000 {
			t.Errorf("%s: %d spikes per utterance", split, n)
		}
		f.Close()
		if _, err := shd.Convert(p, filepath.Join(dir, split+".fitsds"), "espeak", split, Classes, shd.DefaultBinning(), nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadDataset(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed")
	}
	c := Config{Variants: []string{"m1"}, TestVariants: []string{"f1"}, Speeds: []int{150}, Pitches: []int{40}, Binary: "espeak-ng", Labels: []int32{0, 10, 19}}
	d, err := LoadDataset(data.Options{Dir: t.TempDir()}, c, shd.DefaultBinning(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Train.N != 3 || d.Test.N != 3 || d.Train.F != 140 || d.Train.T != 250 {
		t.Fatalf("train %d test %d shape %d×%d", d.Train.N, d.Test.N, d.Train.T, d.Train.F)
	}
}
