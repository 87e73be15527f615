//go:build unix

package telemetry

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/hostile"
)

// TestToolGroupKilled: a tool interrupted takes every process it started
// with it: its process group is empty after.
func TestToolGroupKilled(t *testing.T) {
	tool, err := hostile.WriteTool(t.TempDir(), "nvidia-smi", hostile.HungTool)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cmd := toolCommand(ctx, tool, nil)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	endsBy(t, "the hung tool", func() { cmd.Wait() })
	// The child, killed, is reaped by init when init gets to it.
	endsBy(t, "its process group", func() {
		for !errors.Is(syscall.Kill(-cmd.Process.Pid, 0), syscall.ESRCH) {
			time.Sleep(10 * time.Millisecond)
		}
	})
}
