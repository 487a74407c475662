package shd

import (
	"io"
	"os"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/download"
)

// Validation protocol of SHD* (the released code's): numpy.random.RandomState(ValidationSeed).permutation(n),
// the first max(1, int(ValidationFraction·n)) examples validate (data.OfficialValSplit); not stratified.
const (
	ValidationFraction = data.OfficialValFraction
	ValidationSeed     = 0
)

// smallN is the number of examples per split kept by Options.Small.
const smallN = 256

func init() {
	data.Register("shd", "Spiking Heidelberg Digits, 20 classes, [T=250, F=140] binary spikes, train/test", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(SHD, o, OptionsBinning(o), false, os.Stderr)
	})
	data.Register("shd-val", "Spiking Heidelberg Digits, the released SHD* split: RandomState(0).permutation, first 20% validate", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(SHD, o, OptionsBinning(o), true, os.Stderr)
	})
	data.Register("ssc", "Spiking Speech Commands, 35 classes, [T=250, F=140] binary spikes, train/valid/test", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(SSC, o, OptionsBinning(o), false, os.Stderr)
	})
	for _, name := range []string{"shd", "shd-val", "ssc"} {
		data.RegisterTimeBin(name, func(o data.Options) float64 { return OptionsBinning(o).Dt() })
	}
}

// OptionsBinning is DefaultBinning with spike counts when o.InputCounts.
func OptionsBinning(o data.Options) Binning {
	b := DefaultBinning()
	b.Counts = o.InputCounts
	return b
}

// LoadDataset converts the splits found in o.Dir once — the dataset folder, or a root holding
// DATASET/ (download.ResolveDir; default download.DefaultDir(dataset)) — then
// loads the caches (cache.LoadSet: memory-mapped where it can) as inputs [N, T, Features]: binary spikes
// held as bits (data.Bits), or counts with b.Counts held as bytes (data.Bytes). holdOut
// splits SHD's training set as the released code's SHD* protocol does (data.OfficialValSplit, seed
// ValidationSeed: Train and Val, views of the training set in permutation order); SSC uses its official
// validation split. o.Small keeps 256 evenly spaced examples of each split (before a hold-out).
func LoadDataset(dataset string, o data.Options, b Binning, holdOut bool, w io.Writer) (*data.Dataset, error) {
	classes, err := Classes(dataset)
	if err != nil {
		return nil, err
	}
	paths, err := EnsureCaches(download.ResolveDir(o.Dir, dataset), dataset, b, w)
	if err != nil {
		return nil, err
	}
	d, err := data.LoadSplits(&data.Dataset{Name: dataset, Classes: classes, Dt: b.Dt()}, paths, o.SmallLimit(smallN), cache.LoadSet)
	if err == nil && holdOut {
		d.Name = dataset + "-val"
		if d.Train, d.Val, err = d.Train.OfficialSplitOff(ValidationSeed); err != nil {
			return nil, err
		}
	}
	return d, err
}
