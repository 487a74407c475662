package data

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
)

// Encoding is how a Set holds its input values. Every encoding gives back the values it was made from bit
// for bit; they differ in the bytes per value.
type Encoding uint8

// Encodings.
const (
	// Float32 holds each value as a float32, 4 bytes (acoustic features).
	Float32 Encoding = iota + 1
	// Bytes holds each value as one byte indexing a table of 256 float32 levels: spike counts 0..255
	// (CountLevels) or pixels p/255 (package data/mnist).
	Bytes
	// Bits holds binary values, 0 or 1, as one bit each: value k of an example is bit k%8 (the least
	// significant first) of its byte k/8, and each example starts on a byte boundary (BitsLen bytes).
	Bits
)

func (e Encoding) String() string {
	switch e {
	case Float32:
		return "float32"
	case Bytes:
		return "bytes"
	case Bits:
		return "bits"
	}
	return fmt.Sprintf("encoding(%d)", uint8(e))
}

// BitsLen returns the bytes that one example of n binary values takes in the Bits encoding, ⌈n/8⌉.
func BitsLen(n int) int { return (n + 7) / 8 }

// CountLevels are the levels of spike counts held as Bytes: byte k is the count k.
var CountLevels = func() *[256]float32 {
	var l [256]float32
	for k := range l {
		l[k] = float32(k)
	}
	return &l
}()

// bitLevels expands one byte of the Bits encoding into its eight values.
var bitLevels = func() *[256][8]float32 {
	var t [256][8]float32
	for b := range t {
		for k := range 8 {
			t[b][k] = float32(b >> k & 1)
		}
	}
	return &t
}()

// store is the memory behind a set and the views of it: n examples of size values each.
type store struct {
	enc    Encoding
	size   int           // values per example, T·F
	stride int           // bytes per example in raw (Bits, Bytes)
	raw    []byte        // Bits, Bytes
	f32    []float32     // Float32
	levels *[256]float32 // Bytes
}

// examples returns the number of whole examples held and whether the memory holds exactly that many.
func (st *store) examples() (n int, exact bool) {
	if st.size == 0 {
		return 0, st.f32 == nil && st.raw == nil
	}
	if st.enc == Float32 {
		return len(st.f32) / st.size, len(st.f32)%st.size == 0
	}
	return len(st.raw) / st.stride, len(st.raw)%st.stride == 0
}

// expand writes stored example j into dst (size values).
func (st *store) expand(j int, dst []float32) {
	switch st.enc {
	case Float32:
		copy(dst, st.f32[j*st.size:(j+1)*st.size])
	case Bytes:
		row := st.raw[j*st.stride : j*st.stride+st.size]
		lv := st.levels
		dst = dst[:len(row)]
		for k, b := range row {
			dst[k] = lv[b]
		}
	case Bits:
		row := st.raw[j*st.stride : (j+1)*st.stride]
		full := st.size / 8
		for k, b := range row[:full] {
			copy(dst[8*k:8*k+8], bitLevels[b][:])
		}
		if rest := st.size - 8*full; rest > 0 {
			copy(dst[8*full:st.size], bitLevels[row[full]][:rest])
		}
	}
}

// appendEvents appends to idx and vals the positions (from 0) and values of the nonzero entries (NaN counts)
// among values [from, from+n) of stored example j, in increasing position.
func (st *store) appendEvents(j, from, n int, idx []int32, vals []float32) ([]int32, []float32) {
	switch st.enc {
	case Float32:
		for k, v := range st.f32[j*st.size+from : j*st.size+from+n] {
			if v != 0 || v != v {
				idx, vals = append(idx, int32(k)), append(vals, v)
			}
		}
	case Bytes:
		for k, b := range st.raw[j*st.stride+from : j*st.stride+from+n] {
			if v := st.levels[b]; v != 0 || v != v {
				idx, vals = append(idx, int32(k)), append(vals, v)
			}
		}
	case Bits:
		row := st.raw[j*st.stride : (j+1)*st.stride]
		for k := from; k < from+n; {
			b := row[k>>3] >> (k & 7) // the bits of values k, k+1, … in this byte
			if b == 0 {
				k += 8 - k&7
				continue
			}
			k += bits.TrailingZeros8(b)
			if k < from+n {
				idx, vals = append(idx, int32(k-from)), append(vals, 1)
			}
			k++
		}
	}
	return idx, vals
}

