package shd

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fits-snn/fits/data/h5"
	"github.com/fits-snn/fits/data/progress"
)

// SynthConfig describes synthetic spike data in the SHD/SSC layout, used as test fixtures and as
// input of `fits data synth`. Each class is a sweep: a band of channels whose centre moves linearly
// in time with a class-specific start and slope, plus uniform background spikes.
type SynthConfig struct {
	Samples    int     // number of samples N
	Classes    int     // labels 0..Classes-1, assigned round-robin
	MeanSpikes int     // mean spikes per sample (uniform between half and 1.5 times)
	Channels   int     // input channels (700)
	Duration   float64 // spikes lie in [0, Duration) seconds
	// MinDuration > 0 gives each sample its own length, uniform in [MinDuration, Duration): its spikes lie
	// in [0, length) (spoken words of different lengths). 0 gives every sample Duration.
	MinDuration float64
	Seed        uint64
}

func (c SynthConfig) check() error {
	if c.Samples < 0 || c.Classes <= 0 || c.MeanSpikes < 0 || c.Channels <= 0 || c.Channels > math.MaxUint16+1 ||
		!(c.Duration > 0) || c.MinDuration < 0 || c.MinDuration > c.Duration {
		return fmt.Errorf("bad synthetic configuration %+v", c)
	}
	return nil
}

// synthEvent is one spike of a synthetic sample.
type synthEvent struct {
	t float64
	u int64
}

// synthSample draws the spikes of sample i (class i mod Classes) into evs, sorted by time.
func synthSample(c SynthConfig, rng *rand.Rand, i int, evs []synthEvent) []synthEvent {
	cl := i % c.Classes
	start := float64((cl*37)%c.Channels) / float64(c.Channels)
	slope := (float64(cl%7) - 3) / 4 // channel fraction per second
	n := c.MeanSpikes/2 + rng.IntN(c.MeanSpikes+1)
	dur := c.Duration
	if c.MinDuration > 0 {
		dur = c.MinDuration + (c.Duration-c.MinDuration)*rng.Float64()
	}
	evs = evs[:0]
	for k := 0; k < n; k++ {
		t := rng.Float64() * dur
		var u int
		if rng.Float64() < 0.8 {
			centre := math.Mod(start+slope*t+2, 1) * float64(c.Channels)
			u = int(centre+rng.NormFloat64()*float64(c.Channels)/50+float64(c.Channels)) % c.Channels
		} else {
			u = rng.IntN(c.Channels)
		}
		evs = append(evs, synthEvent{t, int64(u)})
	}
	slices.SortFunc(evs, func(a, b synthEvent) int { return cmp.Compare(a.t, b.t) })
	return evs
}

// Synthesize draws spikes and labels for c. Spike times within a sample are sorted, as in the
// official files.
func Synthesize(c SynthConfig) (*Spikes, []int32, error) {
	if err := c.check(); err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x5d5d))
	sp := &Spikes{Offs: make([]int, 1, c.Samples+1)}
	labels := make([]int32, c.Samples)
	var evs []synthEvent
	for i := range labels {
		labels[i] = int32(i % c.Classes)
		evs = synthSample(c, rng, i, evs)
		for _, e := range evs {
			sp.Times = append(sp.Times, e.t)
			sp.Units = append(sp.Units, e.u)
		}
		sp.Offs = append(sp.Offs, len(sp.Times))
	}
	return sp, labels, nil
}

// synthBlock is the number of samples WriteSynthFile draws and writes at a time (larger blocks raised the
// peak memory of writing the full-size SHD stand-in from 0.12 to 0.39 GB and took no less time).
const synthBlock = 64

