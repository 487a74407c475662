// Package cache defines the on-disk format of converted datasets, so that training reads a compact
// binary file with random access instead of re-reading HDF5, WAV or event files.
//
// A cache file holds N samples of one fixed shape (for example [T, F] = [250, 140] binary spikes),
// one int32 class label per sample and a JSON metadata object describing how it was made. All
// integers are little-endian. Layout:
//
//	offset  size  field
//	0       8     magic "FITSDS\x00\x01"
//	8       4     format version (3; versions 1 and 2, without the header checksum, are read too)
//	12      4     element type: 1 = uint8, 2 = float32, 3 = bit (values 0 or 1)
//	16      8     N, number of samples
//	24      4     rank R of one sample (1..8)
//	28      4     number of classes C (labels lie in 0..C-1)
//	32      64    8 × uint64 sample dimensions, the first R used, the rest zero
//	96      8     length L of the metadata JSON
//	104     4     CRC-32 (Castagnoli) of the data and label sections
//	108     4     CRC-32 (Castagnoli) of bytes 0..107 and the metadata JSON (version 3)
//	112     16    reserved, zero
//	128     L     metadata JSON
//	D             data: N samples of S bytes each, sample-major; D is 128+L rounded up to 64
//	D+N·S         labels: N × int32
//
// A sample of P = prod(dims) elements takes S = P bytes (uint8), 4·P bytes (float32) or ⌈P/8⌉ bytes (bit:
// element k is bit k%8, the least significant first, of the sample's byte k/8; the unused high bits of the
// last byte are zero). The bit layout is data.Bits, so that a mapped file is read as it lies.
//
// The file ends exactly after the labels; any other size is reported as truncated or as trailing
// bytes. Writers write to a temporary file in the target folder and rename it into place on Close,
// so a cache is either complete or absent. They never replace a file that fits did not write (a user's
// file of the cache's name: CheckReplace), and record what they wrote in the folder's .fits-owned.
package cache

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/internal/filesafe"
	"github.com/fits-snn/fits/internal/owned"
)

// Magic identifies a cache file.
const Magic = "FITSDS\x00\x01"

// Version is the format version written by this package. Version 2 added the bit element type, version 3
// the checksum of the header and metadata; files of versions 1 and 2 are read as before (Reusable has
// them converted again, so that every byte of a cache in use is checked).
const Version = 3

const (
	headerSize = 128
	maxRank    = 8
	align      = 64
	// maxMeta bounds the metadata JSON a writer writes and a reader accepts. The full Speech Commands
	// training split lists 84 843 clip paths in its metadata (2.5 MB); a bound of 1 MiB refused to convert it.
	maxMeta = 32 << 20
)

// DType is the element type of the samples.
type DType uint32

// Element types.
const (
	Uint8   DType = 1
	Float32 DType = 2
	// Bit holds binary values, 0 or 1, eight to a byte (format version 2).
	Bit DType = 3
)

// Size returns the bytes of one element, 0 for Bit (eight elements share a byte: SampleBytes) and for an
// unknown type.
func (d DType) Size() int {
	switch d {
	case Uint8:
		return 1
	case Float32:
		return 4
	}
	return 0
}

func (d DType) known() bool { return d == Uint8 || d == Float32 || d == Bit }

