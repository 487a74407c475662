//go:build !linux

package sweep

import "os/exec"

// configureChild does nothing here: only Linux can tie a child's life to its parent's.
func configureChild(*exec.Cmd) {}
