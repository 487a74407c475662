// Package data defines the in-memory form that every dataset of the toolkit is delivered in, and a registry
// of datasets by name.
//
// A dataset is a set of labelled sequences: inputs [examples, time, features] (spike counts, binary spikes,
// pixels or acoustic features, one row per time bin of Dt seconds) and integer class labels. Readers of real
// datasets and synthetic generators (package data/synth) both produce a *Dataset; the trainer (fits/train)
// only sees this type.
//
// A Set holds its inputs by what they are (Encoding): binary spikes as one bit per value, spike counts and
// pixels as one byte per value, acoustic features as float32. Readers and trainers see float32 values:
// ExampleInto expands one example into a caller's buffer, bit for bit the value that was stored. Subset,
// Head and the split functions return views that index into their set and do not copy its inputs.
package data

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Dataset is a classification task with its splits.
type Dataset struct {
	// Name is the registry name, e.g. "synthetic".
	Name string
	// Classes is the number of classes.
	Classes int
	// Dt is the duration of one time bin, in seconds.
	Dt float64
	// Train and Test are always present; Val is nil when the dataset has no official validation split.
	Train, Val, Test *Set
}

// Validate checks the splits, that the train and test splits hold at least one example and that all
// labels lie in [0, Classes).
func (d *Dataset) Validate() error {
	if d.Classes < 2 {
		return fmt.Errorf("dataset %q: %d classes", d.Name, d.Classes)
	}
	if !(d.Dt > 0) {
		return fmt.Errorf("dataset %q: time bin %g s", d.Name, d.Dt)
	}
	for _, sp := range []struct {
		name string
		set  *Set
	}{{"train", d.Train}, {"val", d.Val}, {"test", d.Test}} {
		if sp.set == nil {
			if sp.name == "val" {
				continue
			}
			return fmt.Errorf("dataset %q: no %s split", d.Name, sp.name)
		}
		if err := sp.set.Validate(); err != nil {
			return fmt.Errorf("dataset %q, %s split: %w", d.Name, sp.name, err)
		}
		if sp.set.N == 0 && sp.name != "val" {
			return fmt.Errorf("dataset %q: the %s split holds no examples", d.Name, sp.name)
		}
		if sp.set.F != d.Train.F || sp.set.T != d.Train.T {
			return fmt.Errorf("dataset %q: %s split has [T=%d, F=%d], train has [T=%d, F=%d]",
				d.Name, sp.name, sp.set.T, sp.set.F, d.Train.T, d.Train.F)
		}
		for i, l := range sp.set.Labels {
			if l < 0 || int(l) >= d.Classes {
				return fmt.Errorf("dataset %q, %s split: label %d of example %d outside [0, %d)",
					d.Name, sp.name, l, i, d.Classes)
			}
		}
	}
	return nil
}

// LoadSplits sets the splits of d to the sets that load reads from paths, by split name ("train", "valid",
// "test"), each keeping at most limit examples (0: all), and returns d (nil with the first error).
func LoadSplits(d *Dataset, paths map[string]string, limit int, load func(path string, limit int) (*Set, error)) (*Dataset, error) {
	for _, sp := range []struct {
		name string
		set  **Set
	}{{"train", &d.Train}, {"valid", &d.Val}, {"test", &d.Test}} {
		if p, ok := paths[sp.name]; ok {
			s, err := load(p, limit)
			if err != nil {
				return nil, err
			}
			*sp.set = s
		}
	}
	return d, nil
}

// SplitCaches says how EnsureSplits names, checks and writes the converted cache of each split of a dataset.
type SplitCaches struct {
	Splits []string
	// Path returns the cache file of a split.
	Path func(split string) string
	// Reusable reports whether the file at path can stay; false comes with the reason to print before
	// converting again (nil when there is none to give, e.g. no file).
	Reusable func(path string) (bool, error)
	// Replaceable refuses to write over path when fits did not write the file there (cache.CheckReplace).
	Replaceable func(path string) error
	// Prepare, when not nil, runs once before the first conversion.
	Prepare func() error
	// Convert writes the cache of split at path.
	Convert func(split, path string) error
}

