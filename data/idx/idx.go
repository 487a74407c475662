// Package idx reads and writes the IDX binary format of the MNIST files.
//
// An IDX file is a 4-byte magic number — two zero bytes, a type code and the number of dimensions —
// followed by one big-endian uint32 per dimension and then the elements in row-major order, each
// big-endian. Type codes: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64.
// Files may be gzip-compressed; ReadFile detects that from the gzip magic bytes, not from the name.
package idx

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/data"
)

// Type is the element type code of an IDX file (the third byte of its magic number).
type Type byte

// The element types of the IDX format.
const (
	Uint8   Type = 0x08
	Int8    Type = 0x09
	Int16   Type = 0x0B
	Int32   Type = 0x0C
	Float32 Type = 0x0D
	Float64 Type = 0x0E
)

// types holds the size in bytes and the name of each element type.
var types = map[Type]struct {
	size int
	name string
}{
	Uint8:   {1, "uint8"},
	Int8:    {1, "int8"},
	Int16:   {2, "int16"},
	Int32:   {4, "int32"},
	Float32: {4, "float32"},
	Float64: {8, "float64"},
}

// Size returns the size in bytes of one element, or 0 for an unknown type.
func (t Type) Size() int { return types[t].size }

func (t Type) String() string {
	if n := types[t].name; n != "" {
		return n
	}
	return fmt.Sprintf("unknown(0x%02x)", byte(t))
}

// MaxElements bounds the number of elements Read accepts (2^31), so a corrupt header cannot
// make it allocate without limit.
const MaxElements = 1 << 31

// Array is the content of one IDX file: its element type, its dimensions and the raw big-endian
// element bytes in row-major order (len(Data) == product(Dims) * Type.Size()).
type Array struct {
	Type Type
	Dims []int
	Data []byte
}

// Len returns the number of elements, the product of the dimensions.
func (a *Array) Len() int {
	n := 1
	for _, d := range a.Dims {
		n *= d
	}
	return n
}

// Read decodes one uncompressed IDX stream. It fails on a bad magic number, an unknown type code,
// a zero or oversized dimension, a truncated body, and bytes after the last element.
func Read(r io.Reader) (*Array, error) { return readLimited(r, -1, false) }

// MaxGzipRatio bounds how much a gzip-compressed IDX file may expand: its header may claim at most
// MaxGzipRatio times the compressed size, plus 1 MiB (MNIST's files expand about 5 times). A header that
// claims more is refused before any data is read: a file of zeros that claims millions of images cannot
// exhaust memory.
const MaxGzipRatio = 100

// readLimited is Read with the data bytes capped at limit (negative: no cap): a header that claims more
// is refused before reading.
func readLimited(r io.Reader, limit int64, compressed bool) (*Array, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, fmt.Errorf("reading magic number: %w", truncated(err))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("bad magic number %02x%02x%02x%02x: the first two bytes must be zero", magic[0], magic[1], magic[2], magic[3])
	}
	t := Type(magic[2])
	if t.Size() == 0 {
		return nil, fmt.Errorf("bad magic number %02x%02x%02x%02x: unknown type code 0x%02x", magic[0], magic[1], magic[2], magic[3], magic[2])
	}
	nd := int(magic[3])
	if nd == 0 {
		return nil, errors.New("bad magic number: zero dimensions")
	}
	hdr := make([]byte, 4*nd)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("reading %d dimensions: %w", nd, truncated(err))
	}
	a := &Array{Type: t, Dims: make([]int, nd)}
	n := uint64(1)
	for i := range a.Dims {
		d := binary.BigEndian.Uint32(hdr[4*i:])
		if d == 0 {
			return nil, fmt.Errorf("dimension %d is zero", i)
		}
		a.Dims[i] = int(d)
		n *= uint64(d)
		if n > MaxElements {
			return nil, fmt.Errorf("dimensions %v... hold more than %d elements", a.Dims[:i+1], MaxElements)
		}
	}
	want := int(n) * t.Size()
	switch {
	case limit >= 0 && int64(want) > limit && compressed:
		return nil, fmt.Errorf("its header claims dimensions %v (%d bytes of %s data), more than the file can hold (%d bytes, %d times its compressed size)", a.Dims, want, t, limit, MaxGzipRatio)
	case limit >= 0 && int64(want) > limit:
		return nil, fmt.Errorf("truncated: dimensions %v need %d bytes of %s data, more than the file can hold (%d bytes)", a.Dims, want, t, limit)
	}
	// Grow the buffer as data arrives, so a header that lies about its size costs no memory.
	var buf bytes.Buffer
	got, err := io.Copy(&buf, io.LimitReader(r, int64(want)))
	if err != nil {
		return nil, fmt.Errorf("reading data: %w", err)
	}
	if int(got) < want {
		return nil, fmt.Errorf("truncated: dimensions %v need %d bytes of %s data, found %d", a.Dims, want, t, got)
	}
	var extra [1]byte
	if k, _ := r.Read(extra[:]); k > 0 {
		return nil, fmt.Errorf("trailing bytes after the %d elements of dimensions %v", n, a.Dims)
	}
	a.Data = buf.Bytes()
	return a, nil
}

func truncated(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("truncated file")
	}
	return err
}

// ReadFile reads an IDX file, gunzipping it when it starts with the gzip magic bytes.
// Errors name the file and are data.FileErrors.
func ReadFile(path string) (_ *Array, err error) {
	defer func() { err = data.BadFile(err) }()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	limit, compressed := st.Size(), false
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		limit, compressed = MaxGzipRatio*st.Size()+1<<20, true
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	a, err := readLimited(r, limit, compressed)
	if err != nil {
		if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("truncated or corrupt gzip stream: %w", err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// Write encodes a as an uncompressed IDX stream.
func Write(w io.Writer, a *Array) error {
	if a.Type.Size() == 0 {
		return fmt.Errorf("unknown IDX type %v", a.Type)
	}
	if len(a.Dims) == 0 || len(a.Dims) > 255 {
		return fmt.Errorf("IDX needs 1 to 255 dimensions, got %d", len(a.Dims))
	}
	for _, d := range a.Dims {
		if d <= 0 || d > math.MaxUint32 {
			return fmt.Errorf("bad IDX dimension %d", d)
		}
	}
	if len(a.Data) != a.Len()*a.Type.Size() {
		return fmt.Errorf("IDX data has %d bytes, dimensions %v of %v need %d", len(a.Data), a.Dims, a.Type, a.Len()*a.Type.Size())
	}
	hdr := make([]byte, 4+4*len(a.Dims))
	hdr[2] = byte(a.Type)
	hdr[3] = byte(len(a.Dims))
	for i, d := range a.Dims {
		binary.BigEndian.PutUint32(hdr[4+4*i:], uint32(d))
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	_, err := w.Write(a.Data)
	return err
}

// WriteFile writes a to path through a temporary file that is renamed into place, gzip-compressed
// when path ends in ".gz".
func WriteFile(path string, a *Array) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	var w io.Writer = bw
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(bw)
		w = zw
	}
	if err = Write(w, a); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if zw != nil {
		if err = zw.Close(); err != nil {
			return err
		}
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
