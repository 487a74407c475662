// Package synth generates the embedded default task of the toolkit, "synthetic": spike trains whose class is
// carried only by the frequencies at which groups of input channels are rate-modulated and by when the
// modulation starts, never by the mean firing rate.
//
// Shapes and units: an example is [T, Channels] float32 (T bins of Dt seconds; 140 channels, the layout of
// SHD after binning its 700 afferents by five; 100 bins of 4 ms by default, SHD's 250 in LongConfig). Each value is the spike count of
// one channel in one bin: the channel pools Afferents Bernoulli afferents (Afferents = 1 gives binary spikes).
//
// The task. Channels are split into Groups contiguous groups. A class is a code that gives every group a
// modulation frequency f (Hz, log-spaced in [FreqMin, FreqMax]) and an onset time (s, from Onsets). The
// codes are permutations: every class uses the same multiset of frequencies and onsets, only assigned to
// different groups. Every afferent of group g fires with probability per bin
//
//	p(t) = BaseRate·Dt·(1 + d·sin(2π f (t − onset) + φ))  for t ≥ onset,   BaseRate·Dt before,
//
// with a random phase φ per example and group, small random jitters of f, onset and d, so the expected rate
// is BaseRate at every time in every class. The depth d is set so that the modulation has the same amplitude
// after a first-order low-pass with time constant LowPassTau (the membrane of a LIF neuron with that time
// constant): a low-pass neuron sees the same mean drive and the same modulation power in every class, while
// a band-pass neuron tuned to f responds to the groups modulated at f.
//
// Everything is deterministic from Config.Seed: the class codes, the examples of each split and their order.
package synth

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fits-snn/fits/data"
)

// Name is the registry name of the default synthetic task; LongName that of LongConfig.
const (
	Name        = "synthetic"
	LongName    = "synthetic-long"
	ShallowName = "synthetic-shallow"
)

// Config describes a synthetic task and the sizes of its splits. Frequencies are in Hz, times in seconds.
type Config struct {
	// Seed fixes the class codes and all examples.
	Seed uint64
	// Classes is the number of classes (distinct codes).
	Classes int
	// Channels is the number of input channels (features per time bin).
	Channels int
	// Groups is the number of contiguous channel groups; each group has one modulation frequency per class.
	Groups int
	// T is the number of time bins and Dt the bin width in seconds.
	T  int
	Dt float64
	// Train, Val and Test are the numbers of examples in each split (balanced over classes).
	Train, Val, Test int
	// Afferents is the number of Bernoulli afferents pooled into one channel: 1 gives binary spikes,
	// larger values give spike counts in [0, Afferents].
	Afferents int
	// BaseRate is the mean firing rate of one afferent, in Hz (spikes per second).
	BaseRate float64
	// FreqMin and FreqMax bound the modulation frequencies, in Hz; Groups frequencies are log-spaced
	// between them (inclusive).
	FreqMin, FreqMax float64
	// Onsets are the onset times (s) that the codes assign to groups: the list is cycled to Groups entries
	// and each class gets a permutation of it.
	Onsets []float64
	// MaxDepth is the modulation depth, in (0, 1], of the frequency that needs the largest one (FreqMax when
	// LowPassTau > 0); the others are scaled down so all have the same amplitude after the low-pass.
	MaxDepth float64
	// LowPassTau (s) is the time constant of the first-order low-pass that equalizes the modulation amplitude
	// across frequencies; 0 gives every frequency the depth MaxDepth.
	LowPassTau float64
	// FreqJitter, DepthJitter are relative half-widths of uniform per-example jitters of the frequency and
	// the depth; OnsetJitter is the half-width (s) of the onset jitter.
	FreqJitter, DepthJitter, OnsetJitter float64
}

// DefaultConfig returns the configuration of the registered "synthetic" task: 8 classes over 7 groups of 20
// channels, 100 bins of 4 ms (0.4 s), modulation frequencies log-spaced over 5–40 Hz, onsets 0, 50 and
// 100 ms, 512/128/256 train/val/test examples.
//
// It is shorter than SHD's 250 bins because a training step's graph is unrolled over time: its compile
// time and, on XLA CPU, its backward pass grow faster than linearly with T, and the default must let all
// five models of the ablation train in minutes on two CPU cores. LongConfig has SHD's 250 bins.
func DefaultConfig() Config {
	return Config{
		Seed:        1,
		Classes:     8,
		Channels:    140,
		Groups:      7,
		T:           100,
		Dt:          0.004,
		Train:       512,
		Val:         128,
		Test:        256,
		Afferents:   5,
		BaseRate:    20,
		FreqMin:     5,
		FreqMax:     40,
		Onsets:      []float64{0, 0.05, 0.1},
		MaxDepth:    0.9,
		LowPassTau:  0.04,
		FreqJitter:  0.05,
		DepthJitter: 0.2,
		OnsetJitter: 0.01,
	}
}

