package shd

import (
	"io"
	"os"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/download"
)

// Validation protocol of SHD*: 20 % of the training set is held out, stratified by class, with a
// fixed seed, and test accuracy is reported at the best validation epoch.
const (
	ValidationFraction = 0.2
	ValidationSeed     = 0
)

// smallN is the number of examples per split kept by Options.Small.
const smallN = 256

func init() {
	data.Register("shd", "Spiking Heidelberg Digits, 20 classes, [T=250, F=140] spike counts, train/test", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(SHD, o, DefaultBinning(), false, os.Stderr)
	})
	data.Register("shd-val", "Spiking Heidelberg Digits with 20% of train held out for validation (seed 0)", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(SHD, o, DefaultBinning(), true, os.Stderr)
	})
	data.Register("ssc", "Spiking Speech Commands, 35 classes, [T=250, F=140] spike counts, train/valid/test", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(SSC, o, DefaultBinning(), false, os.Stderr)
	})
}

// LoadDataset converts the splits found in o.Dir once — the dataset folder, or a root holding
// DATASET/ (download.ResolveDir; default download.DefaultDir(dataset)) — then
// loads the caches as float32 spike counts [N, T, Features]. holdOut splits SHD's training set by
// ValidationFraction and ValidationSeed; SSC uses its official validation split. o.Small keeps 256
// evenly spaced examples of each split.
func LoadDataset(dataset string, o data.Options, b Binning, holdOut bool, w io.Writer) (*data.Dataset, error) {
	dir := download.ResolveDir(o.Dir, dataset)
	classes, err := Classes(dataset)
	if err != nil {
		return nil, err
	}
	paths, err := EnsureCaches(dir, dataset, b, w)
	if err != nil {
		return nil, err
	}
	d := &data.Dataset{Name: dataset, Classes: classes, Dt: b.Dt()}
	for split, p := range paths {
		l := 0
		if o.Small {
			l = smallN
		}
		s, err := cache.LoadSet(p, l)
		if err != nil {
			return nil, err
		}
		switch split {
		case "train":
			d.Train = s
		case "valid":
			d.Val = s
		case "test":
			d.Test = s
		}
	}
	if holdOut {
		d.Name = dataset + "-val"
		d.Train, d.Val = d.Train.SplitOff(ValidationFraction, ValidationSeed)
	}
	return d, nil
}
