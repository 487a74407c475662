//go:build !unix

package download

import "os"

// Without O_NOFOLLOW and flock the callers check with Lstat alone and do not lock.
const (
	oNoFollow = 0
	oNonBlock = 0
)

func tryLock(f *os.File) bool { return true }
