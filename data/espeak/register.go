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
	out := map[string]string{}
	for _, split := range []string{"train", "test"} {
		dst := shd.CachePath(dir, "espeak", split, b)
		if ok, why := cache.ReusableAs(dst, b.FrontEnd(), b.CacheType()); ok {
			out[split] = dst
			continue
		} else if err := cache.CheckReplace(dst); err != nil {
			return nil, err
		} else if why != nil && w != nil {
			fmt.Fprintf(w, "%v; converting again\n", why)
		}
		src := filepath.Join(dir, FileName(split))
		if _, err := os.Stat(src); err != nil {
			if err := Generate(context.Background(), c, dir, w); err != nil {
				return nil, fmt.Errorf("generating %s: %w", dir, err)
			}
		}
		st, err := shd.Convert(src, dst, "espeak", split, Classes, b, w)
		if err != nil {
			return nil, err
		}
		if w != nil {
			fmt.Fprintln(w, shd.ReportStats(dst, b, st))
		}
		out[split] = dst
	}
	return out, nil
}

// LoadDataset loads the dataset from o.Dir — the dataset folder, or a root holding espeak/
// (download.ResolveDir; default download.DefaultDir("espeak")) — generating and converting it on
// first use. It has train and test splits only.
func LoadDataset(o data.Options, c Config, b shd.Binning, w io.Writer) (*data.Dataset, error) {
	dir := download.ResolveDir(o.Dir, "espeak")
	paths, err := EnsureCaches(dir, c, b, w)
	if err != nil {
		return nil, err
	}
	limit := 0
	if o.Small {
		limit = smallN
	}
	d := &data.Dataset{Name: Name, Classes: Classes, Dt: b.Dt()}
	if d.Train, err = cache.LoadSet(paths["train"], limit); err != nil {
		return nil, err
	}
	if d.Test, err = cache.LoadSet(paths["test"], limit); err != nil {
		return nil, err
	}
	return d, nil
}
