// Package data defines the in-memory form that every dataset of the toolkit is delivered in, and a registry
// of datasets by name.
//
// A dataset is a set of labelled sequences: inputs [examples, time, features] float32 (spike counts, binary
// spikes or acoustic features, one row per time bin of Dt seconds) and integer class labels. Readers of real
// datasets and synthetic generators (package data/synth) both produce a *Dataset; the trainer (fits/train)
// only sees this type.
package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Set is one split of a dataset held in memory.
type Set struct {
	// Inputs holds N examples of T time bins of F features, row-major: Inputs[(n*T+t)*F+f].
	Inputs []float32
	// Labels holds the class of each example, in [0, classes).
	Labels []int32
	// N is the number of examples, T the number of time bins, F the number of features per time bin.
	N, T, F int
	// FeatureShape is the shape of the features of one time bin when they are not a flat vector, e.g.
	// [2, 64, 64] (polarity, height, width) for event cameras; its product is F. Nil means [F].
	FeatureShape []int
}

// Validate checks that the sizes of the slices agree with N, T, F and FeatureShape.
func (s *Set) Validate() error {
	if s == nil {
		return fmt.Errorf("nil set")
	}
	if s.N < 0 || s.T <= 0 || s.F <= 0 {
		return fmt.Errorf("bad set sizes N=%d T=%d F=%d", s.N, s.T, s.F)
	}
	if len(s.Inputs) != s.N*s.T*s.F {
		return fmt.Errorf("inputs hold %d values, want N*T*F = %d*%d*%d", len(s.Inputs), s.N, s.T, s.F)
	}
	if len(s.Labels) != s.N {
		return fmt.Errorf("%d labels for %d examples", len(s.Labels), s.N)
	}
	if s.FeatureShape != nil {
		p := 1
		for _, d := range s.FeatureShape {
			p *= d
		}
		if p != s.F {
			return fmt.Errorf("feature shape %v has %d elements, want F=%d", s.FeatureShape, p, s.F)
		}
	}
	return nil
}

// Example returns the inputs of example i, [T, F] row-major, sharing memory with the set.
func (s *Set) Example(i int) []float32 {
	n := s.T * s.F
	return s.Inputs[i*n : (i+1)*n]
}

// Shape returns the shape of one example: [T, F], or [T, FeatureShape...].
func (s *Set) Shape() []int {
	if s.FeatureShape == nil {
		return []int{s.T, s.F}
	}
	return append([]int{s.T}, s.FeatureShape...)
}

// Subset returns a new set holding copies of the examples at the given indices, in that order.
func (s *Set) Subset(idx []int) *Set {
	n := s.T * s.F
	out := &Set{
		Inputs:       make([]float32, len(idx)*n),
		Labels:       make([]int32, len(idx)),
		N:            len(idx),
		T:            s.T,
		F:            s.F,
		FeatureShape: slices.Clone(s.FeatureShape),
	}
	for j, i := range idx {
		copy(out.Inputs[j*n:(j+1)*n], s.Example(i))
		out.Labels[j] = s.Labels[i]
	}
	return out
}

// Head returns the set restricted to its first n examples, sharing memory with it; the set itself when
// n <= 0, s is nil or n >= s.N.
func (s *Set) Head(n int) *Set {
	if s == nil || n <= 0 || n >= s.N {
		return s
	}
	out := *s
	out.Inputs = s.Inputs[:n*s.T*s.F]
	out.Labels = s.Labels[:n]
	out.N = n
	return &out
}

// SplitOff holds out a fraction of the set, chosen by a permutation drawn from seed, stratified by class so
// that every class keeps the same proportion in both parts. It returns (kept, heldOut); the input set is not
// modified. The same seed always holds out the same examples.
func (s *Set) SplitOff(fraction float64, seed uint64) (kept, heldOut *Set) {
	byClass := map[int32][]int{}
	for i, l := range s.Labels {
		byClass[l] = append(byClass[l], i)
	}
	classes := make([]int32, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	rng := rand.New(rand.NewPCG(seed, 0x5eed5b1175))
	var keep, hold []int
	for _, c := range classes {
		idx := byClass[c]
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		k := int(fraction*float64(len(idx)) + 0.5)
		hold = append(hold, idx[:k]...)
		keep = append(keep, idx[k:]...)
	}
	slices.Sort(keep)
	slices.Sort(hold)
	return s.Subset(keep), s.Subset(hold)
}

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

// Loader builds a dataset from options.
type Loader func(opts Options) (*Dataset, error)

var (
	registryMu sync.Mutex
	registry   = map[string]registered{}
)

type registered struct {
	summary string
	load    Loader
}

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

// Names lists the registered datasets, sorted.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
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
