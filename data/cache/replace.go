package cache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/internal/owned"
)

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
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	conflict := data.BadFile(&owned.ConflictError{Dir: filepath.Clean(dir), Paths: []string{base}})
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
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := owned.Note(dir, base); err != nil {
		return fmt.Errorf("%s: recording it as written by fits: %w", path, err)
	}
	return nil
}
