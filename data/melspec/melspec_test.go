package melspec

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSlaneyScale(t *testing.T) {
	for _, c := range []struct{ hz, mel float64 }{{0, 0}, {200.0 / 3, 1}, {1000, 15}, {6400, 42}} {
		if got := HzToMel(c.hz); math.Abs(got-c.mel) > 1e-12 {
			t.Errorf("HzToMel(%v) = %v, want %v", c.hz, got, c.mel)
		}
		if got := MelToHz(c.mel); math.Abs(got-c.hz) > 1e-9 {
			t.Errorf("MelToHz(%v) = %v, want %v", c.mel, got, c.hz)
		}
	}
}

// TestFilterbankArea checks the Slaney normalisation: each triangle, integrated over frequency, has area
// 1 (its peak 2 / (right − left) times half its base), up to the sampling of the bins.
func TestFilterbankArea(t *testing.T) {
	c := Released()
	w := Filterbank(c)
	if len(w) != 40 || len(w[0]) != 241 {
		t.Fatalf("filterbank %d×%d, want 40×241", len(w), len(w[0]))
	}
	binHz := float64(c.SampleRate) / float64(c.NFFT)
	for b := 10; b < 40; b++ { // the wider filters, where the bin sampling is fine enough
		var area float64
		for _, v := range w[b] {
			area += v * binHz
		}
		if math.Abs(area-1) > 0.1 {
			t.Errorf("band %d: area %.3f, want about 1", b, area)
		}
	}
	for k, v := range w[0] {
		if f := float64(k) * binHz; v != 0 && (f <= 40 || f > 4000) {
			t.Errorf("band 0 weighs bin %d (%.0f Hz) outside 40–4000 Hz", k, f)
		}
	}
}

func TestFramesAndPadding(t *testing.T) {
	c := Released()
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]int{16000: 101, 15999: 100, 6880: 44, 1: 1, 160: 2} {
		if got := e.NumFrames(n); got != want {
			t.Errorf("NumFrames(%d) = %d, want %d", n, got, want)
		}
	}
	// A 0.25 s tone: 26 frames of spectrum, then 74 frames of 0 dB before the z-score.
	x := make([]float64, 4000)
	for i := range x {
		x[i] = 0.5 * math.Sin(2*math.Pi*1000*float64(i)/16000)
	}
	c.ZScore = false
	e, _ = New(c)
	dst := make([]float32, 4000)
	if err := e.Features(x, dst); err != nil {
		t.Fatal(err)
	}
	peak := float32(math.Inf(-1))
	for i, v := range dst {
		if i >= 26*40 && v != 0 {
			t.Fatalf("padded value %d = %v, want 0", i, v)
		}
		if v < -80-1e-9 || v > 0 {
			t.Fatalf("value %v outside [-80, 0] dB", v)
		}
		peak = max(peak, v)
	}
	if peak != 0 {
		t.Errorf("peak %v dB, want 0 (ref = max)", peak)
	}
}

func TestZScoreUnbiased(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	zscore(x)
	// mean 2.5, unbiased std sqrt(5/3).
	s := math.Sqrt(5.0 / 3)
	for i, want := range []float64{-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s} {
		if math.Abs(x[i]-want) > 1e-12 {
			t.Fatalf("zscore: %v", x)
		}
	}
	flat := []float64{3, 3, 3}
	zscore(flat)
	if flat[0] != 3 {
		t.Errorf("a constant matrix was changed: %v", flat)
	}
}