// WriteSynthFile draws the samples of c (as Synthesize does: the same spikes for the same
// configuration) and writes them in the official layout, as WriteFile does, a block of samples at a time:
// memory stays bounded however many samples there are. o.Speakers, when given, holds one speaker per
// sample. Progress goes to bar, one step per sample, when bar is not nil.
func WriteSynthFile(path string, c SynthConfig, o WriteOptions, bar *progress.Bar) error {
	if err := c.check(); err != nil {
		return err
	}
	labels := make([]int32, c.Samples)
	for i := range labels {
		labels[i] = int32(i % c.Classes)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x5d5d))
	var evs []synthEvent
	var times, units []float64
	offs := []int{0}
	return writeFile(path, labels, o, func(f *h5.File, tt h5.Type) error {
		tw, err := f.CreateVLen("spikes/times", tt, c.Samples)
		if err != nil {
			return err
		}
		defer tw.Close()
		uw, err := f.CreateVLen("spikes/units", h5.U16, c.Samples)
		if err != nil {
			return err
		}
		defer uw.Close()
		for start := 0; start < c.Samples; start += synthBlock {
			n := min(synthBlock, c.Samples-start)
			times, units, offs = times[:0], units[:0], offs[:1]
			for i := start; i < start+n; i++ {
				evs = synthSample(c, rng, i, evs)
				for _, e := range evs {
					times = append(times, e.t)
					units = append(units, float64(e.u))
				}
				offs = append(offs, len(times))
			}
			if err := tw.WriteRows(start, times, offs); err != nil {
				return err
			}
			if err := uw.WriteRows(start, units, offs); err != nil {
				return err
			}
			if bar != nil {
				bar.Add(int64(n))
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return uw.Close()
	})
}

// OfficialSizes returns the number of samples of each official split of dataset: SHD 8156 train and
// 2264 test, SSC 75466 train, 9981 valid and 20382 test (the files at zenkelab.org/datasets).
func OfficialSizes(dataset string) (map[string]int, error) {
	switch dataset {
	case SHD:
		return map[string]int{"train": 8156, "test": 2264}, nil
	case SSC:
		return map[string]int{"train": 75466, "valid": 9981, "test": 20382}, nil
	}
	return nil, fmt.Errorf("unknown spiking dataset %q (valid: shd, ssc)", dataset)
}

// WriteOptions are the optional parts of an SHD-layout file.
type WriteOptions struct {
	TimeType h5.Type  // element type of spikes/times: h5.F32 (default, as the official files) or h5.F64
	Keys     []string // extra/keys, class names
	Speakers []int64  // extra/speaker, one per sample
	// Per-speaker metadata for extra/meta_info; written when Gender is not nil.
	Gender     []string
	Age        []int64
	BodyHeight []float64
}

// WriteFile writes spikes and labels in the official layout: spikes/times (VLEN float32 seconds),
// spikes/units (VLEN uint16), labels (uint16) and, when given, the extra group. The file appears at
// path only when complete.
func WriteFile(path string, sp *Spikes, labels []int32, o WriteOptions) error {
	if sp.Len() != len(labels) {
		return fmt.Errorf("%s: %d spike rows but %d labels", path, sp.Len(), len(labels))
	}
	units := make([]float64, len(sp.Units))
	for i, u := range sp.Units {
		if u < 0 || u > math.MaxUint16 {
			return fmt.Errorf("%s: unit %d does not fit uint16", path, u)
		}
		units[i] = float64(u)
	}
	return writeFile(path, labels, o, func(f *h5.File, tt h5.Type) error {
		if err := f.WriteVLen("spikes/times", tt, sp.Times, sp.Offs); err != nil {
			return err
		}
		return f.WriteVLen("spikes/units", h5.U16, units, sp.Offs)
	})
}

// writeFile writes an SHD-layout file of len(labels) samples; spikes writes the spikes/times (of element
// type tt) and spikes/units datasets into the spikes group.
func writeFile(path string, labels []int32, o WriteOptions, spikes func(f *h5.File, tt h5.Type) error) error {
	tt := o.TimeType
	if tt == 0 {
		tt = h5.F32
	}
	f, err := h5.Create(path)
	if err != nil {
		return err
	}
	lab := make([]int64, len(labels))
	for i, l := range labels {
		lab[i] = int64(l)
	}
	steps := []func() error{
		func() error { return f.CreateGroup("spikes") },
		func() error { return spikes(f, tt) },
		func() error { return f.WriteInts("labels", h5.U16, lab) },
	}
	if o.Keys != nil || o.Speakers != nil || o.Gender != nil {
		steps = append(steps, func() error { return f.CreateGroup("extra") })
	}
	if o.Keys != nil {
		steps = append(steps, func() error { return f.WriteStrings("extra/keys", o.Keys) })
	}
	if o.Speakers != nil {
		steps = append(steps, func() error { return f.WriteInts("extra/speaker", h5.U16, o.Speakers) })
	}
	if o.Gender != nil {
		steps = append(steps,
			func() error { return f.CreateGroup("extra/meta_info") },
			func() error { return f.WriteStrings("extra/meta_info/gender", o.Gender) },
			func() error { return f.WriteInts("extra/meta_info/age", h5.U16, o.Age) },
			func() error { return f.WriteFloats("extra/meta_info/body_height", h5.F32, o.BodyHeight) },
		)
	}
	for _, s := range steps {
		if err := s(); err != nil {
			f.Abort()
			return err
		}
	}
	return f.Close()
}
