package gsc

import (
	"io"
	"math"
	"os"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/download"
)

// smallN is the number of examples per split kept by Options.Small.
const smallN = 256

func init() {
	data.Register("gsc", "Google Speech Commands v0.02, 35 words, [T=100, F=40] the released recipe's mel spectrogram in dB, z-scored per clip, train/valid/test", func(o data.Options) (*data.Dataset, error) {
		f, err := ParseFrontEnd(o.AudioFrontEnd)
		if err != nil {
			return nil, err
		}
		return LoadDataset(o, f, os.Stderr)
	})
	data.RegisterTimeBin("gsc", OptionsTimeBin)
}

// LoadDataset converts the clips in o.Dir once with front end f — the dataset folder, or a root holding
// gsc/ (download.ResolveDir; default download.DefaultDir("gsc")) — and loads the official splits as
// [N, Frames, Bands] float32. The released recipe's features are used as they are (z-scored per clip);
// with the log-Mel front end each band is standardised with the mean and standard deviation of the
// training split (over all its frames), the same shift and scale for every split.
func LoadDataset(o data.Options, f FrontEnd, w io.Writer) (*data.Dataset, error) {
	paths, err := EnsureCaches(download.ResolveDir(o.Dir, "gsc"), f, w)
	if err != nil {
		return nil, err
	}
	d, err := data.LoadSplits(&data.Dataset{Name: "gsc", Classes: Classes, Dt: f.Dt()}, paths, o.SmallLimit(smallN), cache.LoadSet)
	if err == nil {
		StandardizeSplits(d, f)
	}
	return d, err
}

// StandardizeSplits standardises each band of every split of d with the mean and standard deviation of
// the training split (BandStats) when the front end f asks for it (FrontEnd.StandardizeBands).
func StandardizeSplits(d *data.Dataset, f FrontEnd) {
	if !f.StandardizeBands() {
		return
	}
	mean, std := BandStats(d.Train)
	for _, s := range []*data.Set{d.Train, d.Val, d.Test} {
		if s != nil {
			Standardize(s, mean, std)
		}
	}
}

// BandStats returns the per-feature mean and standard deviation over all examples and frames.
func BandStats(s *data.Set) (mean, std []float64) {
	mean, std = make([]float64, s.F), make([]float64, s.F)
	n := float64(s.N * s.T)
	if n == 0 {
		for i := range std {
			std[i] = 1
		}
		return mean, std
	}
	x := make([]float32, s.T*s.F)
	for i := range s.N {
		s.ExampleInto(i, x)
		for k, v := range x {
			mean[k%s.F] += float64(v)
		}
	}
	for f := range mean {
		mean[f] /= n
	}
	for i := range s.N {
		s.ExampleInto(i, x)
		for k, v := range x {
			d := float64(v) - mean[k%s.F]
			std[k%s.F] += d * d
		}
	}
	for f := range std {
		std[f] = math.Sqrt(std[f] / n)
		if std[f] == 0 {
			std[f] = 1
		}
	}
	return mean, std
}

// Standardize maps each feature f to (x − mean[f]) / std[f]: s then holds the standardized values as
// float32 in memory of its own (a set read from a cache no longer reads the cache).
func Standardize(s *data.Set, mean, std []float64) {
	n := s.T * s.F
	x := make([]float32, s.N*n)
	for i := range s.N {
		row := x[i*n : (i+1)*n]
		s.ExampleInto(i, row)
		for k, v := range row {
			f := k % s.F
			row[k] = float32((float64(v) - mean[f]) / std[f])
		}
	}
	out := data.NewFloat32Set(x, s.Labels, s.T, s.F)
	out.FeatureShape = s.FeatureShape
	*s = *out
}

// OptionsTimeBin is the time bin, in seconds, of the features of the front end that o names (0 for an
// unknown one): the time bin of gsc and of the espeak-ng digits through the same front end.
func OptionsTimeBin(o data.Options) float64 {
	f, err := ParseFrontEnd(o.AudioFrontEnd)
	if err != nil {
		return 0
	}
	return f.Dt()
}