func (d DType) String() string {
	switch d {
	case Uint8:
		return "uint8"
	case Float32:
		return "float32"
	case Bit:
		return "bit"
	}
	return fmt.Sprintf("dtype(%d)", uint32(d))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header describes a cache file.
type Header struct {
	DType   DType
	Shape   []int           // per-sample shape, e.g. [T, F]
	Classes int             // labels lie in 0..Classes-1
	Meta    json.RawMessage // free-form JSON object: source, binning, split, ...
}

// SampleLen returns the number of elements of one sample.
func (h *Header) SampleLen() int {
	n := 1
	for _, d := range h.Shape {
		n *= d
	}
	return n
}

// SampleBytes returns the bytes of one sample in the file.
func (h *Header) SampleBytes() int {
	if h.DType == Bit {
		return data.BitsLen(h.SampleLen())
	}
	return h.SampleLen() * h.DType.Size()
}

func (h *Header) check() error {
	if !h.DType.known() {
		return fmt.Errorf("unknown element type %d", uint32(h.DType))
	}
	if len(h.Shape) < 1 || len(h.Shape) > maxRank {
		return fmt.Errorf("sample rank %d outside 1..%d", len(h.Shape), maxRank)
	}
	n := uint64(1)
	for _, d := range h.Shape {
		if d <= 0 || d > math.MaxInt32 {
			return fmt.Errorf("bad sample dimension %d in %v", d, h.Shape)
		}
		n *= uint64(d)
		if n > 1<<40 {
			return fmt.Errorf("sample shape %v too large", h.Shape)
		}
	}
	if h.Classes <= 0 || h.Classes > math.MaxInt32 {
		return fmt.Errorf("bad number of classes %d", h.Classes)
	}
	if len(h.Meta) > maxMeta {
		return fmt.Errorf("metadata of %d bytes exceeds %d", len(h.Meta), maxMeta)
	}
	return nil
}

func dataOffset(metaLen int) int64 {
	return (int64(headerSize+metaLen) + align - 1) / align * align
}

// Writer appends samples to a new cache file.
type Writer struct {
	path   string
	tmp    *os.File
	bw     *bufio.Writer
	h      Header
	labels []int32
	crc    uint32
	buf    []byte
	err    error
}

// Create starts a cache at path. Nothing appears at path until Close succeeds; call Abort to give up.
// Meta may be nil. Temporary files that a killed writer of the same path left behind are removed first
// (filesafe.RemoveStale). A file at path that fits did not write is never replaced (CheckReplace, here
// and again on Close); the written cache is recorded in its folder's record (package owned).
func Create(path string, h Header) (*Writer, error) {
	if err := CheckReplace(path); err != nil {
		return nil, err
	}
	if h.Meta == nil {
		h.Meta = json.RawMessage("{}")
	}
	if !json.Valid(h.Meta) {
		return nil, fmt.Errorf("%s: metadata is not valid JSON", path)
	}
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := filesafe.CreateTemp(path)
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			return nil, err
		}
		// A dataset folder that cannot be written (no permission, a read-only file system): the user's
		// to fix, named.
		return nil, data.BadFile(fmt.Errorf("%s: cannot write the converted cache into its folder (%v): convert the dataset where it can be written (copy it, or give the folder write permission)", path, err))
	}
	w := &Writer{path: path, tmp: tmp, bw: bufio.NewWriterSize(tmp, 1<<20), h: h}
	// Header is rewritten on Close with N and the CRC; write the metadata and padding now.
	pad := make([]byte, dataOffset(len(h.Meta)))
	copy(pad[headerSize:], h.Meta)
	if _, err := w.bw.Write(pad); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// Len returns the number of samples appended so far.
func (w *Writer) Len() int { return len(w.labels) }

// checkSample checks a sample of n elements and its label before the Append of name writes it; ok tells
// whether the cache's element type takes that Append.
func (w *Writer) checkSample(name string, ok bool, n int, label int32) error {
	switch {
	case !ok:
		return fmt.Errorf("%s: %s on a %v cache", w.path, name, w.h.DType)
	case n != w.h.SampleLen():
		return fmt.Errorf("%s: sample of %d elements, shape %v needs %d", w.path, n, w.h.Shape, w.h.SampleLen())
	case label < 0 || int(label) >= w.h.Classes:
		return fmt.Errorf("%s: label %d outside 0..%d", w.path, label, w.h.Classes-1)
	}
	return nil
}

// add writes the encoded sample b of the label.
func (w *Writer) add(label int32, b []byte) error {
	if err := w.write(b); err != nil {
		return err
	}
	w.labels = append(w.labels, label)
	return nil
}

func (w *Writer) write(b []byte) error {
	if w.err != nil {
		return w.err
	}
	w.crc = crc32.Update(w.crc, castagnoli, b)
	if _, err := w.bw.Write(b); err != nil {
		w.err = err
	}
	return w.err
}

