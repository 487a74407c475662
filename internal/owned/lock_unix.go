//go:build unix

package owned

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive advisory lock (flock) on the folder dir itself, waiting for another holder,
// and returns the function that releases it. The kernel releases it when the process ends.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return func() {}, nil // a file system without locks: as before, unlocked
	}
	return func() { f.Close() }, nil
}

// lockStaging takes, without waiting, an exclusive lock on the staging folder p and returns it open; false
// when another process holds it (or it cannot be opened).
func lockStaging(p string) (*os.File, bool) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return f, true
}
