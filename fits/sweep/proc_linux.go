package sweep

import (
	"os/exec"
	"syscall"
)

// configureChild puts a training process in its own process group (a Ctrl-C at the terminal reaches only
// the sweep, which stops its runs itself) and has the kernel kill it when the sweep dies, even by
// SIGKILL, so that no orphan keeps writing into a run directory that a restarted sweep resumes.
func configureChild(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
