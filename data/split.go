package data

import (
	"fmt"

	"github.com/fits-snn/fits/data/nprand"
)

// OfficialValFraction is the fraction of the training set that the released code's SHD* protocol holds out
// for validation.
const OfficialValFraction = 0.2

// OfficialValCount returns the number of validation examples the released code holds out of n training
// examples: max(1, int(0.2·n)), 1631 of 8156 for SHD.
func OfficialValCount(n int) int {
	return max(1, int(float64(n)*OfficialValFraction))
}

// OfficialValSplit returns the validation split of the released code's SHD* protocol for a training set of
// n examples: p = numpy.random.RandomState(seed).permutation(n), validation = p[:OfficialValCount(n)] and
// train = the rest, both in permutation order (the order the released code indexes the examples in). The
// split is not stratified by class. n must be ≥ 2 and seed in [0, 2³²) (numpy's range); the released code
// uses seed 0.
func OfficialValSplit(n int, seed int64) (val, train []int, err error) {
	if n < 2 {
		return nil, nil, fmt.Errorf("validation split of %d examples: need at least 2", n)
	}
	p, err := nprand.Permutation(seed, n)
	if err != nil {
		return nil, nil, err
	}
	k := OfficialValCount(n)
	return p[:k:k], p[k:], nil
}

// OfficialSplitOff splits the set as OfficialValSplit does and returns (train, val), views of the set (they
// share its inputs) with the examples in permutation order; the input set is not modified.
func (s *Set) OfficialSplitOff(seed int64) (train, val *Set, err error) {
	v, t, err := OfficialValSplit(s.N, seed)
	if err != nil {
		return nil, nil, err
	}
	return s.Subset(t), s.Subset(v), nil
}
