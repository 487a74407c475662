package gsc

import (
	"fmt"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/mel"
	"github.com/fits-snn/fits/data/melspec"
)

// Front-end names.
const (
	// FrontEndReleased is the released code's recipe (package data/melspec): librosa's magnitude mel
	// spectrogram in dB relative to the clip's maximum, 100 frames, one z-score per clip. The default.
	FrontEndReleased = "released"
	// FrontEndLogMel is this toolkit's earlier front end (package data/mel): natural log of HTK mel
	// energies, uncentred frames, each band standardised with the training split's statistics at load.
	FrontEndLogMel = "logmel"
)

// FrontEndNames lists the accepted front-end names, the default first.
func FrontEndNames() []string { return []string{FrontEndReleased, FrontEndLogMel} }

// FrontEnd is the feature recipe that turns a 16 kHz clip into [Frames, Bands] features.
type FrontEnd struct {
	// Name is FrontEndReleased or FrontEndLogMel.
	Name string `json:"name"`
	// Released holds the parameters when Name is FrontEndReleased.
	Released *melspec.Config `json:"released,omitempty"`
	// LogMel holds the parameters when Name is FrontEndLogMel.
	LogMel *mel.Config `json:"logmel,omitempty"`
}

// DefaultFrontEnd returns the released recipe with the released parameters.
func DefaultFrontEnd() FrontEnd {
	c := melspec.Released()
	return FrontEnd{Name: FrontEndReleased, Released: &c}
}

// LogMelFrontEnd returns the earlier log-Mel front end with parameters c.
func LogMelFrontEnd(c mel.Config) FrontEnd { return FrontEnd{Name: FrontEndLogMel, LogMel: &c} }

// ParseFrontEnd returns the front end of a name with its default parameters: "released" (or "") or
// "logmel".
func ParseFrontEnd(name string) (FrontEnd, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", FrontEndReleased:
		return DefaultFrontEnd(), nil
	case FrontEndLogMel:
		return LogMelFrontEnd(mel.Default()), nil
	}
	return FrontEnd{}, fmt.Errorf("unknown front end %q (valid: %s)", name, strings.Join(FrontEndNames(), ", "))
}

// Check validates the front end and its parameters.
func (f FrontEnd) Check() error {
	switch {
	case f.Name == FrontEndReleased && f.Released != nil:
		return f.Released.Check()
	case f.Name == FrontEndLogMel && f.LogMel != nil:
		_, err := mel.New(*f.LogMel)
		return err
	}
	return fmt.Errorf("bad front end %+v (valid names: %s, with their parameters)", f, strings.Join(FrontEndNames(), ", "))
}

// dims are the sizes of a front end's features and the rate and hop of its frames.
type dims struct{ frames, bands, rate, hop int }

func (f FrontEnd) dims() dims {
	if f.Name == FrontEndLogMel {
		c := f.LogMel
		return dims{c.Frames, c.Bands, c.SampleRate, c.Hop}
	}
	c := f.Released
	return dims{c.Frames, c.Bands, c.SampleRate, c.Hop}
}

// Frames returns the number of frames T of one clip's features.
func (f FrontEnd) Frames() int { return f.dims().frames }

// Bands returns the number of features F per frame.
func (f FrontEnd) Bands() int { return f.dims().bands }

// SampleRate returns the sampling rate the front end expects, in Hz.
func (f FrontEnd) SampleRate() int { return f.dims().rate }

// Dt returns the frame hop in seconds.
func (f FrontEnd) Dt() float64 { return float64(f.dims().hop) / float64(f.dims().rate) }

// StandardizeBands reports whether loading standardises each band with the training split's statistics
// (the log-Mel front end); the released recipe's features are already z-scored per clip.
func (f FrontEnd) StandardizeBands() bool { return f.Name == FrontEndLogMel }

// Tag names the front end for cache file names: "melspec40-t100-hop160-fft480" for the released
// recipe, "mel40-t100-hop160" for the log-Mel one (the name its caches had before).
func (f FrontEnd) Tag() string {
	if f.Name == FrontEndLogMel {
		return fmt.Sprintf("mel%d-t%d-hop%d", f.LogMel.Bands, f.LogMel.Frames, f.LogMel.Hop)
	}
	return f.Released.Tag()
}

// FrontEndVersion numbers what this package writes into feature caches; caches made by another version
// or front end are converted again.
const FrontEndVersion = 1

// ID names the recipe in a cache's metadata (cache.FrontEndField), e.g. "audio-features/v1 released
// melspec40-t100-hop160-fft480".
func (f FrontEnd) ID() string {
	return fmt.Sprintf("audio-features/v%d %s %s", FrontEndVersion, f.Name, f.Tag())
}

// Extractor computes the features of one clip; one per goroutine.
type Extractor interface {
	// Features writes the features of signal (samples in [-1, 1) at the front end's rate) into dst,
	// [Frames, Bands] row-major.
	Features(signal []float64, dst []float32) error
}

// streamExtractor is an Extractor that reads the samples it needs a few at a time (read(dst, start) writes
// samples start .. start+len(dst)-1 of a signal of n), so that a long clip costs the memory of its output.
type streamExtractor interface {
	FeaturesFrom(n int, read func(dst []float64, start int) error, dst []float32) error
}

// Both front ends stream (ClipFeatures relies on it).
var (
	_ streamExtractor = (*melspec.Extractor)(nil)
	_ streamExtractor = logMelExtractor{}
)

type logMelExtractor struct{ e *mel.Extractor }

func (l logMelExtractor) Features(x []float64, dst []float32) error { return l.e.LogMel(x, dst) }

// FeaturesFrom reads only the samples the first Frames frames cover: the log-Mel features of a frame
// depend on its samples alone.
func (l logMelExtractor) FeaturesFrom(n int, read func(dst []float64, start int) error, dst []float32) error {
	c := l.e.Config()
	x := make([]float64, min(n, (c.Frames-1)*c.Hop+max(c.Window, c.FFTSize)))
	if err := read(x, 0); err != nil {
		return err
	}
	return l.e.LogMel(x, dst)
}

// NewExtractor returns an extractor of the front end.
func (f FrontEnd) NewExtractor() (Extractor, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	if f.Name == FrontEndLogMel {
		e, err := mel.New(*f.LogMel)
		return logMelExtractor{e}, err
	}
	return melspec.New(*f.Released)
}

// ClipFeatures reads one WAV file (mono 16-bit PCM at the front end's rate) and returns its features,
// [Frames, Bands] row-major: exactly what the network is fed for it (for the log-Mel front end, before the
// per-band standardisation of the dataset). Errors name the file; unreadable or malformed files are
// data.FileErrors.
func ClipFeatures(path string, f FrontEnd) ([]float32, error) {
	e, err := f.NewExtractor()
	if err != nil {
		return nil, err
	}
	w, err := openWAVAt(path, f.SampleRate())
	if err != nil {
		return nil, err
	}
	defer w.Close()
	out := make([]float32, f.Frames()*f.Bands())
	// The samples are read where they lie, a frame at a time: a WAV of half an hour gives its first
	// second of features in the memory of that second (the whole file as float64 took 400 MB).
	if err := e.(streamExtractor).FeaturesFrom(w.Len(), w.Read, out); err != nil {
		if data.IsBadFile(err) {
			return nil, err
		}
		return nil, badClip(path, err)
	}
	return out, nil
}

// badClip marks a feature error of the clip at path as a data.FileError naming it.
func badClip(path string, err error) error {
	return data.BadFile(fmt.Errorf("%s: %w", path, err))
}
