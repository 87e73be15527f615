//go:build unix

package telemetry

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup runs cmd in a process group of its own, and makes its
// cancellation kill that group: the tool and every process it started.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		killProcessGroup(cmd)
		return nil
	}
}

// killProcessGroup kills the process group cmd leads.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
