//go:build unix

package download

import (
	"os"
	"syscall"
)

// oNoFollow and oNonBlock open a file without following a final symbolic link and without blocking on a
// FIFO or a device.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)

// tryLock takes an exclusive advisory lock (flock) on f without waiting; false when another holds it.
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
