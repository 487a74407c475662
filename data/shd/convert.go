package shd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/download"
	"github.com/fits-snn/fits/data/progress"
)

// chunk is the number of samples read from HDF5 at a time.
const chunk = 256

// CacheMeta is the metadata stored in a converted cache.
type CacheMeta struct {
	// FrontEnd is Binning.FrontEnd() (cache.FrontEndField): caches of another recipe are converted again.
	FrontEnd string   `json:"frontend"`
	Dataset  string   `json:"dataset"`
	Split    string   `json:"split"`
	Source   string   `json:"source"` // base name of the HDF5 file
	Binning  Binning  `json:"binning"`
	Dt       float64  `json:"dt"` // bin width, seconds
	Keys     []string `json:"keys,omitempty"`
}

// CachePath returns where the cache of a split lives in dir, e.g.
// dir/shd_train.t250-d1000ms-c700g5.fitsds (binary inputs) or dir/shd_train.t250-d1000ms-c700g5-counts.fitsds.
func CachePath(dir, dataset, split string, b Binning) string {
	return filepath.Join(dir, dataset+"_"+split+"."+b.Tag()+".fitsds")
}

// Convert bins every sample of the split file src and writes the binary spikes as a bit cache, or the
// counts (b.Counts) as a uint8 cache, [N, T, Features] at dst (b.CacheType; through a temporary file renamed
// on success). Progress, then what binning dropped, merged or clipped (ReportStats), goes to w.
func Convert(src, dst, dataset, split string, classes int, b Binning, w io.Writer) (Stats, error) {
	var total Stats
	if err := b.Check(); err != nil {
		return total, err
	}
	f, err := Open(src, classes)
	if err != nil {
		return total, err
	}
	defer f.Close()
	extra, err := f.ReadExtra()
	if err != nil {
		return total, err
	}
	meta := CacheMeta{FrontEnd: b.FrontEnd(), Dataset: dataset, Split: split, Source: filepath.Base(src), Binning: b, Dt: b.Dt(), Keys: extra.Keys}
	mj, err := json.Marshal(meta)
	if err != nil {
		return total, err
	}
	cw, err := cache.Create(dst, cache.Header{DType: b.CacheType(), Shape: []int{b.T, b.Features()}, Classes: classes, Meta: mj})
	if err != nil {
		return total, err
	}
	bar := progress.New(w, "convert "+filepath.Base(src), int64(f.Len()))
	buf := make([]uint8, b.T*b.Features())
	labels := f.Labels()
	for start := 0; start < f.Len(); start += chunk {
		n := min(chunk, f.Len()-start)
		sp, err := f.Read(start, n)
		if err != nil {
			cw.Abort()
			return total, err
		}
		for i := 0; i < n; i++ {
			clear(buf)
			t, u := sp.Sample(i)
			st, err := b.BinIn(f.TimePrecision(), t, u, buf)
			if err != nil {
				cw.Abort()
				return total, data.BadFile(fmt.Errorf("%s: sample %d: %w", src, start+i, err))
			}
			total.Add(st)
			if err := cw.AppendUint8(labels[start+i], buf); err != nil {
				cw.Abort()
				return total, err
			}
		}
		bar.Add(int64(n))
	}
	if err := cw.Close(); err != nil {
		return total, err
	}
	bar.Done()
	if w != nil {
		fmt.Fprintln(w, ReportStats(dst, b, total))
	}
	return total, nil
}

// SourcePath finds the HDF5 file of a split in dir, unzipping name.h5.zip (the archive the download
// fetches) or gunzipping name.h5.gz (an earlier download's) into name.h5 when only the archive is there.
// An HDF5 file that fits unpacked is checked against the SHA-256 recorded when it was unpacked
// (download.CheckUnpacked): a changed file is refused before it is read.
func SourcePath(dir, dataset, split string, w io.Writer) (string, error) {
	p := filepath.Join(dir, FileName(dataset, split))
	if _, err := os.Lstat(p); err == nil {
		return p, download.CheckUnpacked(p, w)
	}
	if _, err := os.Stat(p + ".zip"); err == nil {
		return p, download.Unzip(p+".zip", p, w)
	}
	if _, err := os.Stat(p + ".gz"); err == nil {
		return p, download.Gunzip(p+".gz", p, w)
	}
	return "", data.BadFile(fmt.Errorf("%s: no %s, %s.zip or %s.gz (run 'fits data download --dataset=%s --dir=%s')", dir, filepath.Base(p), filepath.Base(p), filepath.Base(p), dataset, dir))
}

// EnsureCaches converts every official split of dataset found in dir whose cache is missing, unreadable,
// of another recipe or in another layout (an earlier build's binary spikes as uint8: b.CacheType), saying
// why on w, and returns the cache paths by split.
func EnsureCaches(dir, dataset string, b Binning, w io.Writer) (map[string]string, error) {
	splits, err := Splits(dataset)
	if err != nil {
		return nil, err
	}
	classes, _ := Classes(dataset)
	return data.EnsureSplits(data.SplitCaches{
		Splits:      splits,
		Path:        func(split string) string { return CachePath(dir, dataset, split, b) },
		Reusable:    func(dst string) (bool, error) { return cache.ReusableAs(dst, b.FrontEnd(), b.CacheType()) },
		Replaceable: cache.CheckReplace,
		Convert: func(split, dst string) error {
			src, err := SourcePath(dir, dataset, split, w)
			if err == nil {
				_, err = Convert(src, dst, dataset, split, classes, b, w)
			}
			return err
		},
	}, w)
}

// CacheType is the element type of the caches of this binning: bits for binary inputs, uint8 for counts
// (at most MaxCount).
func (b Binning) CacheType() cache.DType {
	if b.Counts {
		return cache.Uint8
	}
	return cache.Bit
}

// ReportStats describes in one line what converting into dst dropped, merged or clipped.
func ReportStats(dst string, b Binning, st Stats) string {
	if b.Counts {
		return fmt.Sprintf("%s: %d spikes, %d after %.3g s dropped, %d clipped at %d per bin (spike counts)", dst, st.Spikes, st.Late, b.Duration, st.Clipped, MaxCount)
	}
	return fmt.Sprintf("%s: %d spikes, %d after %.3g s dropped, %d merged into bins already holding a spike (binary inputs)", dst, st.Spikes, st.Late, b.Duration, st.Merged)
}
