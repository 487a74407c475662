package filesafe

import (
	"cmp"
	"errors"
	"os"
)

// ErrLocked is TryLockFile's error when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// OpenNoFollow opens path as os.OpenFile does, except that a final symbolic link is not followed (the
// open fails; IsSymlinkError tells that error) and a FIFO or a device does not block the call.
func OpenNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|noFollow|nonBlock, perm)
}

// TryLockFile opens path (OpenNoFollow, with flag and perm) and takes an exclusive advisory lock on it
// without waiting: ErrLocked when another process holds one. The lock is held until the returned file
// is closed, or the process ends. A folder may be locked too (flag os.O_RDONLY).
//
//	f, err := filesafe.TryLockFile(filepath.Join(root, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
//	if errors.Is(err, filesafe.ErrLocked) {
//		// another process works in root
//	}
//	defer f.Close()
func TryLockFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := OpenNoFollow(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if ok, err := TryLock(f); !ok {
		f.Close()
		return nil, cmp.Or(err, ErrLocked)
	}
	return f, nil
}
