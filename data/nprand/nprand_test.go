package nprand

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fits-snn/fits/internal/pyref"
)

// golden is testdata/golden.json, written by testdata/numpy_permutation.py --golden.
type golden struct {
	Numpy string `json:"numpy"`
	Full  []struct {
		Seed        int64 `json:"seed"`
		N           int   `json:"n"`
		Permutation []int `json:"permutation"`
	} `json:"full"`
	Hashed []struct {
		Seed   int64  `json:"seed"`
		N      int    `json:"n"`
		SHA256 string `json:"sha256"`
		Head   []int  `json:"head"`
		Tail   []int  `json:"tail"`
	} `json:"hashed"`
	Uint32 []struct {
		Seed  int64    `json:"seed"`
		First []uint32 `json:"first"`
		At    []uint32 `json:"at_1248"`
	} `json:"uint32"`
	Tomaxint []struct {
		Seed   int64   `json:"seed"`
		Values []int64 `json:"values"`
	} `json:"tomaxint"`
	ByArray []struct {
		Key   []uint32 `json:"key"`
		First []uint32 `json:"first"`
	} `json:"by_array"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// permHash is the SHA-256 of p as little-endian int64 values, as the reference script computes it.
func permHash(p []int) string {
	h := sha256.New()
	var b [8]byte
	for _, v := range p {
		binary.LittleEndian.PutUint64(b[:], uint64(int64(v)))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func mustPerm(t *testing.T, seed int64, n int) []int {
	t.Helper()
	p, err := Permutation(seed, n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPermutationMatchesNumpyGolden(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Full {
		if p := mustPerm(t, c.Seed, c.N); !slices.Equal(p, c.Permutation) {
			t.Errorf("seed %d, n %d: got %v, numpy %s gives %v", c.Seed, c.N, p, g.Numpy, c.Permutation)
		}
	}
	for _, c := range g.Hashed {
		p := mustPerm(t, c.Seed, c.N)
		if !slices.Equal(p[:50], c.Head) || !slices.Equal(p[len(p)-50:], c.Tail) {
			t.Errorf("seed %d, n %d: head %v tail %v, numpy: head %v tail %v", c.Seed, c.N, p[:50], p[len(p)-50:], c.Head, c.Tail)
		}
		if h := permHash(p); h != c.SHA256 {
			t.Errorf("seed %d, n %d: SHA-256 %s, numpy %s", c.Seed, c.N, h, c.SHA256)
		}
	}
}

func TestRawOutputsMatchNumpy(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Uint32 {
		m, err := New(c.Seed)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]uint32, 1300)
		for i := range v {
			v[i] = m.Uint32()
		}
		if !slices.Equal(v[:20], c.First) || !slices.Equal(v[1248:1252], c.At) {
			t.Errorf("seed %d: outputs %v ... %v, numpy %v ... %v", c.Seed, v[:20], v[1248:1252], c.First, c.At)
		}
	}
	for _, c := range g.Tomaxint {
		m, _ := New(c.Seed)
		for i, want := range c.Values {
			if got := int64(m.Uint64() >> 1); got != want {
				t.Errorf("seed %d: 64-bit output %d >> 1 = %d, numpy tomaxint %d", c.Seed, i, got, want)
			}
		}
	}
	for _, c := range g.ByArray {
		m, err := NewFromArray(c.Key)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range c.First {
			if got := m.Uint32(); got != want {
				t.Errorf("key %v: output %d = %d, numpy %d", c.Key, i, got, want)
			}
		}
	}
}

// TestReferenceSequence checks the first outputs of init_genrand(5489) against the values published with
// the reference implementation of MT19937 (mt19937ar.out begins 3499211612 581869302 3890346734).
func TestReferenceSequence(t *testing.T) {
	m, _ := New(5489)
	for i, want := range []uint32{3499211612, 581869302, 3890346734, 3586334585, 545404204} {
		if got := m.Uint32(); got != want {
			t.Fatalf("output %d = %d, want %d", i, got, want)
		}
	}
}

func TestPermutationIsAPermutation(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000} {
		p := mustPerm(t, 3, n)
		s := slices.Clone(p)
		slices.Sort(s)
		for i, v := range s {
			if v != i {
				t.Fatalf("n %d: %v is not a permutation of 0..%d", n, p, n-1)
			}
		}
	}
}

func TestBadArguments(t *testing.T) {
	for _, c := range []struct {
		seed int64
		n    int
	}{{-1, 5}, {1 << 32, 5}, {0, -1}} {
		if _, err := Permutation(c.seed, c.n); err == nil {
			t.Errorf("Permutation(%d, %d): no error", c.seed, c.n)
		}
	}
	if _, err := NewFromArray(nil); err == nil {
		t.Error("NewFromArray(nil): no error")
	}
}

func TestInterval(t *testing.T) {
	m, _ := New(9)
	for _, hi := range []uint64{0, 1, 2, 5, 1 << 31, 1<<32 - 1, 1 << 32, 1<<40 + 3} {
		for k := 0; k < 100; k++ {
			if v := m.Interval(hi); v > hi {
				t.Fatalf("Interval(%d) = %d", hi, v)
			}
		}
	}
}

// TestPermutationMatchesNumpyLive draws permutations with numpy itself (the project virtualenv) and
// compares them with Permutation, including the SHD training-set size 8156.
func TestPermutationMatchesNumpyLive(t *testing.T) {
	py := pyref.Python(t, "numpy")
	cases := []struct {
		seed int64
		n    int
	}{{0, 8156}, {0, 2264}, {0, 75466}, {1, 8156}, {2, 8156}, {4, 8156}, {0, 1}, {0, 4}, {99, 12345}, {4294967295, 300}}
	var args []string
	for _, c := range cases {
		args = append(args, fmt.Sprintf("%d:%d", c.seed, c.n))
	}
	out, err := pyref.Run(py, filepath.Join("testdata", "numpy_permutation.py"), args...)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Numpy string `json:"numpy"`
		Cases []struct {
			Seed        int64 `json:"seed"`
			N           int   `json:"n"`
			Permutation []int `json:"permutation"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != len(cases) {
		t.Fatalf("%d cases back, want %d", len(res.Cases), len(cases))
	}
	for _, c := range res.Cases {
		p := mustPerm(t, c.Seed, c.N)
		if i := firstDiff(p, c.Permutation); i >= 0 {
			t.Errorf("seed %d, n %d: first difference from numpy %s at %d", c.Seed, c.N, res.Numpy, i)
		}
	}
}

func firstDiff(a, b []int) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func BenchmarkPermutation8156(b *testing.B) {
	for b.Loop() {
		Permutation(0, 8156)
	}
}
