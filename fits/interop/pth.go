package interop

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// MaxCheckpointBytes caps the size of a .pth file that is read (1 GiB: the released networks are a few MB).
const MaxCheckpointBytes = 1 << 30

// InputError is a file that cannot be imported or exported: corrupt, truncated, of another program, or
// describing a network this toolkit cannot represent. The CLI reports it as bad input (exit status 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// Tensor is one float tensor of a checkpoint: its shape (PyTorch's order, row-major) and its values.
type Tensor struct {
	Shape []int
	Data  []float32
}

// pthClasses are the only Python classes a checkpoint of the released code names: the state dict's
// OrderedDict, the tensor rebuilder and the storages of float tensors. Any other class makes the file
// foreign (it is refused by name, never instantiated).
var pthClasses = map[string]any{
	"torch._utils._rebuild_tensor_v2": &pytorch.RebuildTensorV2{},
	"torch.FloatStorage":              &pytorch.FloatStorageClass{},
	"torch.DoubleStorage":             &pytorch.DoubleStorageClass{},
	"torch.HalfStorage":               &pytorch.HalfStorageClass{},
	"torch.BFloat16Storage":           &pytorch.BFloat16StorageClass{},
}

// ReadPth reads a checkpoint that torch.save wrote in its zip format (PyTorch 1.6 and later): the pickle
// data.pkl is unpickled by gopickle with only the classes of pthClasses allowed, and every tensor's storage
// is read from its record, whose size must match what the pickle says. It returns the unpickled top-level
// object with tensors as *Tensor (contiguous copies), dicts as map[string]any, lists and tuples as []any.
// Anything that is not such a file is an *InputError naming the problem.
func ReadPth(file string) (any, error) {
	st, err := os.Lstat(file)
	switch {
	case err != nil:
		return nil, &InputError{Err: err}
	case !st.Mode().IsRegular():
		return nil, inputErrorf("%s is not a regular file", file)
	case st.Size() > MaxCheckpointBytes:
		return nil, inputErrorf("%s holds %d bytes, more than the %d a checkpoint may", file, st.Size(), MaxCheckpointBytes)
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		return nil, inputErrorf("%s is not a PyTorch checkpoint (torch.save's zip format): %v", file, err)
	}
	defer zr.Close()
	records := map[string]*zip.File{}
	prefix := ""
	for _, f := range zr.File {
		records[f.Name] = f
		if strings.HasSuffix(f.Name, "/data.pkl") && strings.Count(f.Name, "/") == 1 {
			prefix = strings.TrimSuffix(f.Name, "data.pkl")
		}
	}
	if prefix == "" {
		return nil, inputErrorf("%s is a zip archive without data.pkl: not a PyTorch checkpoint", file)
	}
	if _, ok := records[prefix+"constants.pkl"]; ok {
		return nil, inputErrorf("%s is a TorchScript archive, not a checkpoint of torch.save", file)
	}
	if f, ok := records[prefix+"byteorder"]; ok {
		b, err := readRecord(f, 16)
		if err != nil {
			return nil, inputErrorf("%s: record %s: %v", file, f.Name, err)
		}
		if string(b) != "little" {
			return nil, inputErrorf("%s stores its tensors %q-endian; only little-endian checkpoints are read", file, b)
		}
	}
	obj, err := unpickleCheckpoint(records, prefix)
	if err != nil {
		return nil, inputErrorf("%s: %v", file, err)
	}
	return obj, nil
}

// readRecord reads a zip record of at most limit bytes.
func readRecord(f *zip.File, limit int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("%d bytes, more than %d", f.UncompressedSize64, limit)
	}
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, limit))
}

// unpickleCheckpoint unpickles prefix/data.pkl, loading storages from prefix/data/KEY, and converts the
// result (see ReadPth). gopickle panics on some malformed input; a panic becomes an error.
func unpickleCheckpoint(records map[string]*zip.File, prefix string) (obj any, err error) {
	defer func() {
		if r := recover(); r != nil {
			obj, err = nil, fmt.Errorf("malformed pickle: %v", r)
		}
	}()
	pkl, err := readRecord(records[prefix+"data.pkl"], 64<<20)
	if err != nil {
		return nil, fmt.Errorf("data.pkl: %v", err)
	}
	u := pickle.NewUnpickler(strings.NewReader(string(pkl)))
	fallback := u.FindClass
	u.FindClass = func(module, name string) (any, error) {
		full := module + "." + name
		if c, ok := pthClasses[full]; ok {
			return c, nil
		}
		if full == "collections.OrderedDict" && fallback != nil {
			return fallback(module, name)
		}
		return nil, fmt.Errorf("it names the Python class %s, which no checkpoint of the released code holds", full)
	}
	storages := map[string]pytorch.StorageInterface{}
	u.PersistentLoad = func(id any) (any, error) {
		return loadStorage(id, records, prefix, storages)
	}
	raw, err := u.Load()
	if err != nil {
		return nil, err
	}
	return convert(raw, 0)
}

