// Package shd reads the Spiking Heidelberg Digits (SHD) and Spiking Speech Commands (SSC) datasets
// from their official HDF5 files and bins their spikes into count tensors.
//
// File layout (one file per split: shd_train.h5, shd_test.h5; ssc_train.h5, ssc_valid.h5,
// ssc_test.h5):
//
//	spikes/times   N rows, each a variable-length array of spike times in seconds (float; 16-, 32- and
//	               64-bit floats are accepted)
//	spikes/units   N rows, each a variable-length array of the emitting input channel 0..699 (unsigned
//	               16-bit integers in the official files; any integer type is accepted)
//	labels         N class labels (unsigned 16-bit integers), 0..19 for SHD, 0..34 for SSC
//	extra/...      optional metadata: speaker (N integers), keys (class names, strings) and
//	               meta_info/{gender, age, body_height} per speaker
//
// Binning (the released code's input representation, common/spike_data.py): the 700 channels are
// grouped by 5 into 140 features (channel u feeds feature ⌊u/5⌋), and the first 1.0 s is cut into
// T = 250 bins of 4 ms: a spike at t seconds falls into bin ⌊t/1 s · 250⌋, computed in the precision
// the file stores the times in (float16 in the official files), as numpy computes it; later spikes are
// dropped. A bin is 1 when its channel group spiked in its time window, 0 otherwise (binary inputs,
// the default), or holds the number of spikes (Binning.Counts). All of it is configurable (Binning).
package shd

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/h5"
)

// Dataset names and their class counts.
const (
	SHD        = "shd"
	SSC        = "ssc"
	SHDClasses = 20
	SSCClasses = 35
	// Channels is the number of input channels (cochlea model afferents) of both datasets.
	Channels = 700
)

// Splits returns the official split names of a dataset: SHD has train and test, SSC also valid.
func Splits(dataset string) ([]string, error) {
	switch dataset {
	case SHD:
		return []string{"train", "test"}, nil
	case SSC:
		return []string{"train", "valid", "test"}, nil
	}
	return nil, fmt.Errorf("unknown spiking dataset %q (valid: shd, ssc)", dataset)
}

// Classes returns the number of classes of a dataset (20 for SHD, 35 for SSC).
func Classes(dataset string) (int, error) {
	switch dataset {
	case SHD:
		return SHDClasses, nil
	case SSC:
		return SSCClasses, nil
	}
	return 0, fmt.Errorf("unknown spiking dataset %q (valid: shd, ssc)", dataset)
}

// FileName returns the official file name of a split, e.g. "shd_train.h5".
func FileName(dataset, split string) string { return dataset + "_" + split + ".h5" }

// Binning turns spike events into an input tensor [T, Features] of binary spikes or spike counts.
type Binning struct {
	Channels int     // input channels in the file (700)
	Group    int     // adjacent channels pooled into one feature (5)
	T        int     // time bins (250)
	Duration float64 // seconds covered by the T bins (1.0); later spikes are dropped
	// Counts keeps the number of spikes of a bin (at most MaxCount); false makes every bin that holds a
	// spike 1 (binary inputs, the released code's representation).
	Counts bool `json:"counts,omitempty"`
}

// DefaultBinning is the released code's representation: 700 channels in groups of 5 (140 features),
// 1.0 s in 250 bins of 4 ms, binary inputs.
func DefaultBinning() Binning { return Binning{Channels: Channels, Group: 5, T: 250, Duration: 1.0} }

// Mode names the input representation: "binary" or "counts".
func (b Binning) Mode() string {
	if b.Counts {
		return "counts"
	}
	return "binary"
}

// ConverterVersion numbers the binning arithmetic of this package. Version 2: bins by the released
// code's arithmetic in the file's time precision, binary inputs unless Counts. Caches made by another
// version are converted again (FrontEnd).
const ConverterVersion = 2

