// Package mel computes log-Mel spectrograms: short-time Fourier transform (gonum's FFT) of
// windowed frames, triangular Mel filterbank, natural logarithm.
//
// This is the toolkit's earlier GSC front end, kept as the "logmel" option of package data/gsc; the
// default is the released code's recipe (package data/melspec). Default parameters (40 bands, 10 ms hop,
// about 100 frames per 1 s):
// 16 kHz audio, 25 ms frames (400 samples) with a symmetric Hann window (gonum window.Hann,
// w[k] = 0.5·(1 − cos(2πk/(N−1)))), zero-padded to a 512-point FFT, hop 10 ms (160 samples),
// 40 triangular filters evenly spaced on the HTK Mel scale m = 2595·log10(1 + f/700) between
// 20 Hz and 8 kHz, each with peak weight 1, and log(E + 1e-6) of the filter energies.
//
// Framing: frame k covers samples [k·Hop, k·Hop + Window) of the signal; samples past the end of
// the signal are zero. A fixed number of frames is produced (100 by default), so a 1 s clip gives
// frames 0..99 and shorter clips are zero-padded, longer ones cropped.
package mel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/dsp/window"
)

// Config holds the feature parameters. Frequencies in Hz, lengths in samples.
type Config struct {
	SampleRate int
	Window     int // frame length (400 = 25 ms at 16 kHz)
	Hop        int // frame step (160 = 10 ms)
	FFTSize    int // FFT length >= Window (512)
	Bands      int // Mel filters (40)
	FMin, FMax float64
	Frames     int     // frames produced per signal (100)
	LogOffset  float64 // added before the logarithm (1e-6)
}

// Default returns the parameters described in the package documentation.
func Default() Config {
	return Config{SampleRate: 16000, Window: 400, Hop: 160, FFTSize: 512, Bands: 40, FMin: 20, FMax: 8000, Frames: 100, LogOffset: 1e-6}
}

// HzToMel converts a frequency in Hz to the HTK Mel scale.
func HzToMel(f float64) float64 { return 2595 * math.Log10(1+f/700) }

// MelToHz converts HTK Mel back to Hz.
func MelToHz(m float64) float64 { return 700 * (math.Pow(10, m/2595) - 1) }

// filter is one triangular filter: weights over FFT bins [start, start+len(w)).
type filter struct {
	start int
	w     []float64
}

// Extractor computes spectra and log-Mel features for one Config. It is not safe for concurrent
// use (it owns FFT work buffers); make one per goroutine.
type Extractor struct {
	cfg     Config
	fft     *fourier.FFT
	win     []float64
	filters []filter
	centres []float64
	frame   []float64
	coeff   []complex128
	power   []float64
}

// New checks cfg and builds the window and the filterbank.
func New(cfg Config) (*Extractor, error) {
	if cfg.SampleRate <= 0 || cfg.Window <= 1 || cfg.Hop <= 0 || cfg.FFTSize < cfg.Window || cfg.Bands <= 0 || cfg.Frames <= 0 ||
		!(cfg.FMin >= 0) || !(cfg.FMax > cfg.FMin) || cfg.FMax > float64(cfg.SampleRate)/2 || !(cfg.LogOffset > 0) {
		return nil, fmt.Errorf("bad log-Mel configuration %+v", cfg)
	}
	e := &Extractor{cfg: cfg, fft: fourier.NewFFT(cfg.FFTSize)}
	e.win = make([]float64, cfg.Window)
	for i := range e.win {
		e.win[i] = 1
	}
	window.Hann(e.win)
	e.frame = make([]float64, cfg.FFTSize)
	e.coeff = make([]complex128, cfg.FFTSize/2+1)
	e.power = make([]float64, cfg.FFTSize/2+1)
	// Band edges: Bands+2 points evenly spaced in Mel.
	lo, hi := HzToMel(cfg.FMin), HzToMel(cfg.FMax)
	edges := make([]float64, cfg.Bands+2)
	for i := range edges {
		edges[i] = MelToHz(lo + (hi-lo)*float64(i)/float64(cfg.Bands+1))
	}
	binHz := float64(cfg.SampleRate) / float64(cfg.FFTSize)
	for b := 0; b < cfg.Bands; b++ {
		l, c, r := edges[b], edges[b+1], edges[b+2]
		e.centres = append(e.centres, c)
		f := filter{start: -1}
		for k := 0; k <= cfg.FFTSize/2; k++ {
			fk := float64(k) * binHz
			var w float64
			switch {
			case fk > l && fk <= c:
				w = (fk - l) / (c - l)
			case fk > c && fk < r:
				w = (r - fk) / (r - c)
			}
			if w > 0 { // on the bins strictly between l and r: a contiguous run
				if f.start < 0 {
					f.start = k
				}
				f.w = append(f.w, w)
			}
		}
		if f.start < 0 {
			return nil, fmt.Errorf("Mel band %d (%.1f–%.1f Hz) holds no FFT bin: use fewer bands or a longer FFT", b, l, r)
		}
		e.filters = append(e.filters, f)
	}
	return e, nil
}

// Config returns the parameters.
func (e *Extractor) Config() Config { return e.cfg }

// CentreFrequencies returns the peak frequency of each Mel filter, in Hz.
func (e *Extractor) CentreFrequencies() []float64 { return append([]float64(nil), e.centres...) }

// Window returns the analysis window (shared, do not modify).
func (e *Extractor) Window() []float64 { return e.win }

// PowerSpectrum writes |X[k]|², k = 0..FFTSize/2, of frame k0 of signal into dst: the samples
// [k0·Hop, k0·Hop+Window) (zero past the end), multiplied by the window and zero-padded to FFTSize.
func (e *Extractor) PowerSpectrum(signal []float64, k0 int, dst []float64) {
	clear(e.frame)
	off := k0 * e.cfg.Hop
	for i, w := range e.win {
		if j := off + i; j < len(signal) {
			e.frame[i] = signal[j] * w
		}
	}
	e.coeff = e.fft.Coefficients(e.coeff, e.frame)
	for k, c := range e.coeff {
		dst[k] = real(c)*real(c) + imag(c)*imag(c)
	}
}

// LogMel writes the log-Mel features of signal (samples in [-1, 1]) into dst, [Frames, Bands]
// row-major.
func (e *Extractor) LogMel(signal []float64, dst []float32) error {
	if len(dst) != e.cfg.Frames*e.cfg.Bands {
		return fmt.Errorf("log-Mel buffer of %d, need %d×%d", len(dst), e.cfg.Frames, e.cfg.Bands)
	}
	for t := 0; t < e.cfg.Frames; t++ {
		e.PowerSpectrum(signal, t, e.power)
		row := dst[t*e.cfg.Bands : (t+1)*e.cfg.Bands]
		for b, f := range e.filters {
			var s float64
			for i, w := range f.w {
				s += w * e.power[f.start+i]
			}
			row[b] = float32(math.Log(s + e.cfg.LogOffset))
		}
	}
	return nil
}
