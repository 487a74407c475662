//go:build !unix

package filesafe

import (
	"os"
	"time"
)

// Without O_NOFOLLOW the callers' Lstat is the only check for a symbolic link; without O_NONBLOCK
// ReadRegular refuses a FIFO or a device by its Lstat before opening it.
const (
	noFollow = 0
	nonBlock = 0
)

// TryLock does not lock here (no flock): it always succeeds, and two processes are not kept apart.
func TryLock(*os.File) (bool, error) { return true, nil }

// Lock does not lock here (no flock).
func Lock(*os.File) error { return nil }

// Abandoned: without flock, a file's age is the only sign of a dead writer: a file untouched for a day
// counts as abandoned.
func Abandoned(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && time.Since(st.ModTime()) > 24*time.Hour
}

// IsSymlinkError: without O_NOFOLLOW no open fails for a symbolic link.
func IsSymlinkError(error) bool { return false }

// IsReadOnlyFS: the error of a read-only file system is not told apart here.
func IsReadOnlyFS(error) bool { return false }
