package espeak

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/download"
	"github.com/fits-snn/fits/data/shd"
)

// Name is the registry name of the generated dataset.
const Name = "espeak-digits"

// smallN is the number of examples per split kept by Options.Small.
const smallN = 128

func init() {
	data.Register(Name, "spoken digits (English and German) synthesised by espeak-ng, cochlea-encoded to 700 channels, binned like SHD [T=250, F=140] binary spikes", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(o, DefaultConfig(), shd.OptionsBinning(o), os.Stderr)
	})
	data.RegisterTimeBin(Name, func(o data.Options) float64 { return shd.OptionsBinning(o).Dt() })
}

// EnsureCaches generates the HDF5 files in dir when missing (needs espeak-ng), converts them with
// the SHD binning once, and returns the cache paths by split.
func EnsureCaches(dir string, c Config, b shd.Binning, w io.Writer) (map[string]string, error) {
	return data.EnsureSplits(data.SplitCaches{
		Splits:      []string{"train", "test"},
		Path:        func(split string) string { return shd.CachePath(dir, "espeak", split, b) },
		Reusable:    func(dst string) (bool, error) { return cache.ReusableAs(dst, b.FrontEnd(), b.CacheType()) },
		Replaceable: cache.CheckReplace,
		Convert: func(split, dst string) error {
			src := filepath.Join(dir, FileName(split))
			if err := ensureGenerated(dir, c, src, w); err != nil {
				return err
			}
			_, err := shd.Convert(src, dst, "espeak", split, Classes, b, w)
			return err
		},
	}, w)
}

// ensureGenerated generates the audio of both splits into dir (Generate) when the file source is missing.
func ensureGenerated(dir string, c Config, source string, w io.Writer) error {
	if _, err := os.Stat(source); err == nil {
		return nil
	}
	if err := Generate(context.Background(), c, dir, w); err != nil {
		return fmt.Errorf("generating %s: %w", dir, err)
	}
	return nil
}

// LoadDataset loads the dataset from o.Dir — the dataset folder, or a root holding espeak/
// (download.ResolveDir; default download.DefaultDir("espeak")) — generating and converting it on
// first use. It has train and test splits only.
func LoadDataset(o data.Options, c Config, b shd.Binning, w io.Writer) (*data.Dataset, error) {
	paths, err := EnsureCaches(download.ResolveDir(o.Dir, "espeak"), c, b, w)
	if err != nil {
		return nil, err
	}
	return data.LoadSplits(&data.Dataset{Name: Name, Classes: Classes, Dt: b.Dt()}, paths, o.SmallLimit(smallN), cache.LoadSet)
}
