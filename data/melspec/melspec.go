// Package melspec computes the released code's GSC features (experiments/gsc/data.py of the FiTS
// release), which are librosa 0.11's
//
//	y, _ = librosa.load(path, sr=16000, mono=True)
//	S = librosa.feature.melspectrogram(y=y, sr=16000, n_fft=480, hop_length=160, power=1.0,
//	                                   n_mels=40, fmin=40.0, fmax=4000.0)
//	D = librosa.power_to_db(S, ref=np.max)           # amin 1e-10, top_db 80
//	D = D[:, :100], or D padded with zeros to 100 frames
//	X = (D - D.mean()) / D.std()                      # torch: one mean, unbiased std, if std > 0
//
// step by step:
//
//  1. Frames: the signal (samples in [-1, 1), 16 kHz) is padded with NFFT/2 = 240 zeros on both sides
//     (centred frames, librosa's pad_mode "constant"); frame k covers padded samples
//     [k·Hop, k·Hop + NFFT), k = 0 .. len(y)/Hop, so a 1 s clip has 101 frames.
//  2. Spectrum: each frame times the periodic Hann window w[n] = 0.5 − 0.5·cos(2πn/NFFT), n < NFFT
//     (scipy's get_window("hann", NFFT, fftbins=True)), an NFFT-point real FFT, and the magnitude
//     |X[f]|^Power of the NFFT/2 + 1 = 241 bins (Power = 1: magnitude, not power).
//  3. Mel: 40 triangular filters on the Slaney mel scale (linear below 1 kHz, 200/3 Hz per mel;
//     logarithmic above, 27 mels per factor 6.4) with Bands + 2 edges evenly spaced in mel between FMin
//     and FMax, weights max(0, min(rising, falling)) at the bin frequencies f·SampleRate/NFFT, each filter
//     scaled by 2 / (right edge − left edge in Hz) (Slaney area normalisation).
//  4. dB: 10·log10(max(AMin, S)) − 10·log10(max(AMin, max S)), then floored at its maximum − TopDB, over
//     all frames of the clip (power_to_db applied to the magnitude spectrogram, as the released code does).
//  5. The first Frames = 100 frames; a shorter clip is padded with 0 dB after step 4.
//  6. One z-score over the whole [Frames, Bands] matrix: (x − mean) / std with the unbiased standard
//     deviation (divisor Frames·Bands − 1), left as it is when std is 0.
//
// The output of one clip is [Frames, Bands] = [100, 40] row-major (frames × bands, the transpose of
// librosa's [bands, frames]): exactly what the network is fed. librosa computes in float32, this package
// in float64; the two agree within a few 1e-5 after the z-score (the tests hold them to 2e-3).
package melspec

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Config holds the parameters of the recipe. Frequencies in Hz, lengths in samples.
type Config struct {
	SampleRate int     `json:"sample_rate"` // 16000
	NFFT       int     `json:"n_fft"`       // FFT length = window length (480 = 30 ms)
	Hop        int     `json:"hop"`         // frame step (160 = 10 ms)
	Bands      int     `json:"bands"`       // mel filters (40)
	FMin       float64 `json:"fmin"`        // lowest filter edge (40 Hz)
	FMax       float64 `json:"fmax"`        // highest filter edge (4000 Hz)
	Power      float64 `json:"power"`       // exponent of the magnitude spectrum (1)
	AMin       float64 `json:"amin"`        // floor before the logarithm (1e-10)
	TopDB      float64 `json:"top_db"`      // dynamic range kept below the maximum, dB (80)
	Frames     int     `json:"frames"`      // frames kept (100), zero-padded after the dB step
	ZScore     bool    `json:"zscore"`      // one z-score per clip (true)
}

// Released returns the parameters of the released code, described in the package documentation.
func Released() Config {
	return Config{SampleRate: 16000, NFFT: 480, Hop: 160, Bands: 40, FMin: 40, FMax: 4000, Power: 1, AMin: 1e-10, TopDB: 80, Frames: 100, ZScore: true}
}

// Check validates the parameters.
func (c Config) Check() error {
	if c.SampleRate <= 0 || c.NFFT < 2 || c.NFFT%2 != 0 || c.Hop <= 0 || c.Bands <= 0 || c.Frames <= 0 ||
		!(c.FMin >= 0) || !(c.FMax > c.FMin) || c.FMax > float64(c.SampleRate)/2 || !(c.Power > 0) ||
		!(c.AMin > 0) || !(c.TopDB >= 0) || math.IsInf(c.TopDB, 0) {
		return fmt.Errorf("bad mel-spectrogram configuration %+v: need positive rate, hop, bands and frames, an even n_fft >= 2, 0 <= fmin < fmax <= rate/2, power > 0, amin > 0, 0 <= top_db < inf", c)
	}
	return nil
}

