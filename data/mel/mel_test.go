package mel

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestPureToneLandsInItsBand(t *testing.T) {
	e, err := New(Default())
	if err != nil {
		t.Fatal(err)
	}
	// Band centres recomputed here from the HTK formula, independently of the package.
	mel := func(f float64) float64 { return 2595 * math.Log10(1+f/700) }
	lo, hi := mel(20), mel(8000)
	centre := func(b int) float64 {
		m := lo + (hi-lo)*float64(b+1)/41
		return 700 * (math.Pow(10, m/2595) - 1)
	}
	for _, f := range []float64{150, 440, 1000, 2500, 6000} {
		sig := make([]float64, 16000)
		for i := range sig {
			sig[i] = 0.5 * math.Sin(2*math.Pi*f*float64(i)/16000)
		}
		feat := make([]float32, 100*40)
		if err := e.LogMel(sig, feat); err != nil {
			t.Fatal(err)
		}
		// Frame 50 lies fully inside the tone.
		row := feat[50*40 : 51*40]
		best := 0
		for b := range row {
			if row[b] > row[best] {
				best = b
			}
		}
		nearest := 0
		for b := 0; b < 40; b++ {
			if math.Abs(centre(b)-f) < math.Abs(centre(nearest)-f) {
				nearest = b
			}
		}
		if best != nearest {
			t.Errorf("%g Hz tone peaks in band %d (centre %.0f Hz), nearest band is %d (%.0f Hz)", f, best, centre(best), nearest, centre(nearest))
		}
		if got := e.CentreFrequencies()[nearest]; math.Abs(got-centre(nearest)) > 1e-6 {
			t.Errorf("centre %d: %g, want %g", nearest, got, centre(nearest))
		}
	}
}

// Parseval: the energy of each windowed, zero-padded frame equals the energy of its spectrum,
// sum |x|² = (1/N) (|X0|² + 2 Σ_{0<k<N/2} |Xk|² + |X_{N/2}|²).
func TestParseval(t *testing.T) {
	e, _ := New(Default())
	rng := rand.New(rand.NewPCG(1, 2))
	sig := make([]float64, 16000)
	for i := range sig {
		sig[i] = rng.NormFloat64() * 0.1
	}
	ps := make([]float64, 257)
	for _, k := range []int{0, 1, 37, 98, 99} {
		e.PowerSpectrum(sig, k, ps)
		var time float64
		for i := 0; i < 400; i++ {
			if j := k*160 + i; j < len(sig) {
				w := 0.5 * (1 - math.Cos(2*math.Pi*float64(i)/399))
				time += sig[j] * sig[j] * w * w
			}
		}
		freq := ps[0] + ps[256]
		for i := 1; i < 256; i++ {
			freq += 2 * ps[i]
		}
		freq /= 512
		if math.Abs(freq-time) > 1e-9*time {
			t.Errorf("frame %d: time energy %g, spectral energy %g", k, time, freq)
		}
	}
}

func TestFramesPadAndCrop(t *testing.T) {
	e, _ := New(Default())
	feat := make([]float32, 4000)
	short := make([]float64, 8000) // 0.5 s of silence then padding: all frames at the floor
	for i := range short {
		short[i] = 0.1
	}
	if err := e.LogMel(short, feat); err != nil {
		t.Fatal(err)
	}
	floor := float32(math.Log(1e-6))
	if feat[99*40+5] != floor || feat[10*40+5] == floor {
		t.Errorf("padding: frame 99 = %v, frame 10 = %v", feat[99*40+5], feat[10*40+5])
	}
	if err := e.LogMel(make([]float64, 40000), feat); err != nil {
		t.Fatal(err)
	}
	if err := e.LogMel(short, feat[:10]); err == nil {
		t.Error("short buffer accepted")
	}
	for _, c := range []Config{{}, func() Config { c := Default(); c.FMax = 9000; return c }(), func() Config { c := Default(); c.Bands = 400; return c }()} {
		if _, err := New(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}
