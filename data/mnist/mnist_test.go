package mnist

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/idx"
)

func TestRealMNIST(t *testing.T) {
	dir, err := DefaultDir()
	if err != nil {
		t.Skipf("GoMNIST module not downloaded: %v", err)
	}
	for _, tc := range []struct {
		split string
		n     int
		// first labels of the official files
		first []int32
	}{
		{Train, 60000, []int32{5, 0, 4, 1, 9}},
		{Test, 10000, []int32{7, 2, 1, 0, 4}},
	} {
		s, err := Load(dir, tc.split)
		if err != nil {
			t.Fatal(err)
		}
		if s.Len() != tc.n || len(s.Images) != tc.n*Pixels {
			t.Fatalf("%s: %d labels, %d pixels", tc.split, s.Len(), len(s.Images))
		}
		var counts [Classes]int
		for _, l := range s.Labels {
			counts[l]++
		}
		for c, k := range counts {
			if k < tc.n/20 {
				t.Errorf("%s: class %d has only %d samples", tc.split, c, k)
			}
		}
		for i, l := range tc.first {
			if s.Labels[i] != l {
				t.Errorf("%s: label %d = %d, want %d", tc.split, i, s.Labels[i], l)
			}
		}
		x, shape := s.Sequences(PixelByPixel)
		if shape != [3]int{tc.n, 784, 1} {
			t.Errorf("pixel shape %v", shape)
		}
		lo, hi := float32(1), float32(0)
		for _, v := range x {
			lo, hi = min(lo, v), max(hi, v)
		}
		if lo != 0 || hi != 1 {
			t.Errorf("%s: pixel range [%v, %v], want [0, 1]", tc.split, lo, hi)
		}
		if _, shape := s.Sequences(RowByRow); shape != [3]int{tc.n, 28, 28} {
			t.Errorf("row shape %v", shape)
		}
	}
}

func TestSequencesLayout(t *testing.T) {
	s := &Set{Images: make([]uint8, 2*Pixels), Labels: []int32{3, 4}}
	s.Images[Pixels+28*2+5] = 255 // sample 1, row 2, column 5
	s.Images[3] = 51
	for _, l := range []Layout{PixelByPixel, RowByRow} {
		x, shape := s.Sequences(l)
		T, F := l.Shape()
		if shape != [3]int{2, T, F} {
			t.Fatalf("%v: shape %v", l, shape)
		}
		// index of sample 1, time step, feature in a flat [N, T, F] slice
		var step, feat int
		if l == RowByRow {
			step, feat = 2, 5
		} else {
			step, feat = 28*2+5, 0
		}
		if got := x[(1*T+step)*F+feat]; got != 1 {
			t.Errorf("%v: x[1,%d,%d] = %v, want 1", l, step, feat, got)
		}
		if got := x[3]; got != 0.2 {
			t.Errorf("%v: x[0] pixel 3 = %v, want 0.2", l, got)
		}
	}
}

func writeSplit(t *testing.T, dir string, images *idx.Array, labels *idx.Array) {
	t.Helper()
	if err := idx.WriteFile(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), images); err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(dir, "t10k-labels-idx1-ubyte"), labels); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	img := func(n int) *idx.Array {
		return &idx.Array{Type: idx.Uint8, Dims: []int{n, 28, 28}, Data: make([]byte, n*Pixels)}
	}
	lbl := func(b ...byte) *idx.Array { return &idx.Array{Type: idx.Uint8, Dims: []int{len(b)}, Data: b} }
	for _, tc := range []struct {
		name   string
		images *idx.Array
		labels *idx.Array
		want   string
	}{
		{"ok", img(2), lbl(0, 9), ""},
		{"count mismatch", img(2), lbl(1), "has 1 labels but"},
		{"label range", img(2), lbl(1, 10), "label 10 of sample 1 is outside 0..9"},
		{"image shape", &idx.Array{Type: idx.Uint8, Dims: []int{2, 28}, Data: make([]byte, 56)}, lbl(1, 2), "want uint8 images"},
		{"label type", img(1), &idx.Array{Type: idx.Int32, Dims: []int{1}, Data: make([]byte, 4)}, "want uint8 labels"},
	} {
		dir := t.TempDir()
		writeSplit(t, dir, tc.images, tc.labels)
		s, err := Load(dir, Test)
		if tc.want == "" {
			if err != nil || s.Len() != 2 || s.Labels[1] != 9 {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	dir := t.TempDir()
	if _, err := Load(dir, Train); err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte.gz") {
		t.Errorf("missing files: %v", err)
	}
	if _, err := Load(dir, "valid"); err == nil {
		t.Error("unknown split accepted")
	}
	// Bad magic number: the error names the file.
	p := filepath.Join(dir, "t10k-images-idx3-ubyte")
	os.WriteFile(p, []byte{0, 0, 0x42, 3, 0, 0, 0, 1}, 0o644)
	os.WriteFile(filepath.Join(dir, "t10k-labels-idx1-ubyte"), []byte{0, 0, 8, 1, 0, 0, 0, 1, 0}, 0o644)
	if _, err := Load(dir, Test); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "bad magic") {
		t.Errorf("bad magic: %v", err)
	}
}

func TestRegisteredSmall(t *testing.T) {
	if _, err := DefaultDir(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name string
		T, F int
	}{{"smnist", 784, 1}, {"smnist-row", 28, 28}} {
		d, err := data.Load(tc.name, data.Options{Small: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Train.N != 512 || d.Test.N != 512 || d.Train.T != tc.T || d.Train.F != tc.F || d.Val != nil {
			t.Errorf("%s: train %d test %d T %d F %d", tc.name, d.Train.N, d.Test.N, d.Train.T, d.Train.F)
		}
	}
}

func TestWriteSynth(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSynth(dir, 20, 1); err != nil {
		t.Fatal(err)
	}
	for _, split := range []string{Train, Test} {
		s, err := Load(dir, split)
		if err != nil || s.Len() != 20 || s.Labels[13] != 3 || s.Images[13*Pixels+8*Cols+10] != 255 {
			t.Fatalf("%s: %v", split, err)
		}
	}
}

// TestLoadDatasetBytes: the sets hold one byte per pixel and read back the float32 values of Sequences
// (the float32 path before sets held bytes), bit for bit, in both layouts.
func TestLoadDatasetBytes(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSynth(dir, 30, 4); err != nil {
		t.Fatal(err)
	}
	for _, l := range []Layout{PixelByPixel, RowByRow} {
		d, err := LoadDataset(data.Options{Dir: dir}, l)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Load(dir, Train)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := s.Sequences(l)
		got := d.Train.Dense()
		if d.Train.Encoding() != data.Bytes || d.Train.StorageBytes() != int64(len(s.Images)) || len(got) != len(want) {
			t.Fatalf("%v: %v, %d bytes for %d pixels", l, d.Train.Encoding(), d.Train.StorageBytes(), len(s.Images))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: value %d is %v, Sequences gives %v", l, i, got[i], want[i])
			}
		}
	}
}
