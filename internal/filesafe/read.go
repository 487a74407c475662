package filesafe

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is ReadRegular's refusal of a path that is not a regular file of at most its limit: a
// symbolic link, a folder, a FIFO, a device, or a larger file.
type NotRegularError struct {
	Path  string
	Mode  fs.FileMode // the type of what is there; 0 for a regular file larger than Limit
	Size  int64       // the size of a regular file larger than Limit
	Limit int64
}

func (e *NotRegularError) Error() string {
	switch {
	case e.Mode&fs.ModeSymlink != 0:
		return e.Path + " is a symbolic link, not a regular file"
	case !e.Mode.IsRegular():
		return e.Path + " is not a regular file"
	}
	return fmt.Sprintf("%s holds %d bytes, more than the %d fits reads", e.Path, e.Size, e.Limit)
}

// ReadRegular reads the file at path when it is a regular file of at most limit bytes: a symbolic link
// is not followed, and a folder, a FIFO or a device is refused without blocking on it; those, and a
// larger file, are a *NotRegularError. A missing file is an error for which errors.Is(err,
// fs.ErrNotExist) holds, as from os.ReadFile; every error names path.
func ReadRegular(path string, limit int64) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, st, limit); err != nil {
		return nil, err
	}
	f, err := OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Again on what was opened: the file may have been replaced since the Lstat.
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkRegular(path, st, limit); err != nil {
		return nil, err
	}
	b := make([]byte, st.Size()) // what it holds now; a file cut short meanwhile is an error
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
}

func checkRegular(path string, st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: st.Mode().Type(), Limit: limit}
	}
	if st.Size() > limit {
		return &NotRegularError{Path: path, Size: st.Size(), Limit: limit}
	}
	return nil
}
