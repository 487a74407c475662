package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
)

// TestCreateInFolderThatCannotBeWritten: a cache whose folder cannot receive it (missing, no permission)
// is a data.FileError naming the cache (the CLI exits 2), not an internal failure.
func TestCreateInFolderThatCannotBeWritten(t *testing.T) {
	h := Header{DType: Uint8, Shape: []int{2}, Classes: 2}
	paths := []string{filepath.Join(t.TempDir(), "missing", "x.fitsds")}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		t.Cleanup(func() { os.Chmod(ro, 0o755) })
		paths = append(paths, filepath.Join(ro, "x.fitsds"))
	}
	for _, p := range paths {
		w, err := Create(p, h)
		if err == nil {
			w.Abort()
			t.Fatalf("%s: created", p)
		}
		if !data.IsBadFile(err) || !strings.Contains(err.Error(), p+": cannot write the converted cache into its folder") {
			t.Errorf("%s: %v", p, err)
		}
	}
}
