package espeak

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fits-snn/fits/data/mel"
)

// Cochlea is a simple cochlea-like spike encoder, not the hair-cell model of the Heidelberg
// datasets: a 700-band Mel filterbank (log energies every HopMs milliseconds, package data/mel)
// stands for the basilar membrane, and each band drives one integrate-and-fire afferent.
//
// Per band, the log energy is mapped to a drive d in [0, 1]: d = 1 at the loudest band-frame of
// the utterance, falling linearly to 0 at RangeDB below it. The afferent integrates
// v += MaxRate·d·Δt and emits a spike each time v reaches 1 (then v −= 1), starting from a random
// phase, so its rate follows the band's loudness up to MaxRate spikes per second. A frame's time
// is its centre; a spike is placed where v crossed 1 within its frame. Channel 0 is the lowest band.
type Cochlea struct {
	ext     *mel.Extractor
	MaxRate float64 // spikes per second at full drive
	RangeDB float64 // dynamic range mapped onto the drive
	dt      float64 // seconds per frame
	t0      float64 // time of the centre of frame 0, seconds
}

// CochleaConfig returns the filterbank of the encoder for 16 kHz audio: 700 bands between 100 Hz
// and 8 kHz, 16 ms Hann frames every 2 ms (500 frames per second), 4096-point FFT (the long FFT
// gives every narrow low-frequency band at least one bin).
func CochleaConfig() mel.Config {
	return mel.Config{SampleRate: 16000, Window: 256, Hop: 32, FFTSize: 4096, Bands: 700, FMin: 100, FMax: 8000, Frames: 500, LogOffset: 1e-10}
}

// NewCochlea builds the encoder for signals of frames·Hop samples (1.0 s by default).
func NewCochlea(c mel.Config) (*Cochlea, error) {
	e, err := mel.New(c)
	if err != nil {
		return nil, err
	}
	return &Cochlea{ext: e, MaxRate: 60, RangeDB: 50, dt: float64(c.Hop) / float64(c.SampleRate), t0: float64(c.Window) / 2 / float64(c.SampleRate)}, nil
}

// Channels returns the number of afferents (bands).
func (c *Cochlea) Channels() int { return c.ext.Config().Bands }

// CentreFrequencies returns the centre frequency of each channel, in Hz.
func (c *Cochlea) CentreFrequencies() []float64 { return c.ext.CentreFrequencies() }

// Encode returns the spikes of a signal (samples in [-1, 1] at the configured rate): times in
// seconds, sorted, and the channel of each spike.
func (c *Cochlea) Encode(x []float64, seed uint64) (times []float64, units []int64, err error) {
	cfg := c.ext.Config()
	feat := make([]float32, cfg.Frames*cfg.Bands)
	if err := c.ext.LogMel(x, feat); err != nil {
		return nil, nil, err
	}
	top := slices.Max(feat)
	span := c.RangeDB / 10 * math.Ln10 // natural-log energy span of RangeDB decibels
	if !(span > 0) || !(c.MaxRate > 0) {
		return nil, nil, fmt.Errorf("bad cochlea parameters: range %g dB, rate %g Hz", c.RangeDB, c.MaxRate)
	}
	rng := rand.New(rand.NewPCG(seed, 0xc0c))
	v := make([]float64, cfg.Bands)
	for i := range v {
		v[i] = rng.Float64()
	}
	for t := 0; t < cfg.Frames; t++ {
		row := feat[t*cfg.Bands : (t+1)*cfg.Bands]
		for b, e := range row {
			d := 1 + float64(e-top)/span
			if d <= 0 {
				continue
			}
			inc := c.MaxRate * d * c.dt
			v[b] += inc
			for v[b] >= 1 {
				v[b]--
				// Place the spike where v crossed 1 inside the frame.
				frac := 1 - v[b]/inc
				times = append(times, c.t0+(float64(t)-0.5+min(1, max(0, frac)))*c.dt)
				units = append(units, int64(b))
			}
		}
	}
	// Spikes of one frame are ordered by channel; order them by time.
	sortByTime(times, units)
	return times, units, nil
}

func sortByTime(times []float64, units []int64) {
	// Insertion sort: the slices are sorted frame by frame already, so this is nearly linear.
	for i := 1; i < len(times); i++ {
		t, u := times[i], units[i]
		j := i
		for j > 0 && times[j-1] > t {
			times[j], units[j] = times[j-1], units[j-1]
			j--
		}
		times[j], units[j] = t, u
	}
}
