package gsc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/download"
	"github.com/fits-snn/fits/data/mel"
	"github.com/fits-snn/fits/data/progress"
)

// CacheMeta is the metadata stored in a converted GSC cache.
type CacheMeta struct {
	// FrontEndID is FrontEnd.ID() (cache.FrontEndField): caches of another recipe are converted again.
	FrontEndID string   `json:"frontend"`
	Dataset    string   `json:"dataset"`
	Split      string   `json:"split"`
	FrontEnd   FrontEnd `json:"features"`
	Dt         float64  `json:"dt"` // frame hop, seconds
	Words      []string `json:"words"`
	Files      []string `json:"files"` // clip paths in sample order
}

// CachePath returns the cache file of a split in dir, e.g.
// dir/gsc_train.melspec40-t100-hop160-fft480.fitsds (released recipe) or dir/gsc_train.mel40-t100-hop160.fitsds
// (log-Mel).
func CachePath(dir, split string, f FrontEnd) string {
	return filepath.Join(dir, fmt.Sprintf("gsc_%s.%s.fitsds", split, f.Tag()))
}

// batch is the number of clips decoded in parallel before they are written in order.
const batch = 256

// Convert computes the features [Frames, Bands] of the clips (paths relative to root) with front end f
// and writes them as a float32 cache at dst. Work is spread over the CPUs; progress goes to w.
func Convert(root string, clips []Clip, dst, split string, f FrontEnd, w io.Writer) error {
	return ConvertClips(root, clips, dst, CacheMeta{Dataset: "gsc", Split: split, Words: Words}, Classes, f, w)
}

// ConvertClips is Convert for any set of clips at the front end's rate with labels in [0, classes): meta
// names the dataset, split and class words (its FrontEndID, FrontEnd, Dt and Files fields are filled in
// here). Datasets that share the GSC front ends (e.g. the spoken digits of package data/espeak) use it
// directly.
func ConvertClips(root string, clips []Clip, dst string, meta CacheMeta, classes int, f FrontEnd, w io.Writer) error {
	if err := f.Check(); err != nil {
		return err
	}
	files := make([]string, len(clips))
	for i, cl := range clips {
		if cl.Label < 0 || int(cl.Label) >= classes {
			return data.BadFile(fmt.Errorf("%s: label %d outside [0, %d)", cl.Path, cl.Label, classes))
		}
		files[i] = cl.Path
	}
	split := meta.Split
	meta.FrontEndID, meta.FrontEnd, meta.Dt, meta.Files = f.ID(), f, f.Dt(), files
	mj, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	cw, err := cache.Create(dst, cache.Header{DType: cache.Float32, Shape: []int{f.Frames(), f.Bands()}, Classes: classes, Meta: mj})
	if err != nil {
		return err
	}
	workers := max(1, runtime.NumCPU())
	exts := make([]Extractor, workers)
	for i := range exts {
		if exts[i], err = f.NewExtractor(); err != nil {
			cw.Abort()
			return err
		}
	}
	sl := f.Frames() * f.Bands()
	out := make([]float32, batch*sl)
	errs := make([]error, batch)
	bar := progress.New(w, "features "+split, int64(len(clips)))
	for start := 0; start < len(clips); start += batch {
		n := min(batch, len(clips)-start)
		var wg sync.WaitGroup
		for k := range workers {
			wg.Go(func() {
				for i := k; i < n; i += workers {
					p := filepath.Join(root, filepath.FromSlash(clips[start+i].Path))
					x, err := ReadWAV(p, f.SampleRate())
					if err == nil {
						if err = exts[k].Features(x, out[i*sl:(i+1)*sl]); err != nil {
							err = badClip(p, err)
						}
					}
					errs[i] = err
				}
			})
		}
		wg.Wait()
		for i := 0; i < n; i++ {
			if errs[i] != nil {
				cw.Abort()
				return errs[i]
			}
			if err := cw.AppendFloat32(clips[start+i].Label, out[i*sl:(i+1)*sl]); err != nil {
				cw.Abort()
				return err
			}
		}
		bar.Add(int64(n))
	}
	if err := cw.Close(); err != nil {
		return err
	}
	bar.Done()
	return nil
}

// Root returns the folder holding the word folders and split lists: dir itself, or the
// speech_commands_v0.02 folder inside it.
func Root(dir string) string {
	for _, d := range []string{dir, filepath.Join(dir, "speech_commands_v0.02")} {
		if _, err := os.Stat(filepath.Join(d, TestList)); err == nil {
			return d
		}
	}
	return dir
}

// EnsureCaches converts the splits whose cache in dir is missing, unreadable or made by another recipe
// (saying so on w) with front end f, and returns the cache paths by split.
func EnsureCaches(dir string, f FrontEnd, w io.Writer) (map[string]string, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	var clips map[string][]Clip
	root := Root(dir)
	return data.EnsureSplits(data.SplitCaches{
		Splits:      Splits,
		Path:        func(split string) string { return CachePath(dir, split, f) },
		Reusable:    func(dst string) (bool, error) { return cache.Reusable(dst, f.ID()) },
		Replaceable: cache.CheckReplace,
		Prepare: func() (err error) {
			if clips, err = List(root); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%w (run 'fits data download --dataset=gsc --dir=%s')", err, dir)
			} else if err != nil {
				return err
			}
			// The clips that fits extracted must be as it extracted them.
			if err := download.CheckExtracted(dir, w); err != nil {
				return err
			}
			if w != nil && f.Name == FrontEndReleased {
				noteOtherFrontEnd(w, dir, f)
			}
			return nil
		},
		Convert: func(split, dst string) error { return Convert(root, clips[split], dst, split, f, w) },
	}, w)
}

// noteOtherFrontEnd says, once per conversion, that caches of the earlier default front end in dir are
// not used by the released recipe.
func noteOtherFrontEnd(w io.Writer, dir string, f FrontEnd) {
	old := LogMelFrontEnd(mel.Default())
	if _, err := os.Stat(CachePath(dir, Train, old)); err == nil {
		fmt.Fprintf(w, "%s: made by the earlier default front end %q, not used by the %q front end (now the default); converting the clips into %s\n",
			CachePath(dir, Train, old), FrontEndLogMel, f.Name, filepath.Base(CachePath(dir, Train, f)))
	}
}