// LongConfig returns the task on SHD's time axis, registered as "synthetic-long": 250 bins of 4 ms (1 s),
// modulation frequencies over 2–40 Hz, onsets 0, 150 and 300 ms; otherwise as DefaultConfig.
func LongConfig() Config {
	c := DefaultConfig()
	c.T = 250
	c.FreqMin = 2
	c.Onsets = []float64{0, 0.15, 0.3}
	c.OnsetJitter = 0.02
	return c
}

// ShallowConfig returns the task with modulation depth 0.5 instead of 0.9 (MaxDepth), registered as
// "synthetic-shallow"; otherwise as DefaultConfig. At depth 0.9 every model with nonzero target
// frequencies reaches 100 % test accuracy within 20 epochs at width 64, so an ablation cannot resolve the
// steps between them; at 0.5 the same schedule ended between 66 % and 95 % depending on model and seed,
// while LIF and the adaptive LIF stay at chance (12.5 %) as on the default task.
func ShallowConfig() Config {
	c := DefaultConfig()
	c.MaxDepth = shallowDepth
	return c
}

// SmallConfig returns a reduced task for tests and smoke runs: 24 bins of 4 ms, frequencies 12.5–40 Hz,
// onsets 0–16 ms, 64/32/32 examples, otherwise as DefaultConfig. It is small so that the unrolled graphs
// of a training step compile in seconds.
func SmallConfig() Config {
	c := DefaultConfig()
	c.T = 24
	c.FreqMin = 12.5
	c.Onsets = []float64{0, 0.008, 0.016}
	c.OnsetJitter = 0.002
	c.Train, c.Val, c.Test = 64, 32, 32
	return c
}

// shallowDepth is ShallowConfig's modulation depth (MaxDepth).
const shallowDepth = 0.5

func init() {
	register(Name, "embedded synthetic task: 140 channels x 100 bins of 4 ms, 8 classes that differ only in "+
		"the modulation frequencies (5-40 Hz) and onsets of channel groups, equal mean rates", DefaultConfig, nil)
	register(ShallowName, "the synthetic task with modulation depth 0.5 instead of 0.9: harder, no model saturates in 20 epochs",
		ShallowConfig, func(c *Config) { c.MaxDepth = shallowDepth })
	register(LongName, "the synthetic task on SHD's time axis: 140 channels x 250 bins of 4 ms, 2-40 Hz", LongConfig, nil)
}

// register adds a variant of the task to the dataset registry under name: full is its configuration;
// with data.Options.Small it is SmallConfig, changed by small when that is not nil.
func register(name, summary string, full func() Config, small func(*Config)) {
	data.Register(name, summary, func(opts data.Options) (*data.Dataset, error) {
		cfg := full()
		if opts.Small {
			cfg = SmallConfig()
			if small != nil {
				small(&cfg)
			}
		}
		d, err := Generate(cfg)
		if d != nil {
			d.Name = name
		}
		return d, err
	})
	data.RegisterTimeBin(name, func(opts data.Options) float64 {
		if opts.Small {
			return SmallConfig().Dt
		}
		return full().Dt
	})
}