// loadStorage loads the storage a persistent id ("storage", class, key, location, numel) names, once per
// key, after checking that its record holds exactly numel elements.
func loadStorage(id any, records map[string]*zip.File, prefix string, loaded map[string]pytorch.StorageInterface) (any, error) {
	t, ok := id.(*types.Tuple)
	if !ok || t.Len() < 5 {
		return nil, fmt.Errorf("persistent id %v is not a storage", id)
	}
	kind, _ := t.Get(0).(string)
	class, classOK := t.Get(1).(pytorch.StorageClassInterface)
	key, keyOK := t.Get(2).(string)
	location, locOK := t.Get(3).(string)
	numel, numelOK := t.Get(4).(int)
	if kind != "storage" || !classOK || !keyOK || !locOK || !numelOK || numel < 0 {
		return nil, fmt.Errorf("persistent id %v is not a storage of floats", id)
	}
	if s, ok := loaded[key]; ok {
		return s, nil
	}
	rec, ok := records[prefix+"data/"+key]
	if !ok {
		return nil, fmt.Errorf("storage %q has no record data/%s (a truncated archive?)", key, key)
	}
	elem := storageElementBytes(class)
	if rec.UncompressedSize64 != uint64(numel)*uint64(elem) {
		return nil, fmt.Errorf("storage %q: record data/%s holds %d bytes, the pickle promises %d elements of %d bytes",
			key, key, rec.UncompressedSize64, numel, elem)
	}
	r, err := rec.Open()
	if err != nil {
		return nil, fmt.Errorf("storage %q: %v", key, err)
	}
	defer r.Close()
	s := class.New(numel, location)
	if err := s.SetFromFileWithSize(r, numel); err != nil {
		return nil, fmt.Errorf("storage %q: %v", key, err)
	}
	loaded[key] = s
	return s, nil
}

func storageElementBytes(c pytorch.StorageClassInterface) int {
	switch c.(type) {
	case *pytorch.DoubleStorageClass:
		return 8
	case *pytorch.HalfStorageClass, *pytorch.BFloat16StorageClass:
		return 2
	}
	return 4
}

// maxDepth caps the nesting of containers in a checkpoint.
const maxDepth = 32

// convert turns gopickle's objects into plain Go values: *Tensor, map[string]any, []any, string, int,
// float64, bool and nil. Anything else (a set, a class instance, a dict with non-string keys) is an error.
func convert(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("containers nested too deeply")
	}
	switch x := v.(type) {
	case nil, string, bool, float64, int:
		return x, nil
	case *pytorch.Tensor:
		return tensorOf(x)
	case *types.Dict:
		return convertDict(*x, depth)
	case *types.OrderedDict:
		entries := make([]types.DictEntry, 0, x.Len())
		for el := x.List.Front(); el != nil; el = el.Next() {
			e := el.Value.(*types.OrderedDictEntry)
			entries = append(entries, types.DictEntry{Key: e.Key, Value: e.Value})
		}
		return convertDict(entries, depth)
	case *types.List:
		return convertList(*x, depth)
	case *types.Tuple:
		return convertList(*x, depth)
	}
	return nil, fmt.Errorf("it holds a value of Python type %T that no checkpoint of the released code holds", v)
}

// convertDict converts a dict's entries, whose keys must be strings.
func convertDict(entries []types.DictEntry, depth int) (any, error) {
	out := make(map[string]any, len(entries))
	for _, e := range entries {
		k, ok := e.Key.(string)
		if !ok {
			return nil, fmt.Errorf("a dict has the key %v, not a string", e.Key)
		}
		c, err := convert(e.Value, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = c
	}
	return out, nil
}

func convertList(items []any, depth int) (any, error) {
	out := make([]any, len(items))
	for i, it := range items {
		c, err := convert(it, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// tensorOf copies a strided tensor of a float storage into a contiguous float32 Tensor, checking that every
// element it addresses lies in its storage.
func tensorOf(t *pytorch.Tensor) (*Tensor, error) {
	if len(t.Size) != len(t.Stride) {
		return nil, fmt.Errorf("a tensor has %d sizes and %d strides", len(t.Size), len(t.Stride))
	}
	var src []float32
	switch s := t.Source.(type) {
	case *pytorch.FloatStorage:
		src = s.Data
	case *pytorch.HalfStorage:
		src = s.Data
	case *pytorch.BFloat16Storage:
		src = s.Data
	case *pytorch.DoubleStorage:
		src = make([]float32, len(s.Data))
		for i, v := range s.Data {
			src[i] = float32(v)
		}
	default:
		return nil, fmt.Errorf("a tensor of storage %T, not a float tensor", t.Source)
	}
	out := &Tensor{Shape: append([]int(nil), t.Size...)}
	n, last := 1, t.StorageOffset
	for i, d := range t.Size {
		if d < 0 || t.Stride[i] < 0 {
			return nil, fmt.Errorf("a tensor has size %v and stride %v", t.Size, t.Stride)
		}
		if d == 0 {
			n = 0
			break
		}
		if n > (1<<31)/d {
			return nil, fmt.Errorf("a tensor of size %v is too large", t.Size)
		}
		n *= d
		last += (d - 1) * t.Stride[i]
	}
	if n > 0 && (t.StorageOffset < 0 || last >= len(src)) {
		return nil, fmt.Errorf("a tensor of size %v addresses element %d of a storage of %d", t.Size, last, len(src))
	}
	out.Data = make([]float32, n)
	idx := make([]int, len(t.Size))
	for k := range n {
		off := t.StorageOffset
		for i, j := range idx {
			off += j * t.Stride[i]
		}
		out.Data[k] = src[off]
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < t.Size[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}
