package dvs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/download"
)

// FixtureName is the registry name of the synthetic DVS Gesture fixture: recordings that WriteSynth
// generates on first use (no download), read and framed exactly like DVS Gesture. It is a stand-in for
// testing and quick runs of the convolutional network, not DVS Gesture: its numbers are not comparable
// with the paper's.
const FixtureName = "dvsgesture-fixture"

// FixtureDir is the folder of the fixture under the data root (download.Root); the suffix is the version
// of the generator, so that a changed generator never reads an older fixture's files.
const FixtureDir = "dvsgesture-fixture-v1"

// FixtureConfig is the fixture that FixtureName loads: 11 users, 8 in the training split (88 gestures)
// and 3 in the test split (33), 1.2 s per gesture (the framing reads its first second), 8000 events per
// second, seed 1.
func FixtureConfig() SynthConfig {
	return SynthConfig{Users: 11, TrainUsers: 8, Gesture: 1.2, EventsPerSec: 8000, Seed: 1}
}

// EnsureFixture writes the fixture c into dir unless dir already holds recordings (a split list), and
// returns the folder holding them. It refuses to write into a folder that holds other files.
func EnsureFixture(dir string, c SynthConfig) (string, error) {
	root := Root(dir)
	if _, err := os.Stat(filepath.Join(root, TestList)); err == nil {
		return root, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if len(entries) > 0 {
		return "", fmt.Errorf("%s holds files but no %s: not writing the DVS fixture there (choose an empty or new folder)", dir, TestList)
	}
	if err := WriteSynth(dir, c); err != nil {
		return "", fmt.Errorf("writing the DVS fixture into %s: %w", dir, err)
	}
	return dir, nil
}

// LoadFixture loads the fixture from o.Dir — the fixture folder, or a root holding FixtureDir
// (download.ResolveDir; default download.DefaultDir(FixtureDir)) — generating it on first use, and
// framing it with f as LoadDataset does (official-layout train/test splits, no validation split).
func LoadFixture(o data.Options, c SynthConfig, f Framing, w io.Writer) (*data.Dataset, error) {
	root, err := EnsureFixture(download.ResolveDir(o.Dir, FixtureDir), c)
	if err != nil {
		return nil, err
	}
	return load(FixtureName, root, o, f, w)
}