// FrontEnd names the recipe of a cache made with this binning, e.g. "spike-bins/v2 binary
// t250-d1000ms-c700g5"; a cache whose metadata names another is converted again.
func (b Binning) FrontEnd() string {
	return fmt.Sprintf("spike-bins/v%d %s %s", ConverterVersion, b.Mode(), b.Tag())
}

// Features returns the number of features per time bin, ceil(Channels / Group).
func (b Binning) Features() int { return (b.Channels + b.Group - 1) / b.Group }

// Dt returns the bin width in seconds.
func (b Binning) Dt() float64 { return b.Duration / float64(b.T) }

// Check validates the binning parameters.
func (b Binning) Check() error {
	if b.Channels <= 0 || b.Group <= 0 || b.Group > b.Channels || b.T <= 0 || !(b.Duration > 0) || math.IsInf(b.Duration, 0) {
		return fmt.Errorf("bad binning %+v: need channels > 0, 1 <= group <= channels, T > 0, duration > 0", b)
	}
	return nil
}

// Tag names the binning for cache file names, e.g. "t250-d1000ms-c700g5" (binary inputs) or
// "t250-d1000ms-c700g5-counts".
func (b Binning) Tag() string {
	t := fmt.Sprintf("t%d-d%gms-c%dg%d", b.T, b.Duration*1000, b.Channels, b.Group)
	if b.Counts {
		t += "-counts"
	}
	return t
}

// MaxCount is the largest count a bin can hold in a cache (uint8); larger counts are clipped to it.
// With groups of 5 channels and 4 ms bins the real datasets stay far below it.
const MaxCount = 255

// Stats counts what binning dropped, merged or clipped.
type Stats struct {
	Spikes  int // spikes read
	Late    int // spikes whose bin is T or later (at or after Duration), dropped
	Merged  int // binary inputs: spikes that fell into a bin already holding one
	Clipped int // counts: spikes lost by clipping counts at MaxCount
}

// Add accumulates s into t.
func (t *Stats) Add(s Stats) {
	t.Spikes += s.Spikes
	t.Late += s.Late
	t.Merged += s.Merged
	t.Clipped += s.Clipped
}

// Precision is the floating-point format a file stores spike times in: 16, 32 or 64 bits.
type Precision int

// Time precisions.
const (
	Float16 Precision = 16
	Float32 Precision = 32
	Float64 Precision = 64
)

// round rounds x to the nearest value of the format p, ties to even (as numpy rounds a float16 or
// float32 result). Subnormal results of float16 are not modelled: they only occur below 2⁻¹⁴, where the
// bin index is 0 either way.
func (p Precision) round(x float64) float64 {
	switch p {
	case Float32:
		return float64(float32(x))
	case Float16:
		if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return x
		}
		frac, exp := math.Frexp(x) // x = frac·2^exp, 0.5 ≤ |frac| < 1
		r := math.Ldexp(math.RoundToEven(math.Ldexp(frac, 11)), exp-11)
		if math.Abs(r) > 65504 {
			return math.Inf(1)
		}
		return r
	}
	return x
}

// Index returns the time bin of a spike at t seconds stored with precision p: ⌊t / Duration · T⌋ with
// each operation rounded to p, as numpy evaluates the released code's expression on an array of that
// type. A result of T or more means the spike is dropped.
func (b Binning) Index(t float64, p Precision) int {
	r := p.round(p.round(t/b.Duration) * float64(b.T))
	if !(r < float64(b.T)) {
		return b.T
	}
	return int(math.Floor(r))
}

// Bin adds the spikes (times in seconds, units in 0..Channels-1) of one sample into dst, a zeroed
// [T, Features] uint8 tensor (row-major: dst[t*Features+f]), with times in float64 arithmetic; see
// BinIn.
func (b Binning) Bin(times []float64, units []int64, dst []uint8) (Stats, error) {
	return b.BinIn(Float64, times, units, dst)
}

