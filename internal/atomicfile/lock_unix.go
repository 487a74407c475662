//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on f, held until f is closed (or its process ends).
func lock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// tryLock reports whether an exclusive lock on f could be taken: no other open file holds one.
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
