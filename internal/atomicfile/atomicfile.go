// Package atomicfile writes files so that a reader never sees a half-written one: the data go to a
// temporary file beside the destination, which is synced and then renamed into place.
//
// A temporary file of destination DIR/NAME is named DIR/.NAME.tmpDIGITS and holds an exclusive advisory
// lock (flock) for as long as its writer has it open. A writer that was killed leaves its temporary file
// unlocked: the next writer of the same destination removes such stale files (RemoveStale), and never
// touches a file of another name or one that a live writer still holds.
package atomicfile

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// tempSuffix matches what os.CreateTemp puts in place of the "*" of TempPattern: decimal digits.
var tempSuffix = regexp.MustCompile(`^[0-9]+$`)

// TempPattern returns the os.CreateTemp pattern of the temporary files of destination path:
// ".NAME.tmp*" for path DIR/NAME.
func TempPattern(path string) string { return "." + filepath.Base(path) + ".tmp*" }

// IsTemp reports whether name (a base name) is a temporary file of destination base name dest.
func IsTemp(name, dest string) bool {
	rest, ok := strings.CutPrefix(name, "."+dest+".tmp")
	return ok && tempSuffix.MatchString(rest)
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
		if tryLock(f) && os.Remove(p) == nil {
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
	f, err := os.CreateTemp(filepath.Dir(path), TempPattern(path))
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		Discard(f)
		return nil, err
	}
	lock(f)
	return f, nil
}

// Commit syncs tmp, renames it to path and closes it; on error tmp is removed and path is left as it was.
// The rename happens while tmp is still open (and locked), so that no other writer takes it for stale.
func Commit(tmp *os.File, path string) error {
	if err := tmp.Sync(); err != nil {
		Discard(tmp)
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		Discard(tmp)
		return err
	}
	return tmp.Close()
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