// BinIn adds the spikes of one sample into dst, a zeroed [T, Features] uint8 tensor (row-major:
// dst[t*Features+f]). Times are in seconds, stored with precision p, units in 0..Channels-1. A spike at
// time t falls into bin Index(t, p) of feature ⌊unit/Group⌋; spikes of bin T or later are dropped and
// counted in Stats.Late. The bin becomes 1 (binary inputs) or is incremented (Counts). Negative times,
// NaN and channels outside 0..Channels-1 are errors.
func (b Binning) BinIn(p Precision, times []float64, units []int64, dst []uint8) (Stats, error) {
	st := Stats{Spikes: len(times)}
	F := b.Features()
	if len(dst) != b.T*F {
		return st, fmt.Errorf("bin buffer of %d, need %d", len(dst), b.T*F)
	}
	if len(times) != len(units) {
		return st, fmt.Errorf("%d spike times but %d spike units", len(times), len(units))
	}
	for i, s := range times {
		u := units[i]
		if u < 0 || u >= int64(b.Channels) {
			return st, fmt.Errorf("spike %d: unit %d outside 0..%d", i, u, b.Channels-1)
		}
		if !(s >= 0) {
			return st, fmt.Errorf("spike %d: time %g s is negative or NaN", i, s)
		}
		k := b.Index(s, p)
		if k >= b.T {
			st.Late++
			continue
		}
		j := k*F + int(u)/b.Group
		switch {
		case !b.Counts && dst[j] != 0:
			st.Merged++
		case !b.Counts:
			dst[j] = 1
		case dst[j] == MaxCount:
			st.Clipped++
		default:
			dst[j]++
		}
	}
	return st, nil
}

// File is an open SHD or SSC split file, with its labels checked.
type File struct {
	h      *h5.File
	path   string
	labels []int32
	prec   Precision
}

// Open opens a split file and checks its layout: spikes/times a VLEN of floats, spikes/units a VLEN
// of integers, labels integers in 0..classes-1, and all three of the same length. Errors are
// data.FileErrors that name the file.
//
// The file is read first in a child process (checkIsolated): a file that crashes the HDF5 library there
// is reported as corrupt instead of taking this process down.
func Open(path string, classes int) (_ *File, err error) {
	defer func() { err = data.BadFile(err) }()
	if err := checkIsolated(path, classes); err != nil {
		return nil, err
	}
	return open(path, classes)
}

// open is Open without the child process.
func open(path string, classes int) (_ *File, err error) {
	defer func() { err = data.BadFile(err) }()
	h, err := h5.Open(path)
	if err != nil {
		return nil, err
	}
	f := &File{h: h, path: path}
	if err := f.check(classes); err != nil {
		h.Close()
		return nil, err
	}
	return f, nil
}

func (f *File) check(classes int) error {
	for _, want := range []struct {
		name        string
		class, base h5.Class
		desc        string
	}{
		{"spikes/times", h5.VLen, h5.Float, "a variable-length array of float spike times"},
		{"spikes/units", h5.VLen, h5.Integer, "a variable-length array of integer channel indices"},
		{"labels", h5.Integer, 0, "integer class labels"},
	} {
		if !f.h.Exists(want.name) {
			return fmt.Errorf("%s: not an SHD/SSC file: missing dataset %s (%s)", f.path, want.name, want.desc)
		}
		info, err := f.h.Info(want.name)
		if err != nil {
			return err
		}
		if info.Class != want.class || (want.class == h5.VLen && info.Base != want.base) || len(info.Dims) != 1 {
			return fmt.Errorf("%s: %s is %v of shape %v, want %s", f.path, want.name, info, info.Dims, want.desc)
		}
		if want.name == "spikes/times" {
			switch info.BaseSize {
			case 2, 4, 8:
				f.prec = Precision(8 * info.BaseSize)
			default:
				return fmt.Errorf("%s: spikes/times is %v, want 16-, 32- or 64-bit floats", f.path, info)
			}
		}
	}
	labels, err := f.h.ReadInts("labels")
	if err != nil {
		return err
	}
	nt, _ := f.h.Len("spikes/times")
	nu, _ := f.h.Len("spikes/units")
	if nt != len(labels) || nu != len(labels) {
		return fmt.Errorf("%s: %d labels but %d spike time rows and %d unit rows", f.path, len(labels), nt, nu)
	}
	f.labels = make([]int32, len(labels))
	for i, l := range labels {
		if l < 0 || l >= int64(classes) {
			return fmt.Errorf("%s: label %d of sample %d outside 0..%d", f.path, l, i, classes-1)
		}
		f.labels[i] = int32(l)
	}
	return nil
}

