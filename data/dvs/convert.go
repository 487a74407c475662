package dvs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/download"
	"github.com/fits-snn/fits/data/progress"
)

// CacheMeta is the metadata of a converted DVS Gesture cache.
type CacheMeta struct {
	Dataset string   `json:"dataset"`
	Split   string   `json:"split"`
	Framing Framing  `json:"framing"`
	Dt      float64  `json:"dt"` // seconds per frame
	Classes []string `json:"classes"`
}

// CachePath returns the cache file of a split in dir, e.g. dir/dvsgesture_train.t50-dt20ms-64.fitsds.
func CachePath(dir, split string, f Framing) string {
	return filepath.Join(dir, "dvsgesture_"+split+"."+f.Tag()+".fitsds")
}

// Root returns the folder holding the recordings: dir, or the DvsGesture folder inside it.
func Root(dir string) string {
	for _, d := range []string{dir, filepath.Join(dir, "DvsGesture")} {
		if _, err := os.Stat(filepath.Join(d, TestList)); err == nil {
			return d
		}
	}
	return dir
}

// Convert frames every gesture of the recordings named in the split list of root and writes the
// uint8 cache [N, T, 2, Out, Out] at dst. Progress goes to w, one step per recording.
func Convert(root, split, dst string, f Framing, w io.Writer) (Stats, error) {
	var total Stats
	if err := f.Check(); err != nil {
		return total, err
	}
	list := TrainList
	if split == Test {
		list = TestList
	} else if split != Train {
		return total, fmt.Errorf("unknown DVS Gesture split %q (valid: train, test)", split)
	}
	names, err := ReadTrials(filepath.Join(root, list))
	if errors.Is(err, fs.ErrNotExist) {
		return total, fmt.Errorf("%w (run 'fits data download --dataset=dvs')", err)
	}
	if err != nil {
		return total, err
	}
	mj, _ := json.Marshal(CacheMeta{Dataset: "dvsgesture", Split: split, Framing: f, Dt: f.Dt, Classes: Gestures})
	cw, err := cache.Create(dst, cache.Header{DType: cache.Uint8, Shape: f.SampleShape(), Classes: Classes, Meta: mj})
	if err != nil {
		return total, err
	}
	bar := progress.New(w, "frames "+split, int64(len(names)))
	buf := make([]uint8, f.T*2*f.Out*f.Out)
	for _, name := range names {
		rec, err := ReadRecording(root, name)
		if err != nil {
			cw.Abort()
			return total, err
		}
		for _, s := range rec.Segments {
			clear(buf)
			st, err := f.Bin(rec.Events, s.Start, buf)
			if err != nil {
				cw.Abort()
				return total, data.BadFile(fmt.Errorf("%s: %w", filepath.Join(root, name), err))
			}
			total.Events += st.Events
			total.Clipped += st.Clipped
			if err := cw.AppendUint8(s.Label, buf); err != nil {
				cw.Abort()
				return total, err
			}
		}
		bar.Add(1)
	}
	if err := cw.Close(); err != nil {
		return total, err
	}
	bar.Done()
	return total, nil
}

// EnsureCaches converts the splits whose cache in dir is missing, unreadable or corrupt (Reader.Verify).
func EnsureCaches(dir string, f Framing, w io.Writer) (map[string]string, error) {
	root := Root(dir)
	return data.EnsureSplits(data.SplitCaches{
		Splits:      []string{Train, Test},
		Path:        func(split string) string { return CachePath(dir, split, f) },
		Reusable:    verified,
		Replaceable: cache.CheckReplace,
		// The recordings that fits extracted must be as it extracted them.
		Prepare: func() error { return download.CheckExtracted(dir, w) },
		Convert: func(split, dst string) error {
			st, err := Convert(root, split, dst, f, w)
			if err == nil && w != nil && st.Clipped > 0 {
				fmt.Fprintf(w, "%s: %d events clipped at 255 per pixel and frame\n", dst, st.Clipped)
			}
			return err
		},
	}, w)
}

// verified reports whether the cache at path opens and is intact (Reader.Verify); false comes with the
// reason when it opens but is not.
func verified(path string) (bool, error) {
	r, err := cache.Open(path)
	if err != nil {
		return false, nil
	}
	defer r.Close()
	err = r.Verify()
	return err == nil, err
}

// load loads the train and test caches of f in dir (converting them once) into a dataset called name.
func load(name, dir string, o data.Options, f Framing, w io.Writer) (*data.Dataset, error) {
	paths, err := EnsureCaches(dir, f, w)
	if err != nil {
		return nil, err
	}
	return data.LoadSplits(&data.Dataset{Name: name, Classes: Classes, Dt: f.Dt}, paths, o.SmallLimit(smallN), cache.LoadSet)
}