// AppendUint8 adds one sample of a Uint8 or a Bit cache; len(x) must equal the sample length. A Bit
// cache packs the values, which must each be 0 or 1.
func (w *Writer) AppendUint8(label int32, x []uint8) error {
	if err := w.checkSample("AppendUint8", w.h.DType == Uint8 || w.h.DType == Bit, len(x), label); err != nil {
		return err
	}
	b := x
	if w.h.DType == Bit {
		if cap(w.buf) < data.BitsLen(len(x)) {
			w.buf = make([]byte, data.BitsLen(len(x)))
		}
		b = w.buf[:data.BitsLen(len(x))]
		clear(b)
		for k, v := range x {
			if v > 1 {
				return fmt.Errorf("%s: value %d at element %d of a bit cache (0 or 1)", w.path, v, k)
			}
			b[k>>3] |= v << (k & 7)
		}
	}
	return w.add(label, b)
}

// AppendFloat32 adds one sample of a Float32 cache; len(x) must equal the sample length.
func (w *Writer) AppendFloat32(label int32, x []float32) error {
	if err := w.checkSample("AppendFloat32", w.h.DType == Float32, len(x), label); err != nil {
		return err
	}
	if cap(w.buf) < 4*len(x) {
		w.buf = make([]byte, 4*len(x))
	}
	b := w.buf[:4*len(x)]
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return w.add(label, b)
}

// Abort removes the temporary file; the target path is left untouched.
func (w *Writer) Abort() {
	if w.tmp != nil {
		filesafe.Discard(w.tmp)
		w.tmp = nil
	}
}

// Close writes the labels and the header, syncs, and renames the file into place.
func (w *Writer) Close() error {
	if w.tmp == nil {
		return fmt.Errorf("%s: writer already closed", w.path)
	}
	lb := make([]byte, 4*len(w.labels))
	for i, l := range w.labels {
		binary.LittleEndian.PutUint32(lb[4*i:], uint32(l))
	}
	err := w.write(lb)
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		_, err = w.tmp.WriteAt(encodeHeader(&w.h, uint64(len(w.labels)), w.crc), 0)
	}
	if err != nil {
		w.Abort()
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if err := CheckReplace(w.path); err != nil { // a file placed there while converting
		w.Abort()
		return err
	}
	tmp := w.tmp
	w.tmp = nil
	if err := filesafe.Commit(tmp, w.path); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return noteWritten(w.path)
}

func encodeHeader(h *Header, n uint64, crc uint32) []byte {
	b := make([]byte, headerSize)
	copy(b, Magic)
	le := binary.LittleEndian
	le.PutUint32(b[8:], Version)
	le.PutUint32(b[12:], uint32(h.DType))
	le.PutUint64(b[16:], n)
	le.PutUint32(b[24:], uint32(len(h.Shape)))
	le.PutUint32(b[28:], uint32(h.Classes))
	for i, d := range h.Shape {
		le.PutUint64(b[32+8*i:], uint64(d))
	}
	le.PutUint64(b[96:], uint64(len(h.Meta)))
	le.PutUint32(b[104:], crc)
	le.PutUint32(b[108:], headerCRC(b, h.Meta))
	return b
}

// headerCRC is the checksum of a version-3 header: CRC-32C of its bytes 0..107 and the metadata.
func headerCRC(header, meta []byte) uint32 {
	return crc32.Update(crc32.Checksum(header[:108], castagnoli), castagnoli, meta)
}

// Reader gives random access to the samples of a cache file. Labels are held in memory; samples
// are read from the file on demand (ReadAt), so a reader is safe for concurrent use.
type Reader struct {
	path   string
	f      io.ReaderAt
	closer io.Closer
	h      Header
	n      int
	data   int64 // offset of the data section
	crc    uint32
	labels []int32
	// version is the file's format version.
	version int
}

// Open opens and checks a cache file: magic, version, element type, shape, file size, label range and, from
// version 3 on, the checksum of the header and metadata.
// Errors are data.FileErrors (errors.Is(err, fs.ErrNotExist) tells a missing file).
func Open(path string) (_ *Reader, err error) {
	defer func() { err = data.BadFile(err) }()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := newReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.path, r.closer = path, f
	return r, nil
}