// Set is one split of a dataset: N examples of T time bins of F features and their labels. The inputs are
// held compactly (Encoding) and read as float32 with ExampleInto; sets made by Subset, Head and the split
// functions are views that share them.
type Set struct {
	// Labels holds the class of each example, in [0, classes). A view has its own copy.
	Labels []int32
	// N is the number of examples, T the number of time bins, F the number of features per time bin.
	N, T, F int
	// FeatureShape is the shape of the features of one time bin when they are not a flat vector, e.g.
	// [2, 64, 64] (polarity, height, width) for event cameras; its product is F. Nil means [F].
	FeatureShape []int

	st   *store
	idx  []int // example i is stored example idx[i]; nil: stored example i
	view bool  // made by Subset or Head: the store may hold more examples than N
}

// newSet makes a set over st with labels; N is len(labels).
func newSet(st *store, labels []int32, T, F int) *Set {
	return &Set{Labels: labels, N: len(labels), T: T, F: F, st: st}
}

// NewFloat32Set returns a set of the values x, [len(labels), T, F] row-major, held as float32. x is not
// copied: the set reads it, and the caller must not change it afterwards.
func NewFloat32Set(x []float32, labels []int32, T, F int) *Set {
	if x == nil {
		x = []float32{}
	}
	return newSet(&store{enc: Float32, size: T * F, f32: x}, labels, T, F)
}

// NewBytesSet returns a set whose value k of example i is levels[b[i·T·F+k]], held as one byte per value
// (Bytes). b is not copied; neither b nor *levels may change afterwards.
func NewBytesSet(b []byte, levels *[256]float32, labels []int32, T, F int) *Set {
	if b == nil {
		b = []byte{}
	}
	return newSet(&store{enc: Bytes, size: T * F, stride: T * F, raw: b, levels: levels}, labels, T, F)
}

// NewBitsSet returns a set of binary values held as bits (the Bits layout: BitsLen(T·F) bytes per
// example). b is not copied and must not change afterwards.
func NewBitsSet(b []byte, labels []int32, T, F int) *Set {
	if b == nil {
		b = []byte{}
	}
	return newSet(&store{enc: Bits, size: T * F, stride: BitsLen(T * F), raw: b}, labels, T, F)
}

// NewSet returns a set of the values x, [len(labels), T, F] row-major, in the most compact encoding that
// gives every value back bit for bit: Bits when every value is 0 or 1, Bytes (CountLevels) when every value
// is an integer in 0..255, Float32 otherwise (x itself, not copied; the caller must not change it). -0 is
// not 0 bit for bit and keeps a set in Float32. The choice takes one pass over x.
func NewSet(x []float32, labels []int32, T, F int) *Set {
	switch ChooseEncoding(x) {
	case Bits:
		return NewBitsSet(PackBits(x, T*F), labels, T, F)
	case Bytes:
		b := make([]byte, len(x))
		for i, v := range x {
			b[i] = byte(v)
		}
		return NewBytesSet(b, CountLevels, labels, T, F)
	}
	return NewFloat32Set(x, labels, T, F)
}

// ChooseEncoding returns the encoding NewSet holds the values x in: Bits when every value is +0 or 1,
// Bytes when every value is an integer in 0..255 (and not -0), Float32 otherwise.
func ChooseEncoding(x []float32) Encoding {
	enc := Bits
	for _, v := range x {
		if v == 0 || v == 1 {
			if v == 0 && math.Signbit(float64(v)) {
				return Float32
			}
			continue
		}
		if !(v > 0 && v <= 255 && v == float32(int(v))) {
			return Float32
		}
		enc = Bytes
	}
	return enc
}

// PackBits packs the binary values x (every value 0 or 1), examples of size values each, into the Bits
// layout. Any nonzero value becomes a 1.
func PackBits(x []float32, size int) []byte {
	if size <= 0 {
		return []byte{}
	}
	n := len(x) / size
	stride := BitsLen(size)
	b := make([]byte, n*stride)
	for i := range n {
		row := b[i*stride : (i+1)*stride]
		for k, v := range x[i*size : (i+1)*size] {
			if v != 0 {
				row[k>>3] |= 1 << (k & 7)
			}
		}
	}
	return b
}

