package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"

	"github.com/fits-snn/fits/data"
)

// LoadSet reads a cache whose samples have shape [T, features...] into a data.Set: T time bins of
// F = product(features) values; FeatureShape is set when there is more than one feature dimension
// (e.g. [2, 64, 64]). limit > 0 keeps only limit examples, evenly spaced over the file. The set holds the
// file's encoding as it lies: uint8 caches as data.Bytes counts, float32 caches as data.Float32.
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
	var idx []int
	if limit > 0 && r.Len() > limit {
		idx = make([]int, limit)
		for i := range idx {
			idx[i] = i * r.Len() / limit
		}
	}
	s, err := readSet(r, idx, shape[0], r.SampleLen()/shape[0])
	if err != nil {
		return nil, err
	}
	if len(shape) > 2 {
		s.FeatureShape = shape[1:]
	}
	return s, data.BadFile(s.Validate())
}

// readSet reads the samples idx (all when nil) of the cache into memory, in the file's encoding.
func readSet(r *Reader, idx []int, T, F int) (*data.Set, error) {
	if idx == nil {
		idx = make([]int, r.n)
		for i := range idx {
			idx[i] = i
		}
	}
	sb := r.h.SampleLen() * r.h.DType.Size()
	labels := make([]int32, len(idx))
	for k, i := range idx {
		labels[k] = r.labels[i]
	}
	read := func(i int, dst []byte) error {
		if _, err := r.f.ReadAt(dst, r.data+int64(i)*int64(sb)); err != nil {
			return data.BadFile(fmt.Errorf("%s: sample %d: %w", r.path, i, err))
		}
		return nil
	}
	if r.h.DType == Float32 {
		x := make([]float32, len(idx)*r.h.SampleLen())
		buf := make([]byte, sb)
		for k, i := range idx {
			if err := read(i, buf); err != nil {
				return nil, err
			}
			out := x[k*r.h.SampleLen() : (k+1)*r.h.SampleLen()]
			for j := range out {
				out[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
			}
		}
		return data.NewFloat32Set(x, labels, T, F), nil
	}
	b := make([]byte, len(idx)*sb)
	if len(idx) == r.n { // every sample, in order: one read
		if _, err := r.f.ReadAt(b, r.data); err != nil {
			return nil, data.BadFile(fmt.Errorf("%s: %w", r.path, err))
		}
	} else {
		for k, i := range idx {
			if err := read(i, b[k*sb:(k+1)*sb]); err != nil {
				return nil, err
			}
		}
	}
	return data.NewBytesSet(b, data.CountLevels, labels, T, F), nil
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
