//go:build !unix

package train

import "os"

// tryLockFile: without flock the folder is not locked.
func tryLockFile(f *os.File) (bool, error) { return true, nil }

func isReadOnlyFS(err error) bool { return false }

// openNoFollow opens path for reading (the caller has checked that it is not a symbolic link).
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// openLockFile opens (creating it) the lock file path for reading and writing.
func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
}

func isSymlinkError(err error) bool { return false }
