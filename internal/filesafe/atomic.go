package filesafe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// IsTemp reports whether name (a base name) is a temporary file of destination base name dest: what
// os.CreateTemp makes of the pattern ".DEST.tmp*", decimal digits in place of the "*".
func IsTemp(name, dest string) bool {
	rest, ok := strings.CutPrefix(name, "."+dest+".tmp")
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
}

// RemoveStale removes the temporary files of destination path that no live writer holds (left by a
// writer that was killed), and returns their paths. Files of other names are never touched; a missing
// folder is not an error.
func RemoveStale(path string) ([]string, error) {
	dir, dest := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !IsTemp(e.Name(), dest) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		// Holding the lock while removing: a live writer keeps its lock until it has renamed the file.
		if Abandoned(f) && os.Remove(p) == nil {
			removed = append(removed, p)
		}
		f.Close()
	}
	return removed, nil
}

// CreateTemp removes the stale temporary files of destination path (RemoveStale), then creates a new
// temporary file for it in the same folder, with permissions 0644, locked until it is closed. The caller
// writes it, syncs it, renames it to path (Commit) and closes it; or removes it (Discard).
func CreateTemp(path string) (*os.File, error) {
	if _, err := RemoveStale(path); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		Discard(f)
		return nil, err
	}
	_, _ = TryLock(f) // a new file: nobody else holds it
	return f, nil
}

// Commit syncs tmp, renames it to path and closes it; on error tmp is removed and path is left as it was.
// The rename happens while tmp is still open (and locked), so that no other writer takes it for stale.
func Commit(tmp *os.File, path string) error {
	err := tmp.Sync()
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		Discard(tmp)
		return err
	}
	return tmp.Close()
}

// CommitNew syncs tmp and puts it at path, which must not exist: hard-linked (the link fails when
// anything appeared there meanwhile, which is then left as it is), or, where the file system has no hard
// links, renamed after checking again. An error for which errors.Is(err, fs.ErrExist) holds says that
// something is at path. tmp is closed and removed in every case.
func CommitNew(tmp *os.File, path string) error {
	defer Discard(tmp)
	if err := tmp.Sync(); err != nil {
		return err
	}
	err := os.Link(tmp.Name(), path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, err := os.Lstat(path); err == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	return os.Rename(tmp.Name(), path)
}

// Discard closes and removes a temporary file made by CreateTemp.
func Discard(tmp *os.File) {
	tmp.Close()
	os.Remove(tmp.Name())
}

// WriteFile writes data to path atomically (temporary file in the same folder, then rename), with
// permissions 0644, after removing stale temporary files of path. On error the temporary file is removed
// and path is left as it was.
func WriteFile(path string, data []byte) error {
	tmp, err := CreateTemp(path)
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		Discard(tmp)
		return err
	}
	return Commit(tmp, path)
}
