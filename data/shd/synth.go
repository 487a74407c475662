package shd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fits-snn/fits/data/h5"
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
	Seed       uint64
}

// Synthesize draws spikes and labels for c. Spike times within a sample are sorted, as in the
// official files.
func Synthesize(c SynthConfig) (*Spikes, []int32, error) {
	if c.Samples < 0 || c.Classes <= 0 || c.MeanSpikes < 0 || c.Channels <= 0 || !(c.Duration > 0) {
		return nil, nil, fmt.Errorf("bad synthetic configuration %+v", c)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x5d5d))
	sp := &Spikes{Offs: make([]int, 1, c.Samples+1)}
	labels := make([]int32, c.Samples)
	type ev struct {
		t float64
		u int64
	}
	var evs []ev
	for i := range labels {
		cl := i % c.Classes
		labels[i] = int32(cl)
		start := float64((cl*37)%c.Channels) / float64(c.Channels)
		slope := (float64(cl%7) - 3) / 4 // channel fraction per second
		n := c.MeanSpikes/2 + rng.IntN(c.MeanSpikes+1)
		evs = evs[:0]
		for k := 0; k < n; k++ {
			t := rng.Float64() * c.Duration
			var u int
			if rng.Float64() < 0.8 {
				centre := math.Mod(start+slope*t+2, 1) * float64(c.Channels)
				u = int(centre+rng.NormFloat64()*float64(c.Channels)/50+float64(c.Channels)) % c.Channels
			} else {
				u = rng.IntN(c.Channels)
			}
			evs = append(evs, ev{t, int64(u)})
		}
		slices.SortFunc(evs, func(a, b ev) int {
			if a.t < b.t {
				return -1
			}
			if a.t > b.t {
				return 1
			}
			return 0
		})
		for _, e := range evs {
			sp.Times = append(sp.Times, e.t)
			sp.Units = append(sp.Units, e.u)
		}
		sp.Offs = append(sp.Offs, len(sp.Times))
	}
	return sp, labels, nil
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
	tt := o.TimeType
	if tt == 0 {
		tt = h5.F32
	}
	f, err := h5.Create(path)
	if err != nil {
		return err
	}
	units := make([]float64, len(sp.Units))
	for i, u := range sp.Units {
		if u < 0 || u > math.MaxUint16 {
			f.Abort()
			return fmt.Errorf("%s: unit %d does not fit uint16", path, u)
		}
		units[i] = float64(u)
	}
	lab := make([]int64, len(labels))
	for i, l := range labels {
		lab[i] = int64(l)
	}
	steps := []func() error{
		func() error { return f.CreateGroup("spikes") },
		func() error { return f.WriteVLen("spikes/times", tt, sp.Times, sp.Offs) },
		func() error { return f.WriteVLen("spikes/units", h5.U16, units, sp.Offs) },
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
