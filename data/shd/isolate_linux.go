package shd

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the child when this process dies.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
