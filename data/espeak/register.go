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
	return ensureSplits(dir, c, w, splitCache{
		path:     func(split string) string { return shd.CachePath(dir, "espeak", split, b) },
		reusable: func(dst string) (bool, error) { return cache.ReusableAs(dst, b.FrontEnd(), b.CacheType()) },
		source:   func(split string) string { return filepath.Join(dir, FileName(split)) },
		convert: func(split, dst string) error {
			st, err := shd.Convert(filepath.Join(dir, FileName(split)), dst, "espeak", split, Classes, b, w)
			if err != nil {
				return err
			}
			if w != nil {
				fmt.Fprintln(w, shd.ReportStats(dst, b, st))
			}
			return nil
		},
	})
}

// splitCache is how one front end names, checks and writes the cache of a split: path is the
// cache file, reusable says whether a file there can stay, source is the generated file that must
// exist before convert writes the cache.
type splitCache struct {
	path     func(split string) string
	reusable func(dst string) (bool, error)
	source   func(split string) string
	convert  func(split, dst string) error
}

// ensureSplits is EnsureCaches and EnsureMelCaches: for the train and test splits it keeps a
// reusable cache, otherwise (saying why on w) generates the audio when its source is missing and
// converts it; it returns the cache paths by split.
func ensureSplits(dir string, c Config, w io.Writer, sc splitCache) (map[string]string, error) {
	out := map[string]string{}
	for _, split := range []string{"train", "test"} {
		dst := sc.path(split)
		if ok, why := sc.reusable(dst); ok {
			out[split] = dst
			continue
		} else if err := cache.CheckReplace(dst); err != nil {
			return nil, err
		} else if why != nil && w != nil {
			fmt.Fprintf(w, "%v; converting again\n", why)
		}
		if _, err := os.Stat(sc.source(split)); err != nil {
			if err := Generate(context.Background(), c, dir, w); err != nil {
				return nil, fmt.Errorf("generating %s: %w", dir, err)
			}
		}
		if err := sc.convert(split, dst); err != nil {
			return nil, err
		}
		out[split] = dst
	}
	return out, nil
}

// LoadDataset loads the dataset from o.Dir — the dataset folder, or a root holding espeak/
// (download.ResolveDir; default download.DefaultDir("espeak")) — generating and converting it on
// first use. It has train and test splits only.
func LoadDataset(o data.Options, c Config, b shd.Binning, w io.Writer) (*data.Dataset, error) {
	paths, err := EnsureCaches(download.ResolveDir(o.Dir, "espeak"), c, b, w)
	if err != nil {
		return nil, err
	}
	return loadSplits(o, Name, b.Dt(), paths)
}

// loadSplits reads the train and test caches in paths (the first smallN examples of each with
// o.Small) into a dataset called name with time bins of dt seconds.
func loadSplits(o data.Options, name string, dt float64, paths map[string]string) (*data.Dataset, error) {
	limit := 0
	if o.Small {
		limit = smallN
	}
	d := &data.Dataset{Name: name, Classes: Classes, Dt: dt}
	var err error
	if d.Train, err = cache.LoadSet(paths["train"], limit); err != nil {
		return nil, err
	}
	if d.Test, err = cache.LoadSet(paths["test"], limit); err != nil {
		return nil, err
	}
	return d, nil
}
