package data

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bitsEqual reports whether a and b hold the same float32 values bit for bit.
func bitsEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestEncodingsRoundTrip holds every encoding to the float32 values it was made from, bit for bit, for
// example sizes that fill whole bytes of bits and sizes that do not.
func TestEncodingsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pixels := func() *[256]float32 { // the sMNIST scaling, p/255 in float32
		var l [256]float32
		for k := range l {
			l[k] = float32(k) / 255
		}
		return &l
	}()
	for _, tc := range []struct {
		name string
		T, F int
		draw func() float32
		want Encoding
	}{
		{"binary spikes, 8 | T·F", 4, 6, func() float32 { return float32(rng.IntN(2)) }, Bits},
		{"binary spikes, T·F = 35 (a partial byte)", 5, 7, func() float32 { return float32(rng.IntN(2)) }, Bits},
		{"binary spikes, one value", 1, 1, func() float32 { return float32(rng.IntN(2)) }, Bits},
		{"all zero", 3, 3, func() float32 { return 0 }, Bits},
		{"spike counts", 5, 7, func() float32 { return float32(rng.IntN(4)) }, Bytes},
		{"counts up to 255", 2, 9, func() float32 { return float32(rng.IntN(256)) }, Bytes},
		{"count 256", 1, 2, func() float32 { return 256 }, Float32},
		{"fractions", 3, 5, func() float32 { return rng.Float32() }, Float32},
		{"negative integers", 3, 5, func() float32 { return -float32(rng.IntN(3)) - 1 }, Float32},
		{"negative zero", 1, 3, func() float32 { return float32(math.Copysign(0, -1)) }, Float32},
		{"NaN", 1, 3, func() float32 { return float32(math.NaN()) }, Float32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 9
			x := make([]float32, n*tc.T*tc.F)
			for i := range x {
				x[i] = tc.draw()
			}
			labels := make([]int32, n)
			s := NewSet(slices.Clone(x), labels, tc.T, tc.F)
			if s.Encoding() != tc.want {
				t.Fatalf("encoding %v, want %v", s.Encoding(), tc.want)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := s.Dense(); !bitsEqual(got, x) {
				t.Fatalf("values %v, made from %v", got, x)
			}
			buf := make([]float32, tc.T*tc.F)
			for i := range n {
				s.ExampleInto(i, buf)
				if !bitsEqual(buf, x[i*len(buf):(i+1)*len(buf)]) {
					t.Fatalf("example %d: %v", i, buf)
				}
			}
			// The events of every time bin: the nonzero values of the dense example (NaN included), in
			// increasing position, read through a view that reverses the examples.
			rev := s.Subset([]int{8, 7, 6, 5, 4, 3, 2, 1, 0})
			var idx []int32
			var vals []float32
			for i := range n {
				s.ExampleInto(n-1-i, buf)
				for tb := range tc.T {
					var wantIdx []int32
					var wantVals []float32
					for f, v := range buf[tb*tc.F : (tb+1)*tc.F] {
						if v != 0 || v != v {
							wantIdx, wantVals = append(wantIdx, int32(f)), append(wantVals, v)
						}
					}
					idx, vals = rev.AppendEvents(i, tb, append(idx[:0], -7), append(vals[:0], -7))
					if idx[0] != -7 || vals[0] != -7 || !slices.Equal(idx[1:], wantIdx) || !bitsEqual(vals[1:], wantVals) {
						t.Fatalf("events of example %d, bin %d: %v %v, want %v %v", i, tb, idx[1:], vals[1:], wantIdx, wantVals)
					}
				}
			}
			// The bytes held: a bit, a byte or four bytes per value.
			want := map[Encoding]int64{Bits: int64(n * BitsLen(tc.T*tc.F)), Bytes: int64(len(x)), Float32: 4 * int64(len(x))}[tc.want]
			if s.StorageBytes() != want || s.DenseBytes() != 4*int64(len(x)) {
				t.Errorf("%d bytes held (dense %d), want %d", s.StorageBytes(), s.DenseBytes(), want)
			}
		})
	}
	t.Run("pixels as bytes", func(t *testing.T) {
		b := make([]byte, 4*28)
		x := make([]float32, len(b))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			x[i] = float32(b[i]) / 255 // the float32 path of data/mnist
		}
		s := NewBytesSet(b, pixels, make([]int32, 4), 28, 1)
		if s.Encoding() != Bytes || s.Validate() != nil || !bitsEqual(s.Dense(), x) {
			t.Errorf("pixels: %v %v", s.Encoding(), s.Validate())
		}
	})
}

