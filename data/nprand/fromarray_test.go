package nprand

import "fmt"

// NewFromArray returns the generator of numpy.random.RandomState(key) for an array of 32-bit integers
// (the reference init_by_array). An empty key is an error, as in numpy.
func NewFromArray(key []uint32) (*MT19937, error) {
	if len(key) == 0 {
		return nil, fmt.Errorf("empty seed array")
	}
	m := &MT19937{}
	m.initGenrand(19650218)
	mt := &m.key
	i, j := 1, 0
	for k := max(stateLen, len(key)); k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= stateLen {
			mt[0] = mt[stateLen-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := stateLen - 1; k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= stateLen {
			mt[0] = mt[stateLen-1]
			i = 1
		}
	}
	mt[0] = 0x80000000
	m.pos = stateLen
	return m, nil
}
