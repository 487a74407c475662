//go:build !unix

package atomicfile

import (
	"os"
	"time"
)

// Without flock, a temporary file's age is the only sign of a dead writer: files untouched for a day
// count as stale.
func lock(*os.File) {}

func tryLock(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && time.Since(st.ModTime()) > 24*time.Hour
}
