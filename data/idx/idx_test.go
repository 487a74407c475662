package idx

import (
	"bytes"
	"compress/gzip"
	"errors"
	"github.com/fits-snn/fits/data"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		typ  Type
		dims []int
		want []float64
		data []byte
	}{
		{Uint8, []int{2, 2}, []float64{0, 1, 254, 255}, []byte{0, 1, 254, 255}},
		{Int8, []int{3}, []float64{-1, 0, 127}, []byte{0xff, 0, 0x7f}},
		{Int16, []int{2}, []float64{-2, 258}, []byte{0xff, 0xfe, 1, 2}},
		{Int32, []int{1, 1, 1}, []float64{-1}, []byte{0xff, 0xff, 0xff, 0xff}},
		{Float32, []int{1}, []float64{1.5}, []byte{0x3f, 0xc0, 0, 0}},
		{Float64, []int{1}, []float64{-2}, []byte{0xc0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		for _, name := range []string{"a.idx", "a.idx.gz"} {
			p := filepath.Join(dir, tc.typ.String()+name)
			if err := WriteFile(p, &Array{Type: tc.typ, Dims: tc.dims, Data: tc.data}); err != nil {
				t.Fatal(err)
			}
			a, err := ReadFile(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if a.Type != tc.typ || len(a.Dims) != len(tc.dims) || a.Len() != len(tc.want) {
				t.Fatalf("%s: got type %v dims %v", p, a.Type, a.Dims)
			}
			for i, w := range tc.want {
				if g := a.Float64At(i); g != w {
					t.Errorf("%s: element %d = %v, want %v", p, i, g, w)
				}
			}
		}
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"short magic", []byte{0, 0}, "truncated"},
		{"nonzero lead", []byte{1, 0, 8, 1, 0, 0, 0, 1, 7}, "first two bytes"},
		{"unknown type", []byte{0, 0, 0x0a, 1, 0, 0, 0, 1, 7}, "unknown type code 0x0a"},
		{"no dims", []byte{0, 0, 8, 0}, "zero dimensions"},
		{"short dims", []byte{0, 0, 8, 2, 0, 0, 0, 1}, "truncated"},
		{"zero dim", []byte{0, 0, 8, 1, 0, 0, 0, 0}, "dimension 0 is zero"},
		{"huge", []byte{0, 0, 8, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "dimensions [4294967295]... hold more than"},
		{"short data", []byte{0, 0, 0x0c, 1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0}, "truncated: dimensions [2] need 8 bytes of int32 data, found 6"},
		{"trailing", []byte{0, 0, 8, 1, 0, 0, 0, 1, 7, 9}, "trailing bytes"},
	} {
		_, err := Read(bytes.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestReadFileNamesFileAndTruncatedGzip(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := Write(zw, &Array{Type: Uint8, Dims: []int{1000}, Data: make([]byte, 1000)}); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	p := filepath.Join(dir, "cut.gz")
	if err := os.WriteFile(p, buf.Bytes()[:buf.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("error %v should name %s and say truncated", err, p)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing file gave no error")
	}
}

func TestWriteRejectsInconsistentArray(t *testing.T) {
	for _, a := range []*Array{
		{Type: 0x01, Dims: []int{1}, Data: []byte{0}},
		{Type: Uint8, Dims: nil},
		{Type: Uint8, Dims: []int{0}},
		{Type: Int16, Dims: []int{2}, Data: []byte{0, 0}},
	} {
		if err := Write(&bytes.Buffer{}, a); err == nil {
			t.Errorf("Write(%+v) gave no error", a)
		}
	}
}

// FuzzRead checks that Read never panics and that whatever it accepts survives a round trip.
func FuzzRead(f *testing.F) {
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 2, 7, 8})
	f.Add([]byte{0, 0, 0x0d, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0x3f, 0x80, 0, 0})
	f.Add([]byte{0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0})
	f.Add([]byte{0, 0, 0x0e, 1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, a); err != nil {
			t.Fatalf("accepted array does not write back: %v", err)
		}
		if !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("round trip changed the bytes")
		}
	})
}

// TestReadFileBoundsHeaderClaims: a header that claims more data than the file can hold (uncompressed:
// its size; gzip: MaxGzipRatio times it) is refused before any data is read.
func TestReadFileBoundsHeaderClaims(t *testing.T) {
	dir := t.TempDir()
	hdr := []byte{0, 0, 8, 3, 0, 0x1e, 0x84, 0x80, 0, 0, 0, 28, 0, 0, 0, 28} // 2 000 000 images
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(hdr)
	zw.Write(make([]byte, 1<<16))
	zw.Close()
	for name, content := range map[string][]byte{"bomb.gz": buf.Bytes(), "plain": append(hdr, make([]byte, 1000)...)} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(p)
		var fe *data.FileError
		if err == nil || !strings.Contains(err.Error(), "more than the file can hold") || !errors.As(err, &fe) {
			t.Errorf("%s: %v, want the header claim refused as a bad file", name, err)
		}
	}
}
