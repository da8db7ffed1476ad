package redistest

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal asks the kernel to send the child SIGKILL when the
// thread that forks it exits (prctl(2), PR_SET_PDEATHSIG); Start forks
// from a thread that lives as long as the process.
func setParentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
