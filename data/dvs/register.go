package dvs

import (
	"io"
	"os"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/download"
)

// smallN is the number of examples per split kept by Options.Small.
const smallN = 64

func init() {
	data.Register("dvsgesture", "IBM DVS128 Gesture, 11 classes, [T=50, 2, 64, 64] event counts of 20 ms, train/test", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(o, DefaultFraming(), os.Stderr)
	})
	data.Register(FixtureName, "synthetic DVS gestures (generated on first use, no download), 11 classes, framed like dvsgesture [T=50, 2, 64, 64], train/test; not DVS Gesture", func(o data.Options) (*data.Dataset, error) {
		return LoadFixture(o, FixtureConfig(), DefaultFraming(), os.Stderr)
	})
}

// LoadDataset converts the recordings in o.Dir once — the dataset folder, or a root holding dvs/
// (download.ResolveDir; default download.DefaultDir("dvs")) — and
// loads the official train/test splits as float32 counts with FeatureShape [2, Out, Out]. DVS
// Gesture has no validation split.
func LoadDataset(o data.Options, f Framing, w io.Writer) (*data.Dataset, error) {
	return load("dvsgesture", download.ResolveDir(o.Dir, "dvs"), o, f, w)
}
