//go:build unix

package filesafe

import (
	"errors"
	"os"
	"syscall"
)

// noFollow and nonBlock make an open fail on a final symbolic link and return at once on a FIFO or a
// device.
const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)

// TryLock takes an exclusive advisory lock (flock) on f without waiting. It returns false and no error
// when another open file holds one. The lock is held until f is closed; the kernel releases it when the
// process ends, even by SIGKILL.
func TryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// Lock takes an exclusive advisory lock (flock) on f, waiting for its holder to release it. The lock is
// held until f is closed.
func Lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

// Abandoned reports whether no live process holds f: an exclusive lock on it could be taken, and is
// now held through f (until f is closed). A writer locks what it works on (a temporary file, a staging
// folder), so what a killed writer left is abandoned and may be removed while f is open.
func Abandoned(f *os.File) bool {
	ok, _ := TryLock(f)
	return ok
}

// IsSymlinkError reports whether err is what OpenNoFollow returns for a symbolic link.
func IsSymlinkError(err error) bool { return errors.Is(err, syscall.ELOOP) }

// IsReadOnlyFS reports whether err says that the file system is mounted read-only.
func IsReadOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }
