package mnist

import (
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/data"
)

// NominalDt is the time bin reported for sMNIST sequences, in seconds. sMNIST has no physical time
// axis; one pixel (or row) per step is given a nominal 1 ms so that frequencies in Hz stay readable.
const NominalDt = 1e-3

// smallN is the number of examples per split kept by Options.Small.
const smallN = 512

func init() {
	data.Register("smnist", "sequential MNIST, one pixel per step [T=784, F=1], real MNIST files", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(o, PixelByPixel)
	})
	data.Register("smnist-row", "row-wise sequential MNIST, one row per step [T=28, F=28], real MNIST files", func(o data.Options) (*data.Dataset, error) {
		return LoadDataset(o, RowByRow)
	})
	for _, name := range []string{"smnist", "smnist-row"} {
		data.RegisterTimeBin(name, func(data.Options) float64 { return NominalDt })
	}
}

// LoadDataset loads both splits as a data.Dataset (no validation split) from o.Dir (or its mnist/
// subfolder when there is one), or from DefaultDir when o.Dir is empty. o.Small keeps the first 512 examples of each split.
func LoadDataset(o data.Options, l Layout) (*data.Dataset, error) {
	dir := o.Dir
	if st, err := os.Stat(filepath.Join(dir, "mnist")); dir != "" && err == nil && st.IsDir() {
		dir = filepath.Join(dir, "mnist")
	}
	if dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	d := &data.Dataset{Name: "smnist", Classes: Classes, Dt: NominalDt}
	if l == RowByRow {
		d.Name = "smnist-row"
	}
	for _, sp := range []struct {
		split string
		dst   **data.Set
	}{{Train, &d.Train}, {Test, &d.Test}} {
		s, err := Load(dir, sp.split)
		if err != nil {
			return nil, err
		}
		if o.Small && s.Len() > smallN {
			s = &Set{Images: s.Images[:smallN*Pixels], Labels: s.Labels[:smallN]}
		}
		T, F := l.Shape()
		*sp.dst = data.NewBytesSet(s.Images, Levels, s.Labels, T, F)
	}
	return d, nil
}
