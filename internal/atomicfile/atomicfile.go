// Package atomicfile writes files so that a reader never sees a half-written one: the data go to a
// temporary file beside the destination, which is synced, closed and then renamed into place.
package atomicfile

import (
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically (temporary file in the same folder, then rename), with
// permissions 0644. On error the temporary file is removed and path is left as it was.
func WriteFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
