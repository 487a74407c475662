//go:build unix

package train

import (
	"errors"
	"os"
	"syscall"
)

// tryLockFile takes an exclusive advisory lock on f without waiting; false when another file holds one.
func tryLockFile(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func isReadOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }

// openNoFollow opens path for reading without following a final symbolic link and without blocking on a
// FIFO or device.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// openLockFile opens (creating it) the lock file path for reading and writing, never through a symbolic
// link and without blocking on a FIFO.
func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
}

// isSymlinkError reports whether err is what opening a symbolic link with O_NOFOLLOW gives.
func isSymlinkError(err error) bool { return errors.Is(err, syscall.ELOOP) }
