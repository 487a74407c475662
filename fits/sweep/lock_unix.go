//go:build unix

package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockFile is the file in a sweep's root that a running sweep holds locked.
const lockFile = ".sweep.lock"

// lockRoot takes an exclusive advisory lock on root (released by the kernel when the process dies, even
// by SIGKILL) and returns the function that releases it; ErrLocked when another sweep holds it.
func lockRoot(root string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(root, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