func TestSilenceAndErrors(t *testing.T) {
	e, err := New(Released())
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 4000)
	// Silence: every value is amin, 0 dB relative to itself; std 0, left unnormalised.
	if err := e.Features(make([]float64, 16000), dst); err != nil {
		t.Fatal(err)
	}
	for _, v := range dst {
		if v != 0 {
			t.Fatalf("silence gives %v, want 0", v)
		}
	}
	if err := e.Features(nil, dst); err == nil {
		t.Error("an empty signal: no error")
	}
	if err := e.Features(make([]float64, 100), dst[:10]); err == nil {
		t.Error("a short buffer: no error")
	}
	bad := Released()
	bad.NFFT = 481
	if _, err := New(bad); err == nil {
		t.Error("odd n_fft accepted")
	}
	bad = Released()
	bad.FMax = 9000
	if _, err := New(bad); err == nil {
		t.Error("fmax above Nyquist accepted")
	}
	bad = Released()
	bad.Bands = 200
	if _, err := New(bad); err == nil {
		t.Error("200 bands over 241 bins of 33 Hz accepted (empty filters)")
	}
}

func BenchmarkFeatures(b *testing.B) {
	e, _ := New(Released())
	x := make([]float64, 16000)
	for i := range x {
		x[i] = math.Sin(float64(i) * 0.05)
	}
	dst := make([]float32, 4000)
	for b.Loop() {
		e.Features(x, dst)
	}
}

// TestFeaturesFromHoldsTheWholeClipsBits: FeaturesFrom, which keeps only the first Frames frames, gives
// the bits of the whole-clip computation (MelDB over every frame, cropped or padded, then the z-score) for
// clips shorter and longer than Frames frames, including one whose loudest frame lies past the kept ones
// (the dB reference and floor are maxima over the whole clip).
func TestFeaturesFromHoldsTheWholeClipsBits(t *testing.T) {
	c := Released()
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	whole := func(signal []float64) []float32 {
		db := e.MelDB(signal)
		x := make([]float64, c.Frames*c.Bands)
		copy(x, db)
		zscore(x)
		out := make([]float32, len(x))
		for i, v := range x {
			out[i] = float32(v)
		}
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 4000, 16000, 16001, 48000} {
		x := make([]float64, n)
		for i := range x {
			x[i] = 0.01 * (2*rng.Float64() - 1)
			if i > 32000 {
				x[i] *= 50 // a loud tail after the first second
			}
		}
		want := whole(x)
		got := make([]float32, c.Frames*c.Bands)
		reads := 0
		read := func(dst []float64, start int) error {
			reads++
			copy(dst, x[start:start+len(dst)])
			return nil
		}
		if err := e.FeaturesFrom(n, read, got); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: value %d = %v, the whole clip gives %v", n, i, got[i], want[i])
			}
		}
		if reads != e.NumFrames(n) {
			t.Errorf("n=%d: %d reads, want one a frame (%d)", n, reads, e.NumFrames(n))
		}
	}
	if err := e.FeaturesFrom(0, nil, make([]float32, c.Frames*c.Bands)); err == nil {
		t.Error("no samples accepted")
	}
}

// MelDB, the whole-clip reference of FeaturesFrom, writes the dB mel spectrogram of signal (steps 1–4 of
// the package documentation, every frame of the clip, no cropping or z-score) and returns it as
// [NumFrames(len(signal)), Bands] row-major. The slice is owned by the extractor and overwritten by the
// next call.
func (e *Extractor) MelDB(signal []float64) []float64 {
	c := e.cfg
	nf := e.NumFrames(len(signal))
	if cap(e.db) < nf*c.Bands {
		e.db = make([]float64, nf*c.Bands)
	}
	db := e.db[:nf*c.Bands]
	peak := 0.0
	for t := range nf {
		_ = e.fillFrame(t, len(signal), sliceSamples(signal)) // a slice never fails
		peak = max(peak, e.melRow(db[t*c.Bands:(t+1)*c.Bands]))
	}
	ref := 10 * math.Log10(max(c.AMin, peak))
	top := math.Inf(-1)
	for i, s := range db {
		db[i] = 10*math.Log10(max(c.AMin, s)) - ref
		top = max(top, db[i])
	}
	floor := top - c.TopDB
	for i, v := range db {
		db[i] = max(v, floor)
	}
	return db
}