// Dt returns the frame hop in seconds (0.01).
func (c Config) Dt() float64 { return float64(c.Hop) / float64(c.SampleRate) }

// Tag names the parameters for cache file names, e.g. "melspec40-t100-hop160-fft480".
func (c Config) Tag() string {
	return fmt.Sprintf("melspec%d-t%d-hop%d-fft%d", c.Bands, c.Frames, c.Hop, c.NFFT)
}

// HzToMel converts a frequency in Hz to the Slaney mel scale (librosa's hz_to_mel with htk=False).
func HzToMel(f float64) float64 {
	const fsp, minLogHz = 200.0 / 3, 1000.0
	if f >= minLogHz {
		return minLogHz/fsp + math.Log(f/minLogHz)/(math.Log(6.4)/27)
	}
	return f / fsp
}

// MelToHz converts Slaney mels back to Hz (librosa's mel_to_hz with htk=False).
func MelToHz(m float64) float64 {
	const fsp, minLogHz = 200.0 / 3, 1000.0
	if minLogMel := minLogHz / fsp; m >= minLogMel {
		return minLogHz * math.Exp(math.Log(6.4)/27*(m-minLogMel))
	}
	return fsp * m
}

// Filterbank returns the Slaney-normalised mel filters [Bands][NFFT/2+1] of c (librosa.filters.mel with
// htk=False, norm="slaney", computed in float64).
func Filterbank(c Config) [][]float64 {
	nbins := c.NFFT/2 + 1
	lo, hi := HzToMel(c.FMin), HzToMel(c.FMax)
	edges := make([]float64, c.Bands+2)
	step := (hi - lo) / float64(c.Bands+1)
	for i := range edges {
		// numpy.linspace: i·step + lo, the last point exactly hi.
		edges[i] = MelToHz(float64(i)*step + lo)
	}
	edges[c.Bands+1] = MelToHz(hi)
	// numpy.fft.rfftfreq(NFFT, 1/SampleRate): bin k at k·(1 / (NFFT · (1/SampleRate))) Hz.
	binHz := 1 / (float64(c.NFFT) * (1 / float64(c.SampleRate)))
	w := make([][]float64, c.Bands)
	for b := range w {
		w[b] = make([]float64, nbins)
		l, m, r := edges[b], edges[b+1], edges[b+2]
		norm := 2 / (r - l)
		for k := range nbins {
			f := float64(k) * binHz
			rise := (f - l) / (m - l)
			fall := (r - f) / (r - m)
			w[b][k] = max(0, min(rise, fall)) * norm
		}
	}
	return w
}

// span is the non-zero part of one filter: weights over bins [start, start+len(w)).
type span struct {
	start int
	w     []float64
}

// Extractor computes the features of one Config. It is not safe for concurrent use (it owns FFT work
// buffers); make one per goroutine.
type Extractor struct {
	cfg     Config
	fft     *fourier.FFT
	win     []float64
	filters []span
	frame   []float64
	coeff   []complex128
	spec    []float64
	db      []float64 // [nFrames, Bands] of the clip being processed
	out     []float64 // [Frames, Bands] before the conversion to float32
}

// New checks c and builds the window and the filterbank. A filter with no weight is an error (librosa
// warns of "empty filters").
func New(c Config) (*Extractor, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	e := &Extractor{cfg: c, fft: fourier.NewFFT(c.NFFT)}
	e.win = make([]float64, c.NFFT)
	for n := range e.win {
		e.win[n] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(n)/float64(c.NFFT))
	}
	for b, w := range Filterbank(c) {
		s := span{start: -1}
		last := -1
		for k, v := range w {
			if v > 0 {
				if s.start < 0 {
					s.start = k
				}
				last = k
			}
		}
		if s.start < 0 {
			return nil, fmt.Errorf("mel band %d of %d holds no FFT bin: use fewer bands or a longer FFT", b, c.Bands)
		}
		s.w = w[s.start : last+1]
		e.filters = append(e.filters, s)
	}
	e.frame = make([]float64, c.NFFT)
	e.coeff = make([]complex128, c.NFFT/2+1)
	e.spec = make([]float64, c.NFFT/2+1)
	return e, nil
}

// Config returns the parameters.
func (e *Extractor) Config() Config { return e.cfg }

// NumFrames returns the number of centred frames of a signal of n samples before cropping or padding to
// Frames: 1 + n/Hop.
func (e *Extractor) NumFrames(n int) int { return 1 + n/e.cfg.Hop }