// Close closes the file.
func (f *File) Close() error { return f.h.Close() }

// Path returns the file name.
func (f *File) Path() string { return f.path }

// Len returns the number of samples.
func (f *File) Len() int { return len(f.labels) }

// Labels returns the class labels (shared, do not modify).
func (f *File) Labels() []int32 { return f.labels }

// TimePrecision returns the floating-point format of the file's spike times.
func (f *File) TimePrecision() Precision { return f.prec }

// Spikes holds the spikes of consecutive samples: sample i has Times[Offs[i]:Offs[i+1]] (seconds)
// and Units[Offs[i]:Offs[i+1]] (channels).
type Spikes struct {
	Times []float64
	Units []int64
	Offs  []int
}

// Len returns the number of samples held.
func (s *Spikes) Len() int { return len(s.Offs) - 1 }

// Sample returns the spike times and units of sample i.
func (s *Spikes) Sample(i int) ([]float64, []int64) {
	return s.Times[s.Offs[i]:s.Offs[i+1]], s.Units[s.Offs[i]:s.Offs[i+1]]
}

// Read returns the spikes of samples [start, start+count). Errors are data.FileErrors.
func (f *File) Read(start, count int) (_ *Spikes, err error) {
	defer func() { err = data.BadFile(err) }()
	t, to, err := f.h.ReadVLenFloats("spikes/times", start, count)
	if err != nil {
		return nil, err
	}
	u, uo, err := f.h.ReadVLenInts("spikes/units", start, count)
	if err != nil {
		return nil, err
	}
	for i := range to {
		if to[i] != uo[i] {
			return nil, fmt.Errorf("%s: sample %d has %d spike times but %d units", f.path, start+i-1, to[i]-to[i-1], uo[i]-uo[i-1])
		}
	}
	return &Spikes{Times: t, Units: u, Offs: to}, nil
}

// Extra is the optional metadata of a split file; absent fields are nil.
type Extra struct {
	Speaker []int64  // speaker id of each sample
	Keys    []string // class names, indexed by label
	// Per-speaker information from extra/meta_info.
	Gender     []string
	Age        []float64
	BodyHeight []float64
}

// readLabels reads a dataset of strings, or of integers written as decimal strings.
func (f *File) readLabels(name string) ([]string, error) {
	info, err := f.h.Info(name)
	if err != nil {
		return nil, err
	}
	if info.Class != h5.Integer {
		return f.h.ReadStrings(name)
	}
	v, err := f.h.ReadInts(name)
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = fmt.Sprint(x)
	}
	return out, err
}

// ReadExtra reads the extra group; missing datasets are left nil, malformed ones are errors
// (data.FileErrors).
func (f *File) ReadExtra() (_ *Extra, err error) {
	defer func() { err = data.BadFile(err) }()
	e := &Extra{}
	readOptional(f, &err, "extra/speaker", &e.Speaker, f.h.ReadInts)
	readOptional(f, &err, "extra/keys", &e.Keys, f.readLabels)
	readOptional(f, &err, "extra/meta_info/gender", &e.Gender, f.readLabels)
	readOptional(f, &err, "extra/meta_info/age", &e.Age, f.h.ReadFloats)
	readOptional(f, &err, "extra/meta_info/body_height", &e.BodyHeight, f.h.ReadFloats)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// readOptional reads the dataset name with read into *dst when the file holds it and no earlier read
// failed (*err is nil); a failure goes to *err.
func readOptional[T any](f *File, err *error, name string, dst *T, read func(name string) (T, error)) {
	if *err == nil && f.h.Exists(name) {
		*dst, *err = read(name)
	}
}
