package cache

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
)

// TestLoadSetEncodings writes caches of every element type, with sample sizes that fill whole bytes of
// bits and sizes that do not, and holds LoadSet — memory-mapped and read — to the values written, bit for
// bit, in the file's encoding, whole and limited.
func TestLoadSetEncodings(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		dt    DType
		shape []int
		want  data.Encoding
		draw  func() float32
	}{
		{Bit, []int{5, 7}, data.Bits, func() float32 { return float32(rng.IntN(2)) }},
		{Bit, []int{4, 2, 3}, data.Bits, func() float32 { return float32(rng.IntN(2)) }},
		{Uint8, []int{5, 7}, data.Bytes, func() float32 { return float32(rng.IntN(256)) }},
		{Float32, []int{3, 2, 2}, data.Float32, func() float32 { return float32(rng.NormFloat64()) }},
	} {
		for _, mapped := range []bool{true, false} {
			name := tc.dt.String() + map[bool]string{true: "/mapped", false: "/read"}[mapped]
			t.Run(name, func(t *testing.T) {
				defer func(m bool) { mapFiles = m }(mapFiles)
				mapFiles = mapped
				p := filepath.Join(t.TempDir(), "s.fitsds")
				const n = 11
				size := 1
				for _, d := range tc.shape {
					size *= d
				}
				samples, labels := make([][]float32, n), make([]int32, n)
				for i := range samples {
					samples[i] = make([]float32, size)
					for k := range samples[i] {
						samples[i][k] = tc.draw()
					}
					labels[i] = int32(i % 3)
				}
				writeCache(t, p, tc.dt, tc.shape, 3, samples, labels)
				for _, limit := range []int{0, 4} {
					s, err := LoadSet(p, limit)
					if err != nil {
						t.Fatal(err)
					}
					rows := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
					if limit > 0 {
						rows = []int{0, 2, 5, 8} // i·11/4
					}
					if s.N != len(rows) || s.T != tc.shape[0] || s.F != size/tc.shape[0] || s.Encoding() != tc.want {
						t.Fatalf("limit %d: N=%d T=%d F=%d %v", limit, s.N, s.T, s.F, s.Encoding())
					}
					if len(tc.shape) > 2 && !slices.Equal(s.FeatureShape, tc.shape[1:]) {
						t.Errorf("feature shape %v", s.FeatureShape)
					}
					for j, i := range rows {
						got := s.Example(j)
						if !slices.EqualFunc(got, samples[i], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) || s.Labels[j] != labels[i] {
							t.Fatalf("limit %d: example %d = %v label %d, wrote %v label %d", limit, j, got, s.Labels[j], samples[i], labels[i])
						}
					}
				}
				// The whole set holds what the file holds: a bit, a byte or four bytes per value.
				s, _ := LoadSet(p, 0)
				r, _ := Open(p)
				defer r.Close()
				h := r.Header()
				if s.StorageBytes() != int64(n*h.SampleBytes()) {
					t.Errorf("%d bytes held for %d samples of %d bytes", s.StorageBytes(), n, h.SampleBytes())
				}
			})
		}
	}
}

