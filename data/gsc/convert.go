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
	"github.com/fits-snn/fits/data/mel"
	"github.com/fits-snn/fits/data/progress"
)

// CacheMeta is the metadata stored in a converted GSC cache.
type CacheMeta struct {
	Dataset string     `json:"dataset"`
	Split   string     `json:"split"`
	Mel     mel.Config `json:"mel"`
	Dt      float64    `json:"dt"` // frame hop, seconds
	Words   []string   `json:"words"`
	Files   []string   `json:"files"` // clip paths in sample order
}

// CachePath returns the cache file of a split in dir, e.g. dir/gsc_train.mel40-t100.fitsds.
func CachePath(dir, split string, c mel.Config) string {
	return filepath.Join(dir, fmt.Sprintf("gsc_%s.mel%d-t%d-hop%d.fitsds", split, c.Bands, c.Frames, c.Hop))
}

// batch is the number of clips decoded in parallel before they are written in order.
const batch = 256

// Convert computes log-Mel features [Frames, Bands] of the clips (paths relative to root) and
// writes them as a float32 cache at dst. Work is spread over the CPUs; progress goes to w.
func Convert(root string, clips []Clip, dst, split string, c mel.Config, w io.Writer) error {
	return ConvertClips(root, clips, dst, CacheMeta{Dataset: "gsc", Split: split, Words: Words}, Classes, c, w)
}

// ConvertClips is Convert for any set of 16 kHz clips with labels in [0, classes): meta names the
// dataset, split and class words (its Mel, Dt and Files fields are filled in here). Datasets that
// share the GSC front end (e.g. the spoken digits of package data/espeak) use it directly.
func ConvertClips(root string, clips []Clip, dst string, meta CacheMeta, classes int, c mel.Config, w io.Writer) error {
	if _, err := mel.New(c); err != nil {
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
	meta.Mel, meta.Dt, meta.Files = c, float64(c.Hop)/float64(c.SampleRate), files
	mj, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	cw, err := cache.Create(dst, cache.Header{DType: cache.Float32, Shape: []int{c.Frames, c.Bands}, Classes: classes, Meta: mj})
	if err != nil {
		return err
	}
	workers := max(1, runtime.NumCPU())
	exts := make([]*mel.Extractor, workers)
	for i := range exts {
		exts[i], _ = mel.New(c)
	}
	sl := c.Frames * c.Bands
	out := make([]float32, batch*sl)
	errs := make([]error, batch)
	bar := progress.New(w, "log-Mel "+split, int64(len(clips)))
	for start := 0; start < len(clips); start += batch {
		n := min(batch, len(clips)-start)
		var wg sync.WaitGroup
		for k := 0; k < workers; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				for i := k; i < n; i += workers {
					p := filepath.Join(root, filepath.FromSlash(clips[start+i].Path))
					x, err := ReadWAV(p, c.SampleRate)
					if err == nil {
						err = exts[k].LogMel(x, out[i*sl:(i+1)*sl])
					}
					errs[i] = err
				}
			}(k)
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

// EnsureCaches converts the splits whose cache in dir is missing or unreadable and returns the
// cache paths by split.
func EnsureCaches(dir string, c mel.Config, w io.Writer) (map[string]string, error) {
	paths := map[string]string{}
	var clips map[string][]Clip
	root := Root(dir)
	for _, split := range Splits {
		dst := CachePath(dir, split, c)
		if r, err := cache.Open(dst); err == nil {
			r.Close()
			paths[split] = dst
			continue
		}
		if clips == nil {
			var err error
			if clips, err = List(root); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("%w (run 'fits data download --dataset=gsc --dir=%s')", err, dir)
				}
				return nil, err
			}
		}
		if err := Convert(root, clips[split], dst, split, c, w); err != nil {
			return nil, err
		}
		paths[split] = dst
	}
	return paths, nil
}
