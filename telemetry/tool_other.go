//go:build !unix

package telemetry

import "os/exec"

// ownProcessGroup leaves cmd as it is: without Unix process groups, a
// cancelled tool is killed alone (the default), and toolWaitDelay bounds
// the wait for any child it left holding its output.
func ownProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills the tool itself where there are no process groups.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