// TestBitCache: a bit cache takes ⌈P/8⌉ bytes per sample, refuses values other than 0 and 1, and reads
// back through ReadBatch.
func TestBitCache(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "b.fitsds")
	samples := [][]float32{{1, 0, 1, 1, 0, 0, 0, 1, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}
	writeCache(t, p, Bit, []int{2, 5}, 2, samples, []int32{1, 0})
	st, _ := os.Stat(p)
	r := openCache(t, p)
	defer r.Close()
	if h := r.Header(); h.SampleBytes() != 2 || st.Size() != r.data+2*2+2*4 {
		t.Errorf("sample of %d bytes, file of %d", h.SampleBytes(), st.Size())
	}
	all, err := r.ReadAll()
	if err != nil || !slices.Equal(all, slices.Concat(samples...)) {
		t.Errorf("ReadAll %v %v", all, err)
	}
	if err := r.Verify(); err != nil {
		t.Error(err)
	}
	w, err := Create(filepath.Join(dir, "bad.fitsds"), Header{DType: Bit, Shape: []int{3}, Classes: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.AppendUint8(0, []uint8{0, 2, 1}); err == nil || !strings.Contains(err.Error(), "value 2") {
		t.Errorf("value 2 in a bit cache: %v", err)
	}
}

// TestOldLayoutConvertedAgain: a version 1 cache (an earlier build's) still opens but is not reusable (no
// header checksum), and a binary cache in the earlier uint8 layout is not reusable where bits are wanted,
// with a reason that says so.
func TestOldLayoutConvertedAgain(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "old.fitsds")
	w, err := Create(p, Header{DType: Uint8, Shape: []int{2, 2}, Classes: 2, Meta: []byte(`{"frontend":"f"}`)})
	if err != nil {
		t.Fatal(err)
	}
	w.AppendUint8(1, []uint8{0, 1, 1, 0})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Rewrite the version field to 1, as an earlier build wrote it.
	b, _ := os.ReadFile(p)
	binary.LittleEndian.PutUint32(b[8:], 1)
	os.WriteFile(p, b, 0o644)
	s, err := LoadSet(p, 0)
	if err != nil || !slices.Equal(s.Example(0), []float32{0, 1, 1, 0}) {
		t.Fatalf("version 1 cache: %v", err)
	}
	if ok, why := ReusableAs(p, "f", Uint8); ok || why == nil || !strings.Contains(why.Error(), "cache format version 1, without the header checksum") {
		t.Errorf("version 1 cache reusable: %v %v", ok, why)
	}
	// Back to this build's version (the header checksum covers the version field: the same bytes again).
	binary.LittleEndian.PutUint32(b[8:], Version)
	os.WriteFile(p, b, 0o644)
	if ok, why := ReusableAs(p, "f", Uint8); !ok {
		t.Errorf("uint8 cache wanted as uint8: %v", why)
	}
	ok, why := ReusableAs(p, "f", Bit)
	if ok || why == nil || !strings.Contains(why.Error(), "as uint8 (an earlier layout), this build stores them as bit") {
		t.Errorf("uint8 cache wanted as bits: %v %v", ok, why)
	}
	if ok, why := ReusableAs(p, "g", Uint8); ok || !strings.Contains(why.Error(), `made by front end "f"`) {
		t.Errorf("another recipe: %v %v", ok, why)
	}
}

// TestReusableVerifies: a cache whose data byte was flipped, or whose label was changed to another valid
// class, passes Open but is not reusable (its CRC-32 does not match), with the reason; it trained before.
func TestReusableVerifies(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.fitsds")
	samples := [][]float32{{1, 0, 1}, {0, 1, 1}, {1, 1, 0}}
	writeCache(t, p, Uint8, []int{1, 3}, 3, samples, []int32{0, 1, 2})
	raw, _ := os.ReadFile(p)
	if ok, why := Reusable(p, ""); !ok { // writeCache's metadata names no recipe: ""
		t.Fatalf("intact cache: %v", why)
	}
	for _, tc := range []struct {
		name   string
		offset int // from the end of the file
	}{{"data byte", 12 + 1}, {"label", 4}} {
		b := append([]byte(nil), raw...)
		if tc.name == "label" {
			b[len(b)-tc.offset] = 1 // sample 2: class 2 -> 1, a valid class
		} else {
			b[len(b)-tc.offset] ^= 1
		}
		q := filepath.Join(dir, tc.name+".fitsds")
		os.WriteFile(q, b, 0o644)
		r, err := Open(q)
		if err != nil {
			t.Fatalf("%s: Open: %v", tc.name, err)
		}
		r.Close()
		if ok, why := Reusable(q, ""); ok || why == nil || !strings.Contains(why.Error(), "checksum mismatch") {
			t.Errorf("%s: reusable %v, %v; want a checksum mismatch", tc.name, ok, why)
		}
	}
}

// TestMappedViewOutlivesSet: a view of a memory-mapped set keeps the mapping; the set it came from can be
// collected meanwhile.
func TestMappedViewOutlivesSet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "v.fitsds")
	samples := [][]float32{{1, 0, 1}, {0, 1, 1}, {1, 1, 0}}
	writeCache(t, p, Bit, []int{1, 3}, 2, samples, []int32{0, 1, 0})
	view := func() *data.Set {
		s, err := LoadSet(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s.Subset([]int{2, 0})
	}()
	for range 3 {
		runtime.GC()
	}
	if !slices.Equal(view.Example(0), samples[2]) || !slices.Equal(view.Example(1), samples[0]) {
		t.Errorf("view reads %v %v", view.Example(0), view.Example(1))
	}
}
