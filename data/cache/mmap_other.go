//go:build !linux

package cache

import (
	"errors"
	"os"
)

// mapFile is not implemented here: LoadSet reads the file into memory instead.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	return nil, nil, errors.New("memory mapping not used on this system")
}