// sliceSamples reads samples from a signal held in memory.
func sliceSamples(signal []float64) func(dst []float64, start int) error {
	return func(dst []float64, start int) error {
		copy(dst, signal[start:])
		return nil
	}
}

// fillFrame sets e.frame to frame t of a signal of n samples that read supplies (read(dst, start) writes
// samples start .. start+len(dst)-1, all inside the signal), before the window: padded sample j is sample
// j − NFFT/2, frame t starts at padded sample t·Hop, and samples outside the signal are 0.
func (e *Extractor) fillFrame(t, n int, read func(dst []float64, start int) error) error {
	off := t*e.cfg.Hop - e.cfg.NFFT/2
	lo, hi := max(0, -off), min(len(e.frame), n-off)
	clear(e.frame)
	if hi > lo {
		return read(e.frame[lo:hi], off+lo)
	}
	return nil
}

// melRow windows e.frame (steps 2 and 3), writes the frame's mel magnitudes into row and returns their
// maximum (0 at least).
func (e *Extractor) melRow(row []float64) float64 {
	c := e.cfg
	for n, w := range e.win {
		e.frame[n] *= w
	}
	e.coeff = e.fft.Coefficients(e.coeff, e.frame)
	for k, z := range e.coeff {
		m := math.Hypot(real(z), imag(z))
		if c.Power != 1 {
			m = math.Pow(m, c.Power)
		}
		e.spec[k] = m
	}
	peak := 0.0
	for b, f := range e.filters {
		var s float64
		for i, w := range f.w {
			s += w * e.spec[f.start+i]
		}
		row[b] = s
		peak = max(peak, s)
	}
	return peak
}

// Features writes the features of signal (samples in [-1, 1) at SampleRate) into dst, [Frames, Bands]
// row-major: every step of the package documentation. An empty signal is an error.
func (e *Extractor) Features(signal []float64, dst []float32) error {
	return e.FeaturesFrom(len(signal), sliceSamples(signal), dst)
}

// FeaturesFrom is Features of a signal of n samples that read supplies (read(dst, start) writes samples
// start .. start+len(dst)-1, called with increasing start, a frame at a time), with the same bits. It
// holds the first Frames frames only: the dB reference and floor (step 4) are the maxima over every
// frame, which it keeps as it goes, so a clip of any length takes the memory of its output.
func (e *Extractor) FeaturesFrom(n int, read func(dst []float64, start int) error, dst []float32) error {
	c := e.cfg
	if len(dst) != c.Frames*c.Bands {
		return fmt.Errorf("feature buffer of %d values, need %d×%d", len(dst), c.Frames, c.Bands)
	}
	if n <= 0 {
		return fmt.Errorf("no audio samples")
	}
	keep := min(e.NumFrames(n), c.Frames)
	if cap(e.db) < (c.Frames+1)*c.Bands {
		e.db = make([]float64, (c.Frames+1)*c.Bands)
	}
	db, scratch := e.db[:keep*c.Bands], e.db[c.Frames*c.Bands:(c.Frames+1)*c.Bands]
	// top is the maximum of 10·log10(max(AMin, S)) − ref over every value; subtracting ref rounds
	// monotonically, so it is the maximum of 10·log10(max(AMin, S)), less ref: the bits of the whole-clip
	// computation's (MelDB, in the tests).
	peak, topLog := 0.0, math.Inf(-1)
	for t := range e.NumFrames(n) {
		if err := e.fillFrame(t, n, read); err != nil {
			return err
		}
		row := scratch
		if t < keep {
			row = db[t*c.Bands : (t+1)*c.Bands]
		}
		peak = max(peak, e.melRow(row))
		for _, s := range row {
			topLog = max(topLog, 10*math.Log10(max(c.AMin, s)))
		}
	}
	ref := 10 * math.Log10(max(c.AMin, peak))
	floor := (topLog - ref) - c.TopDB
	for i, s := range db {
		db[i] = max(10*math.Log10(max(c.AMin, s))-ref, floor)
	}
	if cap(e.out) < len(dst) {
		e.out = make([]float64, len(dst))
	}
	x := e.out[:len(dst)]
	copy(x, db)
	clear(x[len(db):])
	if c.ZScore {
		zscore(x)
	}
	for i, v := range x {
		dst[i] = float32(v)
	}
	return nil
}

// zscore maps x to (x − mean) / std in place, std the unbiased standard deviation; x is left as it is
// when std is 0 or x has fewer than 2 values.
func zscore(x []float64) {
	if len(x) < 2 {
		return
	}
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		d := v - mean
		ss += d * d
	}
	std := math.Sqrt(ss / float64(len(x)-1))
	if !(std > 0) {
		return
	}
	for i, v := range x {
		x[i] = (v - mean) / std
	}
}