// ReleaseWith has f called once neither the set nor any view of it can be reached any more, when nothing
// reads the memory behind its inputs: a reader that maps a file into memory unmaps it there. Call it once,
// on the set a reader made.
func (s *Set) ReleaseWith(f func()) {
	if s == nil || s.st == nil || f == nil {
		return
	}
	runtime.AddCleanup(s.st, func(f func()) { f() }, f)
}

// Encoding returns how the set holds its inputs (0 for a set without inputs).
func (s *Set) Encoding() Encoding {
	if s == nil || s.st == nil {
		return 0
	}
	return s.st.enc
}

// StorageBytes returns the bytes of memory that hold the inputs behind the set, shared with the views of
// it (a memory-mapped cache counts its mapped data).
func (s *Set) StorageBytes() int64 {
	if s == nil || s.st == nil {
		return 0
	}
	if s.st.enc == Float32 {
		return 4 * int64(len(s.st.f32))
	}
	return int64(len(s.st.raw))
}

// DenseBytes returns the bytes the set's N examples take as float32 values, N·T·F·4: what a batch of all
// of them takes, and what a set held them in before it held them compactly.
func (s *Set) DenseBytes() int64 {
	if s == nil {
		return 0
	}
	return 4 * int64(s.N) * int64(s.T) * int64(s.F)
}

// row returns the stored example of example i.
func (s *Set) row(i int) int {
	if s.idx != nil {
		return s.idx[i]
	}
	if i < 0 || i >= s.N {
		panic(fmt.Sprintf("data: example %d of a set of %d", i, s.N))
	}
	return i
}

// ExampleInto writes the inputs of example i, [T, F] row-major, into dst, which must hold exactly T·F
// values.
func (s *Set) ExampleInto(i int, dst []float32) {
	if len(dst) != s.T*s.F {
		panic(fmt.Sprintf("data: buffer of %d values for an example of T·F = %d", len(dst), s.T*s.F))
	}
	s.st.expand(s.row(i), dst)
	runtime.KeepAlive(s.st) // a mapped file stays mapped until the last read
}

// AppendEvents appends to idx and vals the events of time bin t of example i: the feature positions, in
// increasing order, and the values of its nonzero inputs (the event-driven form of what ExampleInto writes
// at [t, :], read without expanding the example). It returns the two slices.
func (s *Set) AppendEvents(i, t int, idx []int32, vals []float32) ([]int32, []float32) {
	if t < 0 || t >= s.T {
		panic(fmt.Sprintf("data: time bin %d of an example of %d", t, s.T))
	}
	idx, vals = s.st.appendEvents(s.row(i), t*s.F, s.F, idx, vals)
	runtime.KeepAlive(s.st)
	return idx, vals
}

// ExamplesInto writes the examples idx, one after another, into dst ([len(idx), T, F]), which must hold
// exactly len(idx)·T·F values.
func (s *Set) ExamplesInto(idx []int, dst []float32) {
	n := s.T * s.F
	if len(dst) != len(idx)*n {
		panic(fmt.Sprintf("data: buffer of %d values for %d examples of T·F = %d", len(dst), len(idx), n))
	}
	for j, i := range idx {
		s.st.expand(s.row(i), dst[j*n:(j+1)*n])
	}
	runtime.KeepAlive(s.st)
}

// Example returns the inputs of example i, [T, F] row-major, in a new slice.
func (s *Set) Example(i int) []float32 {
	x := make([]float32, s.T*s.F)
	s.ExampleInto(i, x)
	return x
}

// Dense returns every input value, [N, T, F] row-major, in a new slice: N·T·F·4 bytes, for small sets
// (tests, plots).
func (s *Set) Dense() []float32 {
	n := s.T * s.F
	x := make([]float32, s.N*n)
	for i := range s.N {
		s.ExampleInto(i, x[i*n:(i+1)*n])
	}
	return x
}

