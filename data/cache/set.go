package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"unsafe"

	"github.com/fits-snn/fits/data"
)

// LoadSet reads a cache whose samples have shape [T, features...] into a data.Set: T time bins of
// F = product(features) values; FeatureShape is set when there is more than one feature dimension
// (e.g. [2, 64, 64]). limit > 0 keeps only limit examples, evenly spaced over the file.
//
// The set holds the file's encoding as it lies (bit caches as data.Bits, uint8 caches as data.Bytes
// counts, float32 caches as data.Float32). Where the system can (Linux), the file is memory-mapped
// read-only: no copy is made, the pages are read when examples are first read and, being the file's, can
// be dropped by the system and read again; the mapping ends when the set and its views are no longer
// reachable. Elsewhere, or when mapping fails, the examples are read into memory of the same size.
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
	T, F := shape[0], r.SampleLen()/shape[0]
	var s *data.Set
	if f, ok := r.f.(*os.File); ok && mapFiles {
		s, err = mapSet(r, f, T, F)
		if err == nil && idx != nil {
			s = s.Subset(idx)
		}
	}
	if s == nil {
		s, err = readSet(r, idx, T, F)
	}
	if err != nil {
		return nil, err
	}
	if len(shape) > 2 {
		s.FeatureShape = shape[1:]
	}
	return s, data.BadFile(s.Validate())
}

// mapFiles switches memory mapping off in tests of the fallback.
var mapFiles = true

// mapSet maps the cache file f read by r and returns a set over its data section; (nil, nil) when the
// file cannot be mapped (the caller reads it instead).
func mapSet(r *Reader, f *os.File, T, F int) (*data.Set, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil
	}
	m, unmap, err := mapFile(f, st.Size())
	if err != nil {
		return nil, nil
	}
	size := int64(r.n) * int64(r.h.SampleBytes())
	b := m[r.data : r.data+size : r.data+size]
	labels := slices.Clone(r.labels)
	var s *data.Set
	switch r.h.DType {
	case Bit:
		s = data.NewBitsSet(b, labels, T, F)
	case Uint8:
		s = data.NewBytesSet(b, data.CountLevels, labels, T, F)
	case Float32:
		x, ok := float32View(b)
		if !ok {
			unmap()
			return nil, nil
		}
		s = data.NewFloat32Set(x, labels, T, F)
	}
	s.ReleaseWith(unmap)
	return s, nil
}

// float32View returns the little-endian float32 values in b without a copy, where this machine's byte
// order and b's alignment allow it.
func float32View(b []byte) ([]float32, bool) {
	if len(b) == 0 {
		return []float32{}, true
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4), true
}

// readSet reads the samples idx (all when nil) of the cache into memory, in the file's encoding.
func readSet(r *Reader, idx []int, T, F int) (*data.Set, error) {
	if idx == nil {
		idx = r.all()
	}
	sb := r.h.SampleBytes()
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
			decodeFloat32(x[k*r.h.SampleLen():(k+1)*r.h.SampleLen()], buf)
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
	if r.h.DType == Bit {
		return data.NewBitsSet(b, labels, T, F), nil
	}
	return data.NewBytesSet(b, data.CountLevels, labels, T, F), nil
}

// FrontEndField is the metadata field that names the recipe a cache was made with (for example
// "spike-bins/v2 binary t250-d1000ms-c700g5"): a converter that changes what it writes changes the name,
// so that caches made before are recognised and converted again rather than reused.
const FrontEndField = "frontend"

// Reusable reports whether the cache at path is intact (its header, and the CRC-32 of its data and labels:
// Reader.Verify) and was made by the recipe frontend (its metadata's FrontEndField). A missing file gives (false, nil). Otherwise false comes with the reason —
// unreadable, or made by another recipe (an older build's cache has no name) — for the caller to print
// before converting again.
func Reusable(path, frontend string) (bool, error) { return reusable(path, frontend, 0) }

// ReusableAs is Reusable for a cache that must also hold elements of type dt: a cache of the same recipe
// in another layout (an earlier build's binary spikes as uint8, where this build stores bits) is not
// reusable, and the reason says so.
func ReusableAs(path, frontend string, dt DType) (bool, error) { return reusable(path, frontend, dt) }

// reusable is Reusable, and ReusableAs when dt is not 0.
func reusable(path, frontend string, dt DType) (bool, error) {
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
	case got == frontend && r.Version() < Version:
		return false, fmt.Errorf("%s: made by an earlier build (cache format version %d, without the header checksum), this build writes version %d", path, r.Version(), Version)
	case got == frontend:
		// Every byte is checked before it is trusted (the header and metadata when Open read them): a
		// flipped data byte or a label changed to another valid class would train without a word. The pass
		// reads the file once, sequentially (hardware CRC-32C); training reads all of it anyway.
		if err := r.Verify(); err != nil {
			return false, err
		}
		if have := r.h.DType; dt != 0 && have != dt {
			return false, fmt.Errorf("%s: holds its samples as %v (an earlier layout), this build stores them as %v", path, have, dt)
		}
		return true, nil
	case got == "":
		return false, fmt.Errorf("%s: made by an earlier converter (no front-end name), this build makes %q", path, frontend)
	}
	return false, fmt.Errorf("%s: made by front end %q, this build makes %q", path, got, frontend)
}