// EnsureSplits keeps the cache of each split that c.Reusable accepts, converts the others (saying why on w),
// and returns the cache paths by split.
func EnsureSplits(c SplitCaches, w io.Writer) (map[string]string, error) {
	out := map[string]string{}
	prepare := c.Prepare
	for _, split := range c.Splits {
		dst := c.Path(split)
		if ok, why := c.Reusable(dst); ok {
			out[split] = dst
			continue
		} else if err := c.Replaceable(dst); err != nil {
			return nil, err
		} else if why != nil && w != nil {
			fmt.Fprintf(w, "%v; converting again\n", why)
		}
		if prepare != nil {
			if err := prepare(); err != nil {
				return nil, err
			}
			prepare = nil
		}
		if err := c.Convert(split, dst); err != nil {
			return nil, err
		}
		out[split] = dst
	}
	return out, nil
}

// Options are the generic loading options that every registered dataset accepts.
type Options struct {
	// Dir is where a dataset's files live (ignored by generated datasets).
	Dir string
	// Small asks for a reduced version (fewer examples), for tests and quick runs.
	Small bool
	// InputCounts asks spiking datasets (SHD, SSC and the espeak-ng digits) for spike counts per bin
	// instead of binary inputs (a bin with several spikes is 1, the released code's default).
	InputCounts bool
	// AudioFrontEnd names the front end of the audio datasets (GSC and the espeak-ng digits through it):
	// "" or "released" for the released code's recipe, "logmel" for the earlier log-Mel features.
	AudioFrontEnd string
}

// SmallLimit returns n when o.Small asks for a reduced dataset, 0 (no limit) otherwise.
func (o Options) SmallLimit(n int) int {
	if o.Small {
		return n
	}
	return 0
}

// Loader builds a dataset from options.
type Loader func(opts Options) (*Dataset, error)

var (
	registryMu sync.Mutex
	registry   = map[string]registered{}
)

type registered struct {
	summary string
	load    Loader
	timeBin TimeBinFunc
}

// TimeBinFunc returns the time bin Dt, in seconds, of a dataset loaded with opts, without loading it
// (0 when opts are invalid: Load reports why).
type TimeBinFunc func(opts Options) float64

// Register makes a dataset loadable by name; packages call it from init. It panics on a duplicate name (a
// programming error).
func Register(name, summary string, load Loader) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("data: dataset registered twice: " + name)
	}
	registry[name] = registered{summary: summary, load: load}
}

// RegisterTimeBin records how to know the time bin of the registered dataset name before loading it, so
// that a configuration's constants can be checked against it before any file is read (TimeBin). It panics
// on a name that is not registered (a programming error).
func RegisterTimeBin(name string, dt TimeBinFunc) {
	registryMu.Lock()
	defer registryMu.Unlock()
	r, ok := registry[name]
	if !ok {
		panic("data: time bin of an unregistered dataset: " + name)
	}
	r.timeBin = dt
	registry[name] = r
}

// TimeBin returns the time bin Dt, in seconds, that the named dataset loaded with opts has, and whether it
// is known before loading (RegisterTimeBin).
func TimeBin(name string, opts Options) (float64, bool) {
	registryMu.Lock()
	r, ok := registry[name]
	registryMu.Unlock()
	if !ok || r.timeBin == nil {
		return 0, false
	}
	dt := r.timeBin(opts)
	return dt, dt > 0
}

// Names lists the registered datasets, sorted.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	return slices.Sorted(maps.Keys(registry))
}

// Summary returns the one-line description of a registered dataset ("" if unknown).
func Summary(name string) string {
	registryMu.Lock()
	defer registryMu.Unlock()
	return registry[name].summary
}

// UnknownError is returned by Load for a name that is not registered; it lists the valid names.
type UnknownError struct {
	Name  string
	Valid []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown dataset %q (valid: %s)", e.Name, strings.Join(e.Valid, ", "))
}

// Load builds the named dataset and validates it. A dataset that fails validation (labels out of range,
// an empty split, splits of different shapes) is a FileError: its files are at fault.
func Load(name string, opts Options) (*Dataset, error) {
	registryMu.Lock()
	r, ok := registry[name]
	registryMu.Unlock()
	if !ok {
		return nil, &UnknownError{Name: name, Valid: Names()}
	}
	d, err := r.load(opts)
	if err != nil {
		return nil, fmt.Errorf("dataset %q: %w", name, err)
	}
	if d.Name == "" {
		d.Name = name
	}
	if err := d.Validate(); err != nil {
		return nil, BadFile(err)
	}
	return d, nil
}
