//go:build unix

// Package procgroup starts a command in a process group of its own and
// ends the whole group: a server or a browser a test starts (Ollama,
// SeaweedFS, Chromium) starts helpers of its own, which must end with it.
package procgroup

import (
	"os/exec"
	"syscall"
)

// Own makes cmd, once started, the leader of a process group of its own.
func Own(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// Kill ends cmd's process group.
func Kill(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