// newReader parses a cache held in f of the given size.
func newReader(f io.ReaderAt, size int64) (*Reader, error) {
	hb := make([]byte, headerSize)
	if _, err := f.ReadAt(hb, 0); err != nil {
		if size < headerSize {
			return nil, fmt.Errorf("truncated: %d bytes, shorter than the %d-byte header", size, headerSize)
		}
		return nil, err
	}
	if string(hb[:8]) != Magic {
		return nil, fmt.Errorf("not a dataset cache (bad magic %q)", hb[:8])
	}
	le := binary.LittleEndian
	if v := le.Uint32(hb[8:]); v < 1 || v > Version {
		return nil, fmt.Errorf("cache format version %d, this build reads versions 1 to %d (convert again)", v, Version)
	}
	r := &Reader{f: f, version: int(le.Uint32(hb[8:]))}
	r.h.DType = DType(le.Uint32(hb[12:]))
	n := le.Uint64(hb[16:])
	rank := le.Uint32(hb[24:])
	if rank < 1 || rank > maxRank {
		return nil, fmt.Errorf("sample rank %d outside 1..%d", rank, maxRank)
	}
	r.h.Classes = int(le.Uint32(hb[28:]))
	for i := 0; i < int(rank); i++ {
		d := le.Uint64(hb[32+8*i:])
		if d == 0 || d > math.MaxInt32 {
			return nil, fmt.Errorf("bad sample dimension %d", d)
		}
		r.h.Shape = append(r.h.Shape, int(d))
	}
	if err := r.h.check(); err != nil {
		return nil, err
	}
	metaLen := le.Uint64(hb[96:])
	if metaLen > maxMeta {
		return nil, fmt.Errorf("metadata length %d exceeds %d", metaLen, maxMeta)
	}
	r.crc = le.Uint32(hb[104:])
	r.data = dataOffset(int(metaLen))
	sb := uint64(r.h.SampleBytes())
	if n > uint64(size)/(sb+4) { // also guards the products below against overflow
		return nil, fmt.Errorf("truncated: header says %d samples of shape %v %v, file has %d bytes", n, r.h.Shape, r.h.DType, size)
	}
	want := uint64(r.data) + n*sb + 4*n
	if uint64(size) < want {
		return nil, fmt.Errorf("truncated: %d samples of shape %v %v need %d bytes, file has %d", n, r.h.Shape, r.h.DType, want, size)
	}
	if uint64(size) > want {
		return nil, fmt.Errorf("%d trailing bytes after %d samples", uint64(size)-want, n)
	}
	r.n = int(n)
	meta := make([]byte, metaLen)
	if _, err := f.ReadAt(meta, headerSize); err != nil {
		return nil, err
	}
	if r.version >= 3 {
		if got, want := headerCRC(hb, meta), le.Uint32(hb[108:]); got != want {
			return nil, fmt.Errorf("header checksum mismatch (file %08x, computed %08x): the header or the metadata was changed, convert again", want, got)
		}
	}
	if !json.Valid(meta) {
		return nil, errors.New("metadata is not valid JSON")
	}
	r.h.Meta = meta
	lb := make([]byte, 4*n)
	if _, err := f.ReadAt(lb, r.data+int64(n*sb)); err != nil {
		return nil, err
	}
	r.labels = make([]int32, n)
	for i := range r.labels {
		l := int32(le.Uint32(lb[4*i:]))
		if l < 0 || int(l) >= r.h.Classes {
			return nil, fmt.Errorf("label %d of sample %d outside 0..%d", l, i, r.h.Classes-1)
		}
		r.labels[i] = l
	}
	return r, nil
}

// Path returns the file name.
func (r *Reader) Path() string { return r.path }

// Len returns the number of samples N.
func (r *Reader) Len() int { return r.n }

// Header returns the element type, per-sample shape, class count and metadata.
func (r *Reader) Header() Header { return r.h }

// Shape returns the per-sample shape.
func (r *Reader) Shape() []int { return append([]int(nil), r.h.Shape...) }

// SampleLen returns the elements of one sample.
func (r *Reader) SampleLen() int { return r.h.SampleLen() }