// Validate reports the first inconsistent field.
func (c Config) Validate() error {
	switch {
	case c.Classes < 2:
		return fmt.Errorf("synth: Classes=%d, need at least 2", c.Classes)
	case c.Groups < 1 || c.Channels < c.Groups:
		return fmt.Errorf("synth: Groups=%d, Channels=%d: need 1 <= Groups <= Channels", c.Groups, c.Channels)
	case c.T < 2 || !(c.Dt > 0):
		return fmt.Errorf("synth: T=%d, Dt=%g", c.T, c.Dt)
	case c.Train < c.Classes || c.Test < c.Classes || c.Val < 0:
		return fmt.Errorf("synth: splits %d/%d/%d too small for %d classes", c.Train, c.Val, c.Test, c.Classes)
	case c.Afferents < 1:
		return fmt.Errorf("synth: Afferents=%d", c.Afferents)
	case !(c.BaseRate > 0) || c.BaseRate*c.Dt*(1+c.MaxDepth*(1+c.DepthJitter)) > 1:
		return fmt.Errorf("synth: BaseRate=%g Hz with Dt=%g s and depth %g gives a spike probability above 1",
			c.BaseRate, c.Dt, c.MaxDepth)
	case !(c.FreqMin > 0) || c.FreqMax < c.FreqMin:
		return fmt.Errorf("synth: frequency range [%g, %g] Hz", c.FreqMin, c.FreqMax)
	case c.FreqMax*(1+c.FreqJitter) >= 0.5/c.Dt:
		return fmt.Errorf("synth: FreqMax=%g Hz is above the Nyquist frequency %g Hz", c.FreqMax, 0.5/c.Dt)
	case len(c.Onsets) == 0:
		return errors.New("synth: no onsets")
	case !(c.MaxDepth > 0) || c.MaxDepth > 1 || c.DepthJitter < 0 || c.DepthJitter >= 1:
		return fmt.Errorf("synth: MaxDepth=%g, DepthJitter=%g", c.MaxDepth, c.DepthJitter)
	case c.FreqJitter < 0 || c.FreqJitter >= 0.5 || c.OnsetJitter < 0 || c.LowPassTau < 0:
		return fmt.Errorf("synth: negative or too large jitter/time constant")
	}
	for _, o := range c.Onsets {
		if o < 0 || o+c.OnsetJitter >= float64(c.T)*c.Dt {
			return fmt.Errorf("synth: onset %g s outside the %g s example", o, float64(c.T)*c.Dt)
		}
	}
	if n := numPermutations(c.Groups); n < c.Classes {
		return fmt.Errorf("synth: %d groups allow only %d distinct codes, %d classes asked", c.Groups, n, c.Classes)
	}
	return nil
}

func numPermutations(n int) int {
	p := 1
	for i := 2; i <= n; i++ {
		p *= i
		if p > 1<<20 {
			break
		}
	}
	return p
}

// Code is the signature of one class: for each channel group, the modulation frequency (Hz), the nominal
// modulation depth and the onset time (s).
type Code struct {
	Freq  []float64
	Depth []float64
	Onset []float64
}

// Task is a generated task: its configuration, class codes and channel groups.
type Task struct {
	Config Config
	// Codes holds one code per class.
	Codes []Code
	// Frequencies are the Groups log-spaced modulation frequencies (Hz), ascending.
	Frequencies []float64
	// GroupOf gives the group of each channel.
	GroupOf []int
}

// lowPassGain is the gain at f (Hz) of a first-order low-pass filter with time constant tau (s) relative
// to its DC gain, 1/√(1 + (2πfτ)²): the subthreshold magnitude response of a LIF membrane (the paper's
// Eq. 3 with κ = 0) that the task is built to defeat.
func lowPassGain(f, tau float64) float64 {
	w := 2 * math.Pi * f * tau
	return 1 / math.Sqrt(1+w*w)
}

// logSpaced returns n frequencies spaced evenly in log between fmin and fmax (both included).
func logSpaced(fmin, fmax float64, n int) ([]float64, error) {
	if n < 1 || !(fmin > 0) || !(fmax >= fmin) || math.IsInf(fmax, 0) {
		return nil, fmt.Errorf("need n >= 1 and 0 < fmin <= fmax < inf, got n = %d, [%g, %g] Hz", n, fmin, fmax)
	}
	out := make([]float64, n)
	lo, hi := math.Log(fmin), math.Log(fmax)
	for i := range out {
		if n > 1 {
			out[i] = math.Exp(lo + (hi-lo)*float64(i)/float64(n-1))
		}
	}
	out[0], out[n-1] = fmin, fmax
	return out, nil
}

// NewTask builds the class codes of a configuration.
func NewTask(cfg Config) (*Task, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	freqs, err := logSpaced(cfg.FreqMin, cfg.FreqMax, cfg.Groups)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	depth := make([]float64, len(freqs))
	minGain := math.Inf(1)
	for _, f := range freqs {
		minGain = math.Min(minGain, lowPassGain(f, cfg.LowPassTau))
	}
	for i, f := range freqs {
		depth[i] = cfg.MaxDepth
		if cfg.LowPassTau > 0 {
			depth[i] = cfg.MaxDepth * minGain / lowPassGain(f, cfg.LowPassTau)
		}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xc0de))
	// Class codes: distinct permutations of the frequency list over the groups, and independent
	// permutations of the onset list (Onsets cycled to Groups entries), so every class uses the same
	// multisets of frequencies, depths and onsets.
	seen := map[string]bool{}
	codes := make([]Code, 0, cfg.Classes)
	for len(codes) < cfg.Classes {
		perm := rng.Perm(cfg.Groups)
		key := fmt.Sprint(perm)
		if seen[key] {
			continue
		}
		seen[key] = true
		onsetPerm := rng.Perm(cfg.Groups)
		code := Code{
			Freq:  make([]float64, cfg.Groups),
			Depth: make([]float64, cfg.Groups),
			Onset: make([]float64, cfg.Groups),
		}
		for g, k := range perm {
			code.Freq[g] = freqs[k]
			code.Depth[g] = depth[k]
			code.Onset[g] = cfg.Onsets[onsetPerm[g]%len(cfg.Onsets)]
		}
		codes = append(codes, code)
	}
	groupOf := make([]int, cfg.Channels)
	for ch := range groupOf {
		groupOf[ch] = ch * cfg.Groups / cfg.Channels
	}
	return &Task{Config: cfg, Codes: codes, Frequencies: freqs, GroupOf: groupOf}, nil
}