// Validate checks that the inputs hold N examples of T·F values, the labels N classes, that the examples
// a view names exist and that FeatureShape agrees with F.
func (s *Set) Validate() error {
	if s == nil {
		return fmt.Errorf("nil set")
	}
	if s.N < 0 || s.T <= 0 || s.F <= 0 {
		return fmt.Errorf("bad set sizes N=%d T=%d F=%d", s.N, s.T, s.F)
	}
	if len(s.Labels) != s.N {
		return fmt.Errorf("%d labels for %d examples", len(s.Labels), s.N)
	}
	switch {
	case s.st == nil && s.N > 0:
		return fmt.Errorf("no inputs for %d examples", s.N)
	case s.st != nil:
		if s.st.size != s.T*s.F {
			return fmt.Errorf("inputs of %d values per example, want T*F = %d*%d", s.st.size, s.T, s.F)
		}
		held, exact := s.st.examples()
		if !exact {
			return fmt.Errorf("inputs of %v hold a partial example (%d bytes)", s.st.enc, s.StorageBytes())
		}
		if s.idx == nil && (held < s.N || !s.view && held != s.N) {
			return fmt.Errorf("inputs hold %d examples of [T=%d, F=%d], want N = %d", held, s.T, s.F, s.N)
		}
		if s.idx != nil {
			if len(s.idx) != s.N {
				return fmt.Errorf("view of %d indices for %d examples", len(s.idx), s.N)
			}
			for _, j := range s.idx {
				if j < 0 || j >= held {
					return fmt.Errorf("view names example %d of %d", j, held)
				}
			}
		}
		if s.st.enc == Bytes && s.st.levels == nil {
			return fmt.Errorf("byte inputs without levels")
		}
	}
	if s.FeatureShape != nil {
		p := 1
		for _, d := range s.FeatureShape {
			p *= d
		}
		if p != s.F {
			return fmt.Errorf("feature shape %v has %d elements, want F=%d", s.FeatureShape, p, s.F)
		}
	}
	return nil
}

// Shape returns the shape of one example: [T, F], or [T, FeatureShape...].
func (s *Set) Shape() []int {
	if s.FeatureShape == nil {
		return []int{s.T, s.F}
	}
	return append([]int{s.T}, s.FeatureShape...)
}

// Subset returns a view of the examples at the given indices, in that order: it shares the inputs of s
// (nothing is copied but the labels) and holds one index per example.
func (s *Set) Subset(idx []int) *Set {
	out := &Set{
		Labels:       make([]int32, len(idx)),
		N:            len(idx),
		T:            s.T,
		F:            s.F,
		FeatureShape: slices.Clone(s.FeatureShape),
		st:           s.st,
		idx:          make([]int, len(idx)),
		view:         true,
	}
	for j, i := range idx {
		out.idx[j] = s.row(i)
		out.Labels[j] = s.Labels[i]
	}
	return out
}

// Head returns the set restricted to its first n examples, a view sharing its inputs and labels; the set
// itself when n <= 0, s is nil or n >= s.N.
func (s *Set) Head(n int) *Set {
	if s == nil || n <= 0 || n >= s.N {
		return s
	}
	out := *s
	if s.idx != nil {
		out.idx = s.idx[:n:n]
	}
	out.Labels = s.Labels[:n:n]
	out.N = n
	out.view = true
	return &out
}

// SplitOff holds out a fraction of the set, chosen by a permutation drawn from seed, stratified by class so
// that every class keeps the same proportion in both parts. It returns (kept, heldOut), views of s in the
// order of s; s is not modified. The same seed always holds out the same examples.
func (s *Set) SplitOff(fraction float64, seed uint64) (kept, heldOut *Set) {
	byClass := map[int32][]int{}
	for i, l := range s.Labels {
		byClass[l] = append(byClass[l], i)
	}
	classes := make([]int32, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	rng := rand.New(rand.NewPCG(seed, 0x5eed5b1175))
	var keep, hold []int
	for _, c := range classes {
		idx := byClass[c]
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		k := int(fraction*float64(len(idx)) + 0.5)
		hold = append(hold, idx[:k]...)
		keep = append(keep, idx[k:]...)
	}
	slices.Sort(keep)
	slices.Sort(hold)
	return s.Subset(keep), s.Subset(hold)
}