// Classes returns the number of classes.
func (r *Reader) Classes() int { return r.h.Classes }

// Labels returns the N labels (shared, do not modify).
func (r *Reader) Labels() []int32 { return r.labels }

// Meta decodes the metadata JSON into v.
func (r *Reader) Meta(v any) error { return json.Unmarshal(r.h.Meta, v) }

// Close closes the file.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// ReadBatch reads the samples with the given indices into dst as float32, sample after sample:
// dst must hold len(indices) × SampleLen elements ([B, ...shape]). Uint8 and bit elements convert exactly.
func (r *Reader) ReadBatch(indices []int, dst []float32) error {
	sl := r.h.SampleLen()
	if len(dst) != len(indices)*sl {
		return fmt.Errorf("%s: batch buffer of %d elements, %d samples need %d", r.path, len(dst), len(indices), len(indices)*sl)
	}
	buf := make([]byte, r.h.SampleBytes())
	for k, i := range indices {
		if i < 0 || i >= r.n {
			return fmt.Errorf("%s: sample %d outside 0..%d", r.path, i, r.n-1)
		}
		if _, err := r.f.ReadAt(buf, r.data+int64(i)*int64(len(buf))); err != nil {
			return data.BadFile(fmt.Errorf("%s: sample %d: %w", r.path, i, err))
		}
		out := dst[k*sl : (k+1)*sl]
		switch r.h.DType {
		case Uint8:
			for j, b := range buf {
				out[j] = float32(b)
			}
		case Bit:
			for j := range out {
				out[j] = float32(buf[j>>3] >> (j & 7) & 1)
			}
		default:
			decodeFloat32(out, buf)
		}
	}
	return nil
}

// decodeFloat32 decodes the little-endian float32 values of b into out.
func decodeFloat32(out []float32, b []byte) {
	for j := range out {
		out[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
	}
}

// all returns the indices of every sample, in order.
func (r *Reader) all() []int {
	idx := make([]int, r.n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// ReadAll returns every sample as float32, flat with shape [N, ...shape].
func (r *Reader) ReadAll() ([]float32, error) {
	dst := make([]float32, r.n*r.h.SampleLen())
	return dst, r.ReadBatch(r.all(), dst)
}

// Version returns the file's format version.
func (r *Reader) Version() int { return r.version }

// Verify recomputes the CRC-32 of the data and label sections and compares it with the header.
func (r *Reader) Verify() error {
	size := int64(r.n)*int64(r.h.SampleBytes()) + 4*int64(r.n)
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(r.f, r.data, size)); err != nil {
		return data.BadFile(fmt.Errorf("%s: %w", r.path, err))
	}
	if got := h.Sum32(); got != r.crc {
		return data.BadFile(fmt.Errorf("%s: checksum mismatch (file %08x, computed %08x): the cache is corrupt, convert again", r.path, r.crc, got))
	}
	return nil
}

// CheckReplace reports whether a cache may be written at path, before anything is converted: nothing is
// there; the folder's record of the files fits wrote (package owned) lists the file, unchanged since; or
// the file begins with the cache magic, which only a cache writer writes (a cache of an earlier recipe or
// build, or one damaged since — converted again). Anything else at path — a user's file of the same name,
// a symbolic link, a folder — is refused with a data.FileError holding an *owned.ConflictError, so that
// converting never replaces a file fits did not write.
func CheckReplace(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return data.BadFile(err)
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	conflict := data.BadFile(&owned.ConflictError{Dir: dir, Paths: []string{base}})
	if !st.Mode().IsRegular() {
		return conflict
	}
	if rec, err := owned.Open(dir); err == nil && rec.Replaceable(base) {
		return nil
	}
	if hasMagic(path) {
		return nil
	}
	return conflict
}

// hasMagic reports whether the regular file path begins with Magic.
func hasMagic(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(Magic))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == Magic
}

// noteWritten records path in its folder's record as a file fits wrote (package owned).
func noteWritten(path string) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	if err := owned.Note(dir, base); err != nil {
		return fmt.Errorf("%s: recording it as written by fits: %w", path, err)
	}
	return nil
}
