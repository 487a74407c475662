// Package h5 reads and writes the few HDF5 shapes that dataset files use: one-dimensional integer,
// float and string datasets, and one-dimensional variable-length (VLEN, ragged) arrays of numbers such
// as the spike times and units of the Heidelberg spiking datasets.
//
// It wraps gonum.org/v1/hdf5 (cgo over the HDF5 C library, Debian package libhdf5-dev) and adds the
// VLEN reads and writes that package lacks: a VLEN element in memory is the C struct hvl_t
// {size_t len; void *p}; the C library allocates p on read and this package frees it with the
// library's reclaim call after copying. Numbers are converted by the library, so a file storing
// float16, float32 or float64 reads as float64, and any integer width reads as int64.
//
// The HDF5 C library of Debian is built without thread safety: every call here holds one package
// lock. Names are slash-separated paths from the root group, e.g. "spikes/times".
package h5

/*
#cgo linux pkg-config: hdf5
#include <stdlib.h>
#include <string.h>
#include "hdf5.h"

static herr_t fits_h5_walk(unsigned n, const H5E_error2_t *e, void *data) {
	char *out = (char *)data;
	if (n == 0 && e->desc != NULL) {
		strncpy(out, e->desc, 255);
		out[255] = 0;
	}
	return 0;
}

// fits_h5_last_error copies the outermost and the innermost messages of the current HDF5 error
// stack into outer[256] and inner[256], then clears the stack.
static void fits_h5_last_error(char *outer, char *inner) {
	outer[0] = 0;
	inner[0] = 0;
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, fits_h5_walk, outer);
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, fits_h5_walk, inner);
	H5Eclear2(H5E_DEFAULT);
}

static void fits_h5_silence(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

static herr_t fits_h5_reclaim(hid_t mtype, hid_t mspace, void *buf) {
#if H5_VERS_MAJOR > 1 || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR >= 12)
	return H5Treclaim(mtype, mspace, H5P_DEFAULT, buf);
#else
	return H5Dvlen_reclaim(mtype, mspace, H5P_DEFAULT, buf);
#endif
}

// fits_h5_select selects rows [start, start+count) of a 1-D dataset; returns file and memory spaces.
static int fits_h5_select(hid_t dset, hsize_t start, hsize_t count, hid_t *fspace, hid_t *mspace) {
	*fspace = H5Dget_space(dset);
	if (*fspace < 0) return -1;
	if (H5Sselect_hyperslab(*fspace, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0) {
		H5Sclose(*fspace);
		return -1;
	}
	*mspace = H5Screate_simple(1, &count, NULL);
	if (*mspace < 0) {
		H5Sclose(*fspace);
		return -1;
	}
	return 0;
}

// fits_h5_vlen_rows reads (write = 0) or writes (write = 1) rows [start, start+count) of a 1-D VLEN
// dataset with base memory type base, to or from buf (count hvl_t). After a read the caller copies and
// then calls fits_h5_free_vlen.
static int fits_h5_vlen_rows(hid_t dset, hid_t base, hsize_t start, hsize_t count, hvl_t *buf, int write) {
	hid_t fspace, mspace;
	if (fits_h5_select(dset, start, count, &fspace, &mspace) < 0) return -1;
	hid_t mtype = H5Tvlen_create(base);
	herr_t st = write ? H5Dwrite(dset, mtype, mspace, fspace, H5P_DEFAULT, buf)
	                  : H5Dread(dset, mtype, mspace, fspace, H5P_DEFAULT, buf);
	H5Tclose(mtype);
	H5Sclose(fspace);
	H5Sclose(mspace);
	return st < 0 ? -1 : 0;
}

static int fits_h5_free_vlen(hid_t base, hsize_t count, hvl_t *buf) {
	hid_t mspace = H5Screate_simple(1, &count, NULL);
	hid_t mtype = H5Tvlen_create(base);
	herr_t st = fits_h5_reclaim(mtype, mspace, buf);
	H5Tclose(mtype);
	H5Sclose(mspace);
	return st < 0 ? -1 : 0;
}

static int fits_h5_read(hid_t dset, hid_t mtype, void *buf) {
	return H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? -1 : 0;
}

// fits_h5_read_vstrings_keep reads a 1-D dataset of variable-length strings into buf (n char*);
// Go copies them, then fits_h5_free_vstrings frees what the library allocated.
static int fits_h5_read_vstrings_keep(hid_t dset, char **buf) {
	hid_t mtype = H5Tcopy(H5T_C_S1);
	H5Tset_size(mtype, H5T_VARIABLE);
	herr_t st = H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	H5Tclose(mtype);
	return st < 0 ? -1 : 0;
}

static int fits_h5_free_vstrings(hsize_t n, char **buf) {
	hid_t mtype = H5Tcopy(H5T_C_S1);
	H5Tset_size(mtype, H5T_VARIABLE);
	hid_t space = H5Screate_simple(1, &n, NULL);
	herr_t st = fits_h5_reclaim(mtype, space, buf);
	H5Sclose(space);
	H5Tclose(mtype);
	return st < 0 ? -1 : 0;
}

static int fits_h5_read_fstrings(hid_t dset, size_t size, char *buf) {
	hid_t mtype = H5Tcopy(H5T_C_S1);
	H5Tset_size(mtype, size);
	H5Tset_strpad(mtype, H5T_STR_NULLPAD);
	herr_t st = H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	H5Tclose(mtype);
	return st < 0 ? -1 : 0;
}

// fits_h5_create creates a 1-D dataset of n elements of file type ftype under loc.
static hid_t fits_h5_create(hid_t loc, const char *name, hid_t ftype, hsize_t n) {
	hid_t space = H5Screate_simple(1, &n, NULL);
	if (space < 0) return -1;
	hid_t d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	H5Sclose(space);
	return d;
}

static int fits_h5_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t n, const void *buf) {
	hid_t d = fits_h5_create(loc, name, ftype, n);
	if (d < 0) return -1;
	herr_t st = H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	H5Dclose(d);
	return st < 0 ? -1 : 0;
}

static int fits_h5_write_vlen(hid_t loc, const char *name, hid_t fbase, hid_t mbase, hsize_t n, const hvl_t *buf) {
	hid_t ftype = H5Tvlen_create(fbase);
	hid_t mtype = H5Tvlen_create(mbase);
	int st = fits_h5_write(loc, name, ftype, mtype, n, buf);
	H5Tclose(ftype);
	H5Tclose(mtype);
	return st;
}

// fits_h5_create_vlen creates a 1-D VLEN dataset of n rows with base file type fbase.
static hid_t fits_h5_create_vlen(hid_t loc, const char *name, hid_t fbase, hsize_t n) {
	hid_t ftype = H5Tvlen_create(fbase);
	hid_t d = fits_h5_create(loc, name, ftype, n);
	H5Tclose(ftype);
	return d;
}

static int fits_h5_close_dataset(hid_t dset) { return H5Dclose(dset) < 0 ? -1 : 0; }

static int fits_h5_write_vstrings(hid_t loc, const char *name, hsize_t n, char **buf) {
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	int st = fits_h5_write(loc, name, t, t, n, buf);
	H5Tclose(t);
	return st;
}

static hid_t fits_h5_type(int code) {
	switch (code) {
	case 1: return H5T_STD_U8LE;
	case 2: return H5T_STD_U16LE;
	case 3: return H5T_STD_U32LE;
	case 4: return H5T_STD_I32LE;
	case 5: return H5T_STD_I64LE;
	case 6: return H5T_IEEE_F32LE;
	case 7: return H5T_IEEE_F64LE;
	case 8: return H5T_NATIVE_DOUBLE;
	case 9: return H5T_NATIVE_LLONG;
	}
	return -1;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/internal/filesafe"
	"gonum.org/v1/hdf5"
)

var mu sync.Mutex

// enter takes the package lock and pins the goroutine to its OS thread until the returned function is
// called, and turns off the HDF5 library's automatic printing of its error stack on that thread. The
// library is built thread-safe on Debian, which keeps the error stack and its printing setting per
// thread: every call and the lastError that describes its failure must run on the one thread that was
// silenced.
func enter() (leave func()) {
	mu.Lock()
	runtime.LockOSThread()
	C.fits_h5_silence()
	return func() {
		runtime.UnlockOSThread()
		mu.Unlock()
	}
}

// markBadFile marks a reading error as a data.FileError: the file, not the program, is at fault.
func markBadFile(err *error) { *err = data.BadFile(*err) }

// lastError describes the current HDF5 error stack by its outermost and innermost messages (the
// innermost names the cause, e.g. "truncated file: eof = ..."), or returns what when it is empty.
func lastError(what string) error {
	var outer, inner [256]C.char
	C.fits_h5_last_error(&outer[0], &inner[0])
	o, i := C.GoString(&outer[0]), C.GoString(&inner[0])
	switch {
	case o == "" && i == "":
		return errors.New(what)
	case o == i || i == "":
		return fmt.Errorf("%s: %s", what, o)
	}
	return fmt.Errorf("%s: %s: %s", what, o, i)
}

// Type is an element type of a dataset written by this package: the HDF5 little-endian standard
// types that numpy and h5py use.
type Type int

// Element types for writing.
const (
	U8  Type = 1 // H5T_STD_U8LE
	U16 Type = 2 // H5T_STD_U16LE
	U32 Type = 3 // H5T_STD_U32LE
	I32 Type = 4 // H5T_STD_I32LE
	I64 Type = 5 // H5T_STD_I64LE
	F32 Type = 6 // H5T_IEEE_F32LE
	F64 Type = 7 // H5T_IEEE_F64LE

	memFloat64 Type = 8
	memInt64   Type = 9
)

func (t Type) hid() C.hid_t { return C.fits_h5_type(C.int(t)) }

func (t Type) isFloat() bool { return t == F32 || t == F64 }

// File is an open HDF5 file.
type File struct {
	path string
	f    *hdf5.File
	tmp  string // for files being created: the temporary name renamed to path on Close
}

// Open opens an existing HDF5 file read-only.
func Open(path string) (_ *File, err error) {
	defer enter()()
	defer markBadFile(&err)
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	if !hdf5.IsHDF5(path) {
		lastError("") // clears the error stack
		return nil, fmt.Errorf("%s: not an HDF5 file (no HDF5 signature)", path)
	}
	f, err := hdf5.OpenFile(path, hdf5.F_ACC_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, lastError("cannot open HDF5 file"))
	}
	return &File{path: path, f: f}, nil
}

// Create starts a new HDF5 file that appears at path only when Close succeeds. Temporary files that a
// killed writer of the same path left behind are removed first (filesafe.RemoveStale; the HDF5 library
// holds the same kind of lock on the files it has open as filesafe's writers do).
func Create(path string) (*File, error) {
	defer enter()()
	tmp, err := filesafe.CreateTemp(path)
	if err != nil {
		return nil, err
	}
	name := tmp.Name()
	tmp.Close() // the library takes its own lock on the file
	f, err := hdf5.CreateFile(name, hdf5.F_ACC_TRUNC)
	if err != nil {
		os.Remove(name)
		return nil, fmt.Errorf("%s: %w", path, lastError("cannot create HDF5 file"))
	}
	return &File{path: path, f: f, tmp: name}, nil
}

// Path returns the file name.
func (f *File) Path() string { return f.path }

// Close closes the file; a file made by Create is renamed into place.
func (f *File) Close() error {
	defer enter()()
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	tmp := f.tmp
	f.tmp = ""
	if tmp == "" {
		return err
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", f.path, lastError("closing"))
	}
	return os.Rename(tmp, f.path)
}

// Abort closes and deletes a file made by Create; path is left untouched.
func (f *File) Abort() {
	defer enter()()
	if f.f != nil {
		f.f.Close()
		f.f = nil
	}
	if f.tmp != "" {
		os.Remove(f.tmp)
		f.tmp = ""
	}
}

func (f *File) errorf(name, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", f.path, name, fmt.Sprintf(format, args...))
}

// check returns, when a C call on dataset name failed, the error that the HDF5 error stack describes
// (lastError(what)); nil otherwise.
func (f *File) check(name string, failed bool, what string) error {
	if failed {
		return f.errorf(name, "%v", lastError(what))
	}
	return nil
}

// exists reports whether every component of the slash-separated name exists.
func (f *File) exists(name string) bool {
	parts := strings.Split(strings.Trim(name, "/"), "/")
	for i := range parts {
		if !f.f.LinkExists(strings.Join(parts[:i+1], "/")) {
			return false
		}
	}
	return true
}

// Exists reports whether the group or dataset name exists.
func (f *File) Exists(name string) bool {
	defer enter()()
	return f.exists(name)
}

// Class is the type class of a dataset's elements.
type Class int

// Type classes.
const (
	Other Class = iota
	Integer
	Float
	String
	VLen
)

func (c Class) String() string {
	return [...]string{"other", "integer", "float", "string", "variable-length array"}[c]
}

// Info describes a dataset: its type class, element size in bytes, and, for VLEN datasets, the
// class and size of the base type. Length is the number of elements of a 1-D dataset.
type Info struct {
	Class    Class
	Size     int
	Base     Class
	BaseSize int
	Dims     []int
	VarStr   bool // a variable-length string
}

// String describes the type as "uint16", "vlen of float32" and so on.
func (i Info) String() string {
	one := func(c Class, size int) string {
		switch c {
		case Integer:
			return fmt.Sprintf("%d-bit integer", 8*size)
		case Float:
			return fmt.Sprintf("float%d", 8*size)
		}
		return c.String()
	}
	if i.Class == VLen {
		return "vlen of " + one(i.Base, i.BaseSize)
	}
	return one(i.Class, i.Size)
}

func classOf(t C.hid_t) Class {
	switch C.H5Tget_class(t) {
	case C.H5T_INTEGER:
		return Integer
	case C.H5T_FLOAT:
		return Float
	case C.H5T_STRING:
		return String
	case C.H5T_VLEN:
		return VLen
	}
	return Other
}

func (f *File) open(name string) (*hdf5.Dataset, Info, error) {
	if !f.exists(name) {
		return nil, Info{}, f.errorf(name, "missing dataset")
	}
	ds, err := f.f.OpenDataset(name)
	if err != nil {
		return nil, Info{}, f.errorf(name, "%v", lastError("not a dataset"))
	}
	id := C.hid_t(ds.ID())
	t := C.H5Dget_type(id)
	if t < 0 {
		ds.Close()
		return nil, Info{}, f.errorf(name, "%v", lastError("no type"))
	}
	defer C.H5Tclose(t)
	info := Info{Class: classOf(t), Size: int(C.H5Tget_size(t))}
	if info.Class == VLen {
		b := C.H5Tget_super(t)
		info.Base, info.BaseSize = classOf(b), int(C.H5Tget_size(b))
		C.H5Tclose(b)
	}
	if info.Class == String {
		info.VarStr = C.H5Tis_variable_str(t) > 0
	}
	dims, _, err := ds.Space().SimpleExtentDims()
	if err != nil {
		ds.Close()
		return nil, Info{}, f.errorf(name, "%v", lastError("no dataspace"))
	}
	for _, d := range dims {
		info.Dims = append(info.Dims, int(d))
	}
	return ds, info, nil
}

// Info returns the type and shape of a dataset.
func (f *File) Info(name string) (_ Info, err error) {
	defer enter()()
	defer markBadFile(&err)
	ds, info, err := f.open(name)
	if err != nil {
		return info, err
	}
	ds.Close()
	return info, nil
}

// open1D opens the 1-D dataset name, whose elements must be of one of classes (any, when none is given).
func (f *File) open1D(name string, classes ...Class) (*hdf5.Dataset, Info, error) {
	ds, info, err := f.open(name)
	if err != nil {
		return nil, info, err
	}
	if len(info.Dims) != 1 {
		ds.Close()
		return nil, info, f.errorf(name, "want a 1-D dataset, got shape %v", info.Dims)
	}
	if len(classes) == 0 || slices.Contains(classes, info.Class) {
		return ds, info, nil
	}
	ds.Close()
	return nil, info, f.errorf(name, "want %v elements, got %v", classes[0], info)
}

// Len returns the number of elements of a 1-D dataset.
func (f *File) Len(name string) (_ int, err error) {
	defer enter()()
	defer markBadFile(&err)
	ds, info, err := f.open1D(name)
	if err != nil {
		return 0, err
	}
	ds.Close()
	return info.Dims[0], nil
}

// ReadInts reads a 1-D integer dataset of any width as int64.
func (f *File) ReadInts(name string) ([]int64, error) {
	return read1D[int64](f, name, memInt64, Integer)
}

// ReadFloats reads a 1-D float or integer dataset as float64.
func (f *File) ReadFloats(name string) ([]float64, error) {
	return read1D[float64](f, name, memFloat64, Float, Integer)
}

// read1D reads a 1-D dataset of one of classes as 8-byte values T, converted by HDF5 to the memory type mem.
func read1D[T int64 | float64](f *File, name string, mem Type, classes ...Class) (_ []T, err error) {
	defer enter()()
	defer markBadFile(&err)
	ds, info, err := f.open1D(name, classes...)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	out := make([]T, info.Dims[0])
	if len(out) == 0 {
		return out, nil
	}
	buf := C.malloc(C.size_t(8 * len(out)))
	defer C.free(buf)
	if C.fits_h5_read(C.hid_t(ds.ID()), mem.hid(), buf) < 0 {
		return nil, f.errorf(name, "%v", lastError("read failed"))
	}
	copy(out, unsafe.Slice((*T)(buf), len(out)))
	return out, nil
}

// ReadStrings reads a 1-D dataset of fixed- or variable-length strings (trailing NULs removed).
func (f *File) ReadStrings(name string) (_ []string, err error) {
	defer enter()()
	defer markBadFile(&err)
	ds, info, err := f.open1D(name, String)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	n := info.Dims[0]
	out := make([]string, n)
	if n == 0 {
		return out, nil
	}
	id := C.hid_t(ds.ID())
	if info.VarStr {
		buf := (**C.char)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(uintptr(0)))))
		defer C.free(unsafe.Pointer(buf))
		if C.fits_h5_read_vstrings_keep(id, buf) < 0 {
			return nil, f.errorf(name, "%v", lastError("read failed"))
		}
		for i, p := range unsafe.Slice(buf, n) {
			if p != nil {
				out[i] = C.GoString(p)
			}
		}
		C.fits_h5_free_vstrings(C.hsize_t(n), buf)
		return out, nil
	}
	size := info.Size
	buf := C.calloc(C.size_t(n), C.size_t(size))
	defer C.free(buf)
	if C.fits_h5_read_fstrings(id, C.size_t(size), (*C.char)(buf)) < 0 {
		return nil, f.errorf(name, "%v", lastError("read failed"))
	}
	raw := unsafe.Slice((*byte)(buf), n*size)
	for i := range out {
		out[i] = strings.TrimRight(string(raw[i*size:(i+1)*size]), "\x00 ")
	}
	return out, nil
}

// readVLen reads rows [start, start+count) of a 1-D VLEN dataset whose base class is want, converted to
// the memory type mem of 8-byte elements; copy receives each row's C memory.
func (f *File) readVLen(name string, start, count int, mem Type, want Class, copyRow func(i int, p unsafe.Pointer, n int)) error {
	ds, info, err := f.open1D(name, VLen)
	if err != nil {
		return err
	}
	defer ds.Close()
	if info.Base != want {
		return f.errorf(name, "want a vlen of %v, got %v", want, info)
	}
	if start < 0 || count < 0 || start+count > info.Dims[0] {
		return f.errorf(name, "rows [%d, %d) outside the %d rows", start, start+count, info.Dims[0])
	}
	if count == 0 {
		return nil
	}
	buf := (*C.hvl_t)(C.calloc(C.size_t(count), C.size_t(unsafe.Sizeof(C.hvl_t{}))))
	defer C.free(unsafe.Pointer(buf))
	if C.fits_h5_vlen_rows(C.hid_t(ds.ID()), mem.hid(), C.hsize_t(start), C.hsize_t(count), buf, 0) < 0 {
		return f.errorf(name, "%v", lastError(fmt.Sprintf("reading rows [%d, %d)", start, start+count)))
	}
	for i, v := range unsafe.Slice(buf, count) {
		copyRow(i, v.p, int(v.len))
	}
	return f.check(name, C.fits_h5_free_vlen(mem.hid(), C.hsize_t(count), buf) < 0, "freeing VLEN buffers")
}

// ReadVLenFloats reads rows [start, start+count) of a 1-D VLEN dataset of floats (any width) as one
// flat float64 slice: row i is vals[offs[i]:offs[i+1]], len(offs) == count+1.
func (f *File) ReadVLenFloats(name string, start, count int) (vals []float64, offs []int, err error) {
	return readVLen[float64](f, name, start, count, memFloat64, Float)
}

// ReadVLenInts reads rows [start, start+count) of a 1-D VLEN dataset of integers (any width) as one
// flat int64 slice, laid out like ReadVLenFloats.
func (f *File) ReadVLenInts(name string, start, count int) (vals []int64, offs []int, err error) {
	return readVLen[int64](f, name, start, count, memInt64, Integer)
}

// readVLen reads rows [start, start+count) of a 1-D VLEN dataset of class as one flat slice of 8-byte
// values T (memory type mem) and the rows' offsets into it.
func readVLen[T int64 | float64](f *File, name string, start, count int, mem Type, class Class) (vals []T, offs []int, err error) {
	defer enter()()
	defer markBadFile(&err)
	offs = make([]int, 1, count+1)
	err = f.readVLen(name, start, count, mem, class, func(i int, p unsafe.Pointer, n int) {
		if n > 0 {
			vals = append(vals, unsafe.Slice((*T)(p), n)...)
		}
		offs = append(offs, len(vals))
	})
	return vals, offs, err
}

// parent returns the location id of the group holding name, and the last path component.
func (f *File) parent(name string) (C.hid_t, string, func(), error) {
	name = strings.Trim(name, "/")
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return C.hid_t(f.f.ID()), name, func() {}, nil
	}
	g, err := f.f.OpenGroup(name[:i])
	if err != nil {
		return 0, "", nil, f.errorf(name, "%v", lastError("no parent group"))
	}
	return C.hid_t(g.ID()), name[i+1:], func() { g.Close() }, nil
}

// atParent runs do with the location id of the group holding name and the last path component as a C
// string, both valid only during the call.
func (f *File) atParent(name string, do func(loc C.hid_t, base *C.char) error) error {
	loc, base, done, err := f.parent(name)
	if err != nil {
		return err
	}
	defer done()
	cname := C.CString(base)
	defer C.free(unsafe.Pointer(cname))
	return do(loc, cname)
}

// CreateGroup creates a group; its parent must exist.
func (f *File) CreateGroup(name string) error {
	defer enter()()
	g, err := f.f.CreateGroup(strings.Trim(name, "/"))
	if err != nil {
		return f.errorf(name, "%v", lastError("cannot create group"))
	}
	return g.Close()
}

func (f *File) write(name string, ftype, mtype Type, n int, buf unsafe.Pointer) error {
	return f.atParent(name, func(loc C.hid_t, cname *C.char) error {
		return f.check(name, C.fits_h5_write(loc, cname, ftype.hid(), mtype.hid(), C.hsize_t(n), buf) < 0, "write failed")
	})
}

// WriteInts writes a 1-D dataset of integer file type t (U8..I64).
func (f *File) WriteInts(name string, t Type, vals []int64) error {
	if t.isFloat() || t < U8 || t > I64 {
		return f.errorf(name, "WriteInts needs an integer type")
	}
	return write1D(f, name, t, memInt64, vals)
}

// WriteFloats writes a 1-D dataset of float file type t (F32 or F64).
func (f *File) WriteFloats(name string, t Type, vals []float64) error {
	if !t.isFloat() {
		return f.errorf(name, "WriteFloats needs a float type")
	}
	return write1D(f, name, t, memFloat64, vals)
}

// write1D writes vals, 8-byte values of memory type mem, as a 1-D dataset of file type t.
func write1D[T int64 | float64](f *File, name string, t, mem Type, vals []T) error {
	defer enter()()
	buf := C.malloc(C.size_t(8*len(vals) + 8))
	defer C.free(buf)
	copy(unsafe.Slice((*T)(buf), len(vals)), vals)
	return f.write(name, t, mem, len(vals), buf)
}

// WriteStrings writes a 1-D dataset of variable-length strings.
func (f *File) WriteStrings(name string, vals []string) error {
	defer enter()()
	ptrs := (**C.char)(C.calloc(C.size_t(len(vals)+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(ptrs))
	ps := unsafe.Slice(ptrs, len(vals))
	for i, s := range vals {
		ps[i] = C.CString(s)
	}
	defer func() {
		for _, p := range ps {
			C.free(unsafe.Pointer(p))
		}
	}()
	return f.atParent(name, func(loc C.hid_t, cname *C.char) error {
		return f.check(name, C.fits_h5_write_vstrings(loc, cname, C.hsize_t(len(vals)), ptrs) < 0, "write failed")
	})
}

// WriteVLen writes a 1-D VLEN dataset with base file type t: row i holds vals[offs[i]:offs[i+1]]
// (len(offs) = rows+1, offs[0] = 0, non-decreasing). Values are converted to t by the library.
func (f *File) WriteVLen(name string, t Type, vals []float64, offs []int) error {
	defer enter()()
	if len(offs) == 0 || offs[0] != 0 || offs[len(offs)-1] != len(vals) {
		return f.errorf(name, "offsets must run from 0 to len(vals)")
	}
	rows := len(offs) - 1
	return f.withRows(name, vals, offs, func(hv *C.hvl_t) error {
		return f.atParent(name, func(loc C.hid_t, cname *C.char) error {
			return f.check(name, C.fits_h5_write_vlen(loc, cname, t.hid(), memFloat64.hid(), C.hsize_t(rows), hv) < 0, "write failed")
		})
	})
}

// withRows runs do with the rows of vals as a C array of rows = len(offs)-1 hvl_t: row i points at
// vals[offs[i]:offs[i+1]] in a C copy of vals. Decreasing offsets are an error of dataset name.
func (f *File) withRows(name string, vals []float64, offs []int, do func(hv *C.hvl_t) error) error {
	rows := len(offs) - 1
	data := C.malloc(C.size_t(8*len(vals) + 8))
	defer C.free(data)
	copy(unsafe.Slice((*float64)(data), len(vals)), vals)
	hv := (*C.hvl_t)(C.calloc(C.size_t(rows+1), C.size_t(unsafe.Sizeof(C.hvl_t{}))))
	defer C.free(unsafe.Pointer(hv))
	hs := unsafe.Slice(hv, rows)
	for i := range hs {
		if offs[i+1] < offs[i] {
			return f.errorf(name, "offsets decrease at row %d", i)
		}
		hs[i].len = C.size_t(offs[i+1] - offs[i])
		hs[i].p = unsafe.Add(data, 8*offs[i])
	}
	return do(hv)
}

// VLenWriter writes the rows of a 1-D VLEN dataset a block at a time (CreateVLen), so that a dataset
// larger than memory can be written.
type VLenWriter struct {
	f    *File
	name string
	d    C.hid_t
	rows int
}

// CreateVLen creates a 1-D VLEN dataset of rows rows with base file type t; write its rows with
// WriteRows, then Close it (before the file).
func (f *File) CreateVLen(name string, t Type, rows int) (*VLenWriter, error) {
	defer enter()()
	if rows < 0 {
		return nil, f.errorf(name, "%d rows", rows)
	}
	var d C.hid_t
	err := f.atParent(name, func(loc C.hid_t, cname *C.char) error {
		d = C.fits_h5_create_vlen(loc, cname, t.hid(), C.hsize_t(rows))
		return f.check(name, d < 0, "create failed")
	})
	if err != nil {
		return nil, err
	}
	return &VLenWriter{f: f, name: name, d: d, rows: rows}, nil
}

// WriteRows writes rows [start, start+len(offs)-1): row start+i holds vals[offs[i]:offs[i+1]] (offs[0] =
// 0, non-decreasing, ending at len(vals)). Values are converted to the dataset's type by the library.
func (w *VLenWriter) WriteRows(start int, vals []float64, offs []int) error {
	defer enter()()
	if len(offs) == 0 || offs[0] != 0 || offs[len(offs)-1] != len(vals) {
		return w.f.errorf(w.name, "offsets must run from 0 to len(vals)")
	}
	rows := len(offs) - 1
	if start < 0 || start+rows > w.rows {
		return w.f.errorf(w.name, "rows %d..%d outside the %d rows", start, start+rows-1, w.rows)
	}
	if rows == 0 {
		return nil
	}
	return w.f.withRows(w.name, vals, offs, func(hv *C.hvl_t) error {
		return w.f.check(w.name, C.fits_h5_vlen_rows(w.d, memFloat64.hid(), C.hsize_t(start), C.hsize_t(rows), hv, 1) < 0, "write failed")
	})
}

// Close closes the dataset.
func (w *VLenWriter) Close() error {
	defer enter()()
	if w.d < 0 {
		return nil
	}
	d := w.d
	w.d = -1
	return w.f.check(w.name, C.fits_h5_close_dataset(d) < 0, "close failed")
}
