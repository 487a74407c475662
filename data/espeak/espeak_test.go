package espeak

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/gsc"
	"github.com/fits-snn/fits/data/mel"
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

func TestLoadMelDataset(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed")
	}
	c := Config{Variants: []string{"m2"}, TestVariants: []string{"f2"}, Speeds: []int{150, 170}, Pitches: []int{45}, Binary: "espeak-ng", Labels: []int32{1, 15}}
	dir := t.TempDir()
	for _, f := range []gsc.FrontEnd{gsc.DefaultFrontEnd(), gsc.LogMelFrontEnd(mel.Default())} {
		d, err := LoadMelDataset(data.Options{Dir: dir}, c, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		if d.Name != MelName || d.Train.N != 4 || d.Test.N != 4 || d.Train.T != 100 || d.Train.F != 40 || d.Dt != 0.01 {
			t.Fatalf("%s: train %d test %d shape %d×%d dt %v", d.Name, d.Train.N, d.Test.N, d.Train.T, d.Train.F, d.Dt)
		}
		// Labels follow the manifest, whose WAV files hold 1 s of 16 kHz audio.
		clips, err := ReadManifest(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		ext, err := f.NewExtractor()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := cache.LoadSet(MelCachePath(dir, "test", f), 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, cl := range clips {
			if d.Test.Labels[i] != cl.Label {
				t.Fatalf("sample %d: label %d, manifest %d", i, d.Test.Labels[i], cl.Label)
			}
			x, err := gsc.ReadWAV(filepath.Join(dir, "wav", cl.Path), 16000)
			if err != nil {
				t.Fatal(err)
			}
			if len(x) != 16000 {
				t.Fatalf("%s: %d samples", cl.Path, len(x))
			}
			// The cache holds the features of exactly that audio.
			want := make([]float32, 100*40)
			if err := ext.Features(x, want); err != nil {
				t.Fatal(err)
			}
			got := raw.Example(i)
			for j := range want {
				if math.Abs(float64(got[j]-want[j])) > 1e-5 {
					t.Fatalf("%s: feature %d = %v, want %v", cl.Path, j, got[j], want[j])
				}
			}
		}
		if !f.StandardizeBands() {
			// The released recipe: each clip z-scored on its own, as loaded.
			for i := range d.Test.N {
				checkZScored(t, d.Test.Example(i))
			}
			continue
		}
		// Log-Mel training features are standardised per band.
		mean, std := gsc.BandStats(d.Train)
		for b := range mean {
			if math.Abs(mean[b]) > 1e-4 || (std[b] > 0 && math.Abs(std[b]-1) > 1e-3) {
				t.Fatalf("band %d: mean %v std %v after standardisation", b, mean[b], std[b])
			}
		}
	}
}

// checkZScored checks that x has mean 0 and unbiased standard deviation 1.
func checkZScored(t *testing.T, x []float32) {
	t.Helper()
	var m, ss float64
	for _, v := range x {
		m += float64(v)
	}
	m /= float64(len(x))
	for _, v := range x {
		ss += (float64(v) - m) * (float64(v) - m)
	}
	if sd := math.Sqrt(ss / float64(len(x)-1)); math.Abs(m) > 1e-4 || math.Abs(sd-1) > 1e-4 {
		t.Fatalf("clip features: mean %v, std %v; want 0 and 1", m, sd)
	}
}

func TestReadManifestErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "no clips"},
		{"one field", "train/a.wav\n", "path label"},
		{"label out of range", "train/a.wav 20\n", "not in 0..19"},
		{"label not a number", "train/a.wav x\n", "not in 0..19"},
		{"escaping path", "../a.wav 1\n", "relative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "wav"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ManifestPath(dir, "train"), []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadManifest(dir, "train")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "train.txt") {
				t.Errorf("error %v, want one naming the file and %q", err, tc.want)
			}
		})
	}
}

// TestCheckVoices: the default variants are voices espeak-ng has; a variant it does not have is named
// (espeak-ng would silently use its default voice).
func TestCheckVoices(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed")
	}
	c := DefaultConfig()
	if err := c.CheckVoices(context.Background()); err != nil {
		t.Fatalf("default variants: %v", err)
	}
	c.TestVariants = append(c.TestVariants, "nosuchvoice")
	if err := c.CheckVoices(context.Background()); err == nil || !strings.Contains(err.Error(), `no voice variant "nosuchvoice"`) {
		t.Errorf("unknown variant: %v", err)
	}
	c.Binary = "no-such-espeak"
	if err := c.CheckVoices(context.Background()); !errors.Is(err, ErrNoSynthesizer) {
		t.Errorf("missing synthesizer: %v", err)
	}
}
