//go:build !unix

package procgroup

import "os/exec"

// Own: no process groups here; Kill ends the command alone.
func Own(*exec.Cmd) {}

// Kill ends cmd.
func Kill(cmd *exec.Cmd) { cmd.Process.Kill() }
