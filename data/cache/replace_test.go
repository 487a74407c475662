package cache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/internal/owned"
)

// TestCreateNeverReplacesUserFiles: a cache is written over nothing, over a cache (recorded, or one of an
// earlier build that carries the magic), but never over a user's file of its name, a folder or a symbolic
// link: those are refused (a data.FileError holding an owned.ConflictError) and keep their content, on
// Create and, for a file placed while converting, on Close.
func TestCreateNeverReplacesUserFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x_train.t10.fitsds")
	one := [][]float32{{1, 2}}
	writeCache(t, path, Uint8, []int{2}, 3, one, []int32{1})
	if rec, err := owned.Open(dir); err != nil || !rec.Replaceable(filepath.Base(path)) {
		t.Fatalf("the written cache is not recorded as written by fits: %v", err)
	}
	writeCache(t, path, Uint8, []int{2}, 3, one, []int32{2}) // over its own cache

	// A cache of an earlier build: the magic, no record.
	os.Remove(filepath.Join(dir, owned.RecordFile))
	writeCache(t, path, Uint8, []int{2}, 3, one, []int32{0})

	refused := func(what string, err error) {
		t.Helper()
		var ce *owned.ConflictError
		if !errors.As(err, &ce) || !data.IsBadFile(err) {
			t.Errorf("%s: %v, want a refusal naming the file as not written by fits", what, err)
		}
	}
	user := filepath.Join(dir, "y_train.t10.fitsds")
	os.WriteFile(user, []byte("the user's notes"), 0o644)
	_, err := Create(user, Header{DType: Uint8, Shape: []int{2}, Classes: 3})
	refused("user's file", err)
	if b, _ := os.ReadFile(user); string(b) != "the user's notes" {
		t.Errorf("the user's file now holds %q", b)
	}
	os.Mkdir(filepath.Join(dir, "d.fitsds"), 0o755)
	_, err = Create(filepath.Join(dir, "d.fitsds"), Header{DType: Uint8, Shape: []int{2}, Classes: 3})
	refused("folder", err)
	other := filepath.Join(t.TempDir(), "target")
	os.WriteFile(other, []byte(Magic+"elsewhere"), 0o644)
	os.Symlink(other, filepath.Join(dir, "l.fitsds"))
	_, err = Create(filepath.Join(dir, "l.fitsds"), Header{DType: Uint8, Shape: []int{2}, Classes: 3})
	refused("symbolic link", err)
	if b, _ := os.ReadFile(other); string(b) != Magic+"elsewhere" {
		t.Errorf("the link's target now holds %q", b)
	}

	// A user's file placed while converting: Close refuses and leaves it.
	late := filepath.Join(dir, "z_train.t10.fitsds")
	w, err := Create(late, Header{DType: Uint8, Shape: []int{2}, Classes: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendUint8(0, []uint8{1, 2}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(late, []byte("placed meanwhile"), 0o644)
	refused("placed while converting", w.Close())
	if b, _ := os.ReadFile(late); string(b) != "placed meanwhile" {
		t.Errorf("the file placed meanwhile now holds %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}