// TestViewsShare holds Subset, Head, SplitOff and OfficialSplitOff to views: they share the inputs of
// their set (no copy), read the examples they name, and views of views index the stored examples.
func TestViewsShare(t *testing.T) {
	for _, enc := range []Encoding{Bits, Bytes, Float32} {
		t.Run(enc.String(), func(t *testing.T) {
			const n, T, F = 40, 3, 5
			x, labels := make([]float32, n*T*F), make([]int32, n)
			for i := range n {
				labels[i] = int32(i % 4)
				for k := range T * F {
					switch enc {
					case Bits:
						x[i*T*F+k] = float32((i >> (k % 6)) & 1)
					case Bytes:
						x[i*T*F+k] = float32(i)
					default:
						x[i*T*F+k] = float32(i) + 0.5
					}
				}
			}
			s := NewSet(x, labels, T, F)
			if s.Encoding() != enc {
				t.Fatalf("encoding %v", s.Encoding())
			}
			want := func(i int) []float32 { return x[i*T*F : (i+1)*T*F] }
			check := func(name string, v *Set, rows []int) {
				t.Helper()
				if !v.Shares(s) || v.StorageBytes() != s.StorageBytes() {
					t.Errorf("%s: does not share the inputs", name)
				}
				if err := v.Validate(); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if v.N != len(rows) {
					t.Fatalf("%s: %d examples, want %d", name, v.N, len(rows))
				}
				for j, i := range rows {
					if !bitsEqual(v.Example(j), want(i)) || v.Labels[j] != labels[i] {
						t.Errorf("%s: example %d is not example %d", name, j, i)
					}
				}
			}
			sub := s.Subset([]int{7, 3, 3, 39})
			check("Subset", sub, []int{7, 3, 3, 39})
			check("Subset of Subset", sub.Subset([]int{3, 0}), []int{39, 7})
			check("Head", s.Head(5), []int{0, 1, 2, 3, 4})
			check("Head of Subset", sub.Head(2), []int{7, 3})
			check("Subset of Head", s.Head(5).Subset([]int{4}), []int{4})
			kept, held := s.SplitOff(0.25, 3)
			if kept.N+held.N != n || !kept.Shares(s) || !held.Shares(s) {
				t.Errorf("SplitOff: %d + %d examples, sharing %v %v", kept.N, held.N, kept.Shares(s), held.Shares(s))
			}
			tr, va, err := s.OfficialSplitOff(0)
			if err != nil {
				t.Fatal(err)
			}
			v, rest, _ := OfficialValSplit(n, 0)
			check("OfficialSplitOff validation", va, v)
			check("OfficialSplitOff train", tr, rest)
			// A view's labels are its own.
			sub.Labels[0] = 0
			if s.Labels[7] != 3 {
				t.Error("a view's labels write through to its set")
			}
			if other := NewSet(slices.Clone(x), labels, T, F); other.Shares(s) {
				t.Error("two sets made apart share their inputs")
			}
		})
	}
}

// Shares reports whether s and o read the same inputs (one is a view of the other, or both of a third).
func (s *Set) Shares(o *Set) bool {
	return s != nil && o != nil && s.st != nil && s.st == o.st
}
