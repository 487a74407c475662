package cache

import (
	"fmt"

	"github.com/fits-snn/fits/data"
)

// LoadSet reads a cache whose samples have shape [T, features...] into a data.Set: T time bins of
// F = product(features) values; FeatureShape is set when there is more than one feature dimension
// (e.g. [2, 64, 64]). limit > 0 keeps only limit examples, evenly spaced over the file.
func LoadSet(path string, limit int) (*data.Set, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	shape := r.Shape()
	if len(shape) < 2 {
		return nil, data.BadFile(fmt.Errorf("%s: want samples of shape [T, features...], got %v", path, shape))
	}
	idx := make([]int, r.Len())
	for i := range idx {
		idx[i] = i
	}
	if limit > 0 && r.Len() > limit {
		idx = idx[:limit]
		for i := range idx {
			idx[i] = i * r.Len() / limit
		}
	}
	s := &data.Set{N: len(idx), T: shape[0], F: r.SampleLen() / shape[0], Inputs: make([]float32, len(idx)*r.SampleLen()), Labels: make([]int32, len(idx))}
	if len(shape) > 2 {
		s.FeatureShape = shape[1:]
	}
	if err := r.ReadBatch(idx, s.Inputs); err != nil {
		return nil, err
	}
	for k, i := range idx {
		s.Labels[k] = r.Labels()[i]
	}
	return s, data.BadFile(s.Validate())
}
