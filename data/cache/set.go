package cache

import (
	"errors"
	"fmt"
	"io/fs"

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

// FrontEndField is the metadata field that names the recipe a cache was made with (for example
// "spike-bins/v2 binary t250-d1000ms-c700g5"): a converter that changes what it writes changes the name,
// so that caches made before are recognised and converted again rather than reused.
const FrontEndField = "frontend"

// Reusable reports whether the cache at path is intact and was made by the recipe frontend (its
// metadata's FrontEndField). A missing file gives (false, nil). Otherwise false comes with the reason —
// unreadable, or made by another recipe (an older build's cache has no name) — for the caller to print
// before converting again.
func Reusable(path, frontend string) (bool, error) {
	r, err := Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	defer r.Close()
	var m map[string]any
	if err := r.Meta(&m); err != nil {
		return false, fmt.Errorf("%s: metadata is not a JSON object: %v", path, err)
	}
	got, _ := m[FrontEndField].(string)
	switch {
	case got == frontend:
		return true, nil
	case got == "":
		return false, fmt.Errorf("%s: made by an earlier converter (no front-end name), this build makes %q", path, frontend)
	}
	return false, fmt.Errorf("%s: made by front end %q, this build makes %q", path, got, frontend)
}
