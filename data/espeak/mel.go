package espeak

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/download"
	"github.com/fits-snn/fits/data/gsc"
)

// MelName is the registry name of the spoken digits through the GSC front end (gsc.DefaultFrontEnd, the
// released recipe: librosa's magnitude mel spectrogram in dB, 100 frames of 10 ms, one z-score per clip,
// [T=100, F=40]).
const MelName = "espeak-digits-mel"

func init() {
	data.Register(MelName, "the espeak-ng spoken digits through the GSC front end (the released recipe): [T=100, F=40], 20 classes", func(o data.Options) (*data.Dataset, error) {
		f, err := gsc.ParseFrontEnd(o.AudioFrontEnd)
		if err != nil {
			return nil, err
		}
		return LoadMelDataset(o, DefaultConfig(), f, os.Stderr)
	})
	data.RegisterTimeBin(MelName, gsc.OptionsTimeBin)
}

// MelCachePath returns the feature cache of a split in dir, e.g.
// dir/espeak_train.melspec40-t100-hop160-fft480.fitsds.
func MelCachePath(dir, split string, f gsc.FrontEnd) string {
	return filepath.Join(dir, fmt.Sprintf("espeak_%s.%s.fitsds", split, f.Tag()))
}

// ReadManifest reads outDir/wav/<split>.txt: the clips of a split (paths relative to outDir/wav) with
// their labels, in sample order. Errors are data.FileErrors.
func ReadManifest(outDir, split string) (_ []gsc.Clip, err error) {
	defer func() { err = data.BadFile(err) }()
	p := ManifestPath(outDir, split)
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var clips []gsc.Clip
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"path label\", got %q", p, line, text)
		}
		label, err := strconv.Atoi(fields[1])
		if err != nil || label < 0 || label >= Classes {
			return nil, fmt.Errorf("%s:%d: label %q is not in 0..%d", p, line, fields[1], Classes-1)
		}
		if filepath.IsAbs(fields[0]) || strings.Contains(fields[0], "..") {
			return nil, fmt.Errorf("%s:%d: path %q must be relative and inside the folder", p, line, fields[0])
		}
		clips = append(clips, gsc.Clip{Path: fields[0], Label: int32(label)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(clips) == 0 {
		return nil, fmt.Errorf("%s: no clips listed", p)
	}
	return clips, nil
}

// EnsureMelCaches converts the WAV files of both splits in dir with front end f when their cache is
// missing, unreadable or made by another recipe (saying so on w), first generating the audio (needs
// espeak-ng) when dir holds no manifest, and returns the cache paths by split.
func EnsureMelCaches(dir string, c Config, f gsc.FrontEnd, w io.Writer) (map[string]string, error) {
	return data.EnsureSplits(data.SplitCaches{
		Splits:      []string{"train", "test"},
		Path:        func(split string) string { return MelCachePath(dir, split, f) },
		Reusable:    func(dst string) (bool, error) { return cache.Reusable(dst, f.ID()) },
		Replaceable: cache.CheckReplace,
		Convert: func(split, dst string) error {
			if err := ensureGenerated(dir, c, ManifestPath(dir, split), w); err != nil {
				return err
			}
			clips, err := ReadManifest(dir, split)
			if err != nil {
				return err
			}
			meta := gsc.CacheMeta{Dataset: "espeak", Split: split, Words: Keys()}
			return gsc.ConvertClips(filepath.Join(dir, "wav"), clips, dst, meta, Classes, f, w)
		},
	}, w)
}

// LoadMelDataset is LoadDataset through a GSC front end: [T = f.Frames(), F = f.Bands()] float32
// features; with the log-Mel front end each band is standardised with the training split's mean and
// standard deviation, the released recipe's features are z-scored per clip already.
func LoadMelDataset(o data.Options, c Config, f gsc.FrontEnd, w io.Writer) (*data.Dataset, error) {
	paths, err := EnsureMelCaches(download.ResolveDir(o.Dir, "espeak"), c, f, w)
	if err != nil {
		return nil, err
	}
	d, err := data.LoadSplits(&data.Dataset{Name: MelName, Classes: Classes, Dt: f.Dt()}, paths, o.SmallLimit(smallN), cache.LoadSet)
	if err == nil {
		gsc.StandardizeSplits(d, f)
	}
	return d, err
}