// split identifiers mix into the seed of each split's random stream.
const (
	streamTrain = 1
	streamVal   = 2
	streamTest  = 3
)

// Generate builds the task and its three splits.
func Generate(cfg Config) (*data.Dataset, error) {
	task, err := NewTask(cfg)
	if err != nil {
		return nil, err
	}
	return &data.Dataset{
		Name:    Name,
		Classes: cfg.Classes,
		Dt:      cfg.Dt,
		Train:   task.Sample(cfg.Train, streamTrain),
		Val:     task.Sample(cfg.Val, streamVal),
		Test:    task.Sample(cfg.Test, streamTest),
	}, nil
}

// Sample draws n examples, balanced over classes (class i mod Classes, then shuffled), from the random stream
// identified by stream (different streams give independent examples of the same task).
func (t *Task) Sample(n int, stream uint64) *data.Set {
	cfg := t.Config
	x := make([]float32, n*cfg.T*cfg.Channels)
	labels := make([]int32, n)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5a3f1e<<8|stream))
	for i := range labels {
		labels[i] = int32(i % cfg.Classes)
	}
	rng.Shuffle(len(labels), func(a, b int) { labels[a], labels[b] = labels[b], labels[a] })
	p := make([]float64, cfg.T)
	cdf := make([]float64, cfg.T*(cfg.Afferents+1))
	size := cfg.T * cfg.Channels
	for i := range n {
		code := t.Codes[labels[i]]
		ex := x[i*size : (i+1)*size]
		for g := range cfg.Groups {
			f := code.Freq[g] * (1 + cfg.FreqJitter*(2*rng.Float64()-1))
			d := math.Min(1, code.Depth[g]*(1+cfg.DepthJitter*(2*rng.Float64()-1)))
			onset := math.Max(0, code.Onset[g]+cfg.OnsetJitter*(2*rng.Float64()-1))
			phi := 2 * math.Pi * rng.Float64()
			p0 := cfg.BaseRate * cfg.Dt
			for k := range p {
				tk := float64(k) * cfg.Dt
				p[k] = p0
				if tk >= onset {
					p[k] = p0 * (1 + d*math.Sin(2*math.Pi*f*(tk-onset)+phi))
				}
			}
			// Cumulative Binomial(Afferents, p[k]) probabilities of each bin, shared by the group's channels.
			for k := range p {
				binomialCDF(cdf[k*(cfg.Afferents+1):(k+1)*(cfg.Afferents+1)], p[k])
			}
			for ch := range cfg.Channels {
				if t.GroupOf[ch] != g {
					continue
				}
				for k := range p {
					ex[k*cfg.Channels+ch] = float32(invertCDF(cdf[k*(cfg.Afferents+1):(k+1)*(cfg.Afferents+1)], rng.Float64()))
				}
			}
		}
	}
	// Spike counts of at most Afferents: bits for binary spikes, bytes for counts up to 255.
	return data.NewSet(x, labels, cfg.T, cfg.Channels)
}

// binomialCDF fills cdf[k] = P(X <= k) for X ~ Binomial(len(cdf)-1, p).
func binomialCDF(cdf []float64, p float64) {
	n := len(cdf) - 1
	q := 1 - p
	pk := math.Pow(q, float64(n)) // P(X = 0)
	acc := 0.0
	for k := 0; k <= n; k++ {
		acc += pk
		cdf[k] = acc
		// P(X = k+1) = P(X = k)·(n−k)/(k+1)·p/q
		if q > 0 {
			pk *= float64(n-k) / float64(k+1) * p / q
		}
	}
	if p >= 1 {
		clear(cdf[:n])
	}
	cdf[n] = 1
}

// invertCDF returns the smallest k with u < cdf[k].
func invertCDF(cdf []float64, u float64) int {
	for k, c := range cdf {
		if u < c {
			return k
		}
	}
	return len(cdf) - 1
}
