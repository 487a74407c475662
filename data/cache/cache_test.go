package cache

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
)

func writeCache(t testing.TB, path string, dt DType, shape []int, classes int, samples [][]float32, labels []int32) {
	t.Helper()
	w, err := Create(path, Header{DType: dt, Shape: shape, Classes: classes, Meta: json.RawMessage(`{"name":"test"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if dt == Uint8 || dt == Bit {
			b := make([]uint8, len(s))
			for j, v := range s {
				b[j] = uint8(v)
			}
			err = w.AppendUint8(labels[i], b)
		} else {
			err = w.AppendFloat32(labels[i], s)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// openCache opens the cache at path.
func openCache(t testing.TB, path string) *Reader {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	samples := [][]float32{{0, 1, 2, 3, 4, 5}, {255, 7, 8, 9, 10, 11}, {1, 1, 1, 1, 1, 1}}
	labels := []int32{2, 0, 1}
	for _, dt := range []DType{Uint8, Float32} {
		p := filepath.Join(dir, dt.String()+".fitsds")
		writeCache(t, p, dt, []int{2, 3}, 3, samples, labels)
		r := openCache(t, p)
		if r.Len() != 3 || r.SampleLen() != 6 || r.Classes() != 3 || len(r.Shape()) != 2 {
			t.Fatalf("%v: len %d shape %v", dt, r.Len(), r.Shape())
		}
		var meta struct{ Name string }
		if err := r.Meta(&meta); err != nil || meta.Name != "test" {
			t.Fatalf("meta %+v %v", meta, err)
		}
		dst := make([]float32, 12)
		if err := r.ReadBatch([]int{1, 0}, dst); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 6; j++ {
			if dst[j] != samples[1][j] || dst[6+j] != samples[0][j] {
				t.Fatalf("%v: batch %v", dt, dst)
			}
		}
		all, err := r.ReadAll()
		if err != nil || len(all) != 18 || all[17] != 1 {
			t.Fatalf("%v: ReadAll %v %v", dt, all, err)
		}
		for i, l := range labels {
			if r.Labels()[i] != l {
				t.Fatalf("labels %v", r.Labels())
			}
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		if err := r.ReadBatch([]int{3}, dst[:6]); err == nil {
			t.Error("index 3 of 3 accepted")
		}
		r.Close()
	}
	// No temporary files are left behind: the caches and the record of the files written.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("folder holds %d entries", len(ents))
	}
}

func TestWriterErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.fitsds")
	if _, err := Create(p, Header{DType: 7, Shape: []int{1}, Classes: 1}); err == nil {
		t.Error("unknown dtype accepted")
	}
	if _, err := Create(p, Header{DType: Uint8, Shape: []int{0}, Classes: 1}); err == nil {
		t.Error("zero dimension accepted")
	}
	if _, err := Create(p, Header{DType: Uint8, Shape: []int{1}, Classes: 1, Meta: json.RawMessage("{")}); err == nil {
		t.Error("bad JSON accepted")
	}
	w, err := Create(p, Header{DType: Uint8, Shape: []int{2}, Classes: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendUint8(2, []uint8{1, 2}); err == nil || !strings.Contains(err.Error(), "label 2 outside 0..1") {
		t.Errorf("label range: %v", err)
	}
	if err := w.AppendUint8(0, []uint8{1}); err == nil {
		t.Error("short sample accepted")
	}
	if err := w.AppendFloat32(0, []float32{1, 2}); err == nil {
		t.Error("float32 into uint8 cache accepted")
	}
	w.Abort()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Error("aborted cache exists")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("abort left %d files", len(ents))
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.fitsds")
	writeCache(t, good, Uint8, []int{4}, 3, [][]float32{{1, 2, 3, 4}, {5, 6, 7, 8}}, []int32{0, 2})
	raw, _ := os.ReadFile(good)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), raw...)) }
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", raw[:50], "truncated"},
		{"magic", mod(func(b []byte) []byte { b[0] = 'X'; return b }), "bad magic"},
		{"version", mod(func(b []byte) []byte { b[8] = 9; return b }), "version 9"},
		{"dtype", mod(func(b []byte) []byte { b[12] = 9; return b }), "unknown element type"},
		{"truncated", raw[:len(raw)-3], "truncated"},
		{"trailing", append(append([]byte(nil), raw...), 0), "trailing"},
		{"label", mod(func(b []byte) []byte { b[len(b)-4] = 3; return b }), "label 3 of sample 1 outside 0..2"},
		{"huge n", mod(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[16:], 1<<62); return b }), "truncated"},
		// Changes that keep every field valid and the file's size: only the header checksum sees them.
		{"classes", mod(func(b []byte) []byte { b[28] = 4; return b }), "header checksum mismatch"},
		{"metadata", mod(func(b []byte) []byte { i := bytes.Index(b, []byte(`"name"`)); b[i+1] ^= 1; return b }), "header checksum mismatch"},
	} {
		p := filepath.Join(dir, tc.name)
		os.WriteFile(p, tc.b, 0o644)
		_, err := Open(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want the file name and %q", tc.name, err, tc.want)
		}
		if !data.IsBadFile(err) {
			t.Errorf("%s: %v is not a data.FileError", tc.name, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "absent")); !data.IsBadFile(err) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent file: %v, want a data.FileError that is fs.ErrNotExist", err)
	}
	// A flipped data byte passes Open but fails Verify.
	p := filepath.Join(dir, "flip")
	os.WriteFile(p, mod(func(b []byte) []byte { b[len(b)-9] ^= 1; return b }), 0o644)
	r := openCache(t, p)
	defer r.Close()
	if err := r.Verify(); err == nil || !strings.Contains(err.Error(), "checksum") || !data.IsBadFile(err) {
		t.Errorf("Verify: %v", err)
	}
}

// TestCreateRemovesStale: what a killed conversion left under the temporary name of the same cache is
// removed by the next Create; a temporary file of another cache stays.
func TestCreateRemovesStale(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.fitsds")
	stale := filepath.Join(dir, ".x.fitsds.tmp1234567")
	other := filepath.Join(dir, ".y.fitsds.tmp1234567")
	for _, n := range []string{stale, other} {
		if err := os.WriteFile(n, make([]byte, 1000), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeCache(t, p, Uint8, []int{2}, 2, [][]float32{{1, 2}}, []int32{1})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file of x.fitsds still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the temporary file of another cache was touched: %v", err)
	}
}

// FuzzOpen checks that no file content makes the reader panic or read out of bounds.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	p := filepath.Join(dir, "seed.fitsds")
	writeCache(f, p, Float32, []int{2, 2}, 2, [][]float32{{1, 2, 3, 4}}, []int32{1})
	seed, _ := os.ReadFile(p)
	f.Add(seed)
	f.Add(seed[:128])
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := newReader(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			return
		}
		if _, err := r.ReadAll(); err != nil {
			t.Fatalf("accepted cache does not read: %v", err)
		}
		_ = r.Verify()
	})
}

func TestLoadSet(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.fitsds")
	samples := make([][]float32, 10)
	labels := make([]int32, 10)
	for i := range samples {
		samples[i] = make([]float32, 2*2*3)
		samples[i][0] = float32(i)
		labels[i] = int32(i % 2)
	}
	writeCache(t, p, Uint8, []int{2, 2, 3}, 2, samples, labels)
	s, err := LoadSet(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 10 || s.T != 2 || s.F != 6 || len(s.FeatureShape) != 2 || s.Example(1)[0] != 1 {
		t.Fatalf("set N=%d T=%d F=%d shape %v", s.N, s.T, s.F, s.FeatureShape)
	}
	s, err = LoadSet(p, 5)
	if err != nil || s.N != 5 || s.Example(1)[0] != 2 || s.Labels[1] != 0 {
		t.Fatalf("limited set: %v, first values %v", err, s.Example(1))
	}
}

// TestLargeMetadata writes and reads back the metadata of a cache as large as the full Speech Commands
// training split's (84 843 clip paths, about 2.5 MB), and refuses metadata above the bound.
func TestLargeMetadata(t *testing.T) {
	dir := t.TempDir()
	files := make([]string, 84843)
	for i := range files {
		files[i] = fmt.Sprintf("sheila/%08x_nohash_%d.wav", i*2654435761, i%5)
	}
	meta, err := json.Marshal(map[string]any{"files": files})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "big.fitsds")
	w, err := Create(p, Header{DType: Float32, Shape: []int{2}, Classes: 2, Meta: meta})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendFloat32(1, []float32{0.5, -1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := openCache(t, p)
	defer r.Close()
	if got := r.Header().Meta; !bytes.Equal(got, meta) {
		t.Fatalf("metadata of %d bytes read back as %d bytes", len(meta), len(got))
	}
	huge := append([]byte(`"`), bytes.Repeat([]byte("x"), maxMeta)...)
	if _, err := Create(filepath.Join(dir, "huge.fitsds"), Header{DType: Float32, Shape: []int{2}, Classes: 2, Meta: append(huge, '"')}); err == nil {
		t.Error("metadata above the bound accepted")
	}
}

// BenchmarkVerify measures the CRC-32C pass that Reusable makes over a cache before a run trusts it
// (64 MiB of samples; b.SetBytes gives the throughput).
func BenchmarkVerify(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.fitsds")
	w, err := Create(p, Header{DType: Uint8, Shape: []int{1 << 20}, Classes: 2, Meta: json.RawMessage(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	sample := make([]uint8, 1<<20)
	for i := range 64 {
		sample[i] = uint8(i)
		if err := w.AppendUint8(int32(i%2), sample); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	r := openCache(b, p)
	defer r.Close()
	b.SetBytes(64 << 20)
	for b.Loop() {
		if err := r.Verify(); err != nil {
			b.Fatal(err)
		}
	}
}
