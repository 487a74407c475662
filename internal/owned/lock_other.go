//go:build !unix

package owned

import "os"

// lockDir: without flock the record is not locked.
func lockDir(dir string) (func(), error) { return func() {}, nil }

// lockStaging: without flock no staging folder is known to be stale.
func lockStaging(p string) (*os.File, bool) { return nil, false }
