// Package nprand reproduces, bit for bit, the integer permutations of numpy's legacy random generator
// numpy.random.RandomState, so that a split drawn in Python with RandomState(seed).permutation(n) can be
// drawn again in Go.
//
// The generator is the 32-bit Mersenne Twister MT19937 (Matsumoto and Nishimura, 1998). RandomState(s)
// with an integer seed s in [0, 2³²) initialises its state with the reference init_genrand(s) (numpy's
// mt19937_seed); init_by_array, which numpy uses only for array seeds, is in the tests (NewFromArray).
// permutation(n) shuffles arange(n) in place: for i from n−1 down to 1 it draws j uniformly in [0, i]
// with numpy's legacy bounded draw (random_interval: the smallest all-ones mask ≥ i applied to 32-bit
// outputs, rejecting values above i; 64-bit outputs when i ≥ 2³²) and swaps elements i and j.
package nprand

import (
	"fmt"
	"math/bits"
)

const (
	stateLen  = 624
	shift     = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// MT19937 is the 32-bit Mersenne Twister in numpy's legacy RandomState order. The zero value is not
// usable: make one with New or NewFromArray.
type MT19937 struct {
	key [stateLen]uint32
	pos int
}

// New returns the generator of numpy.random.RandomState(seed) for an integer seed, which numpy accepts
// in [0, 2³²−1]; other seeds are an error, as in numpy.
func New(seed int64) (*MT19937, error) {
	if seed < 0 || seed > 0xffffffff {
		return nil, fmt.Errorf("seed %d outside 0..4294967295", seed)
	}
	m := &MT19937{}
	m.initGenrand(uint32(seed))
	return m, nil
}

// initGenrand is the reference initialisation by one 32-bit integer.
func (m *MT19937) initGenrand(s uint32) {
	for i := 0; i < stateLen; i++ {
		m.key[i] = s
		s = 1812433253*(s^(s>>30)) + uint32(i+1)
	}
	m.pos = stateLen
}

// generate refills the state with the next 624 words.
func (m *MT19937) generate() {
	mt := &m.key
	// Word i mixes words i and i+1 and the word shift places on, all modulo stateLen: past the end they
	// are the words already refilled.
	for i := range stateLen {
		y := (mt[i] & upperMask) | (mt[(i+1)%stateLen] & lowerMask)
		mt[i] = mt[(i+shift)%stateLen] ^ (y >> 1) ^ (y&1)*matrixA
	}
	m.pos = 0
}

// Uint32 returns the next 32-bit output (genrand_int32).
func (m *MT19937) Uint32() uint32 {
	if m.pos == stateLen {
		m.generate()
	}
	y := m.key[m.pos]
	m.pos++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// Uint64 returns the next 64-bit output as numpy's legacy generator makes it: the first 32-bit output in
// the high half, the second in the low half.
func (m *MT19937) Uint64() uint64 {
	hi := uint64(m.Uint32())
	return hi<<32 | uint64(m.Uint32())
}

// Interval returns an integer uniform in [0, hi] drawn as numpy's legacy random_interval does: mask the
// output with the smallest 2ᵏ−1 ≥ hi and draw again while the result exceeds hi. hi = 0 draws nothing.
func (m *MT19937) Interval(hi uint64) uint64 {
	if hi == 0 {
		return 0
	}
	mask := uint64(1)<<bits.Len64(hi) - 1 // 1<<64 is 0 in Go: hi ≥ 2⁶³ masks nothing
	if hi <= 0xffffffff {
		for {
			if v := uint64(m.Uint32()) & mask; v <= hi {
				return v
			}
		}
	}
	for {
		if v := m.Uint64() & mask; v <= hi {
			return v
		}
	}
}

// Shuffle permutes x in place as numpy's legacy RandomState.shuffle does for a one-dimensional array:
// for i = len(x)−1 down to 1, swap x[i] with x[Interval(i)].
func Shuffle[T any](m *MT19937, x []T) {
	for i := len(x) - 1; i >= 1; i-- {
		j := m.Interval(uint64(i))
		x[i], x[j] = x[j], x[i]
	}
}

// Permutation returns RandomState(seed).permutation(n): a shuffled [0, 1, ..., n−1]. n must be ≥ 0.
func Permutation(seed int64, n int) ([]int, error) {
	if n < 0 {
		return nil, fmt.Errorf("permutation of %d elements: n must be >= 0", n)
	}
	m, err := New(seed)
	if err != nil {
		return nil, err
	}
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	Shuffle(m, p)
	return p, nil
}
