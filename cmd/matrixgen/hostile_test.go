package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/hostile"
)

// TestHostileServersFromOutside runs `matrixgen run` as its own process
// against each hostile server, interrupts it after two seconds, and reads
// what the process used: its peak memory must stay under 256 MB whatever
// the server sends, and it must end on Ctrl-C. (How fast it ends is
// logged, not asserted; the bound below only catches a hang.)
func TestHostileServersFromOutside(t *testing.T) {
	if testing.Short() {
		t.Skip("floods a loopback server for seconds per attack")
	}
	var table strings.Builder
	fmt.Fprintf(&table, "attack | peak RSS | exit after Ctrl-C | exit code\n")
	for _, attack := range []hostile.Attack{
		hostile.HugeTokenize, hostile.HugeError, hostile.LongSSELine, hostile.KeepAliveFlood,
		hostile.EndlessMetrics, hostile.SlowModels, hostile.UsageJump, hostile.UsageBackwards, hostile.HugeVersion,
	} {
		t.Run(string(attack), func(t *testing.T) {
			hs := &hostile.Server{Attack: attack, Deadline: 30 * time.Second}
			ts := httptest.NewServer(hs)
			defer ts.Close()
			dir := t.TempDir()
			cfg := filepath.Join(dir, "matrixgen.toml")
			writeFile(t, cfg, []byte("[sweep]\nkv_cache_tokens = 1048576\n"))
			cmd, out := startCommand(t, "run", "-config", cfg, "-base-url", ts.URL, "-o", filepath.Join(dir, "r.json"),
				"-contexts", "1K", "-concurrency", "1,2", "-duration", "2s")
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var exitAfter time.Duration
			select {
			case <-done: // the run gave up on the server by itself
			case <-time.After(2 * time.Second):
				cmd.Process.Signal(syscall.SIGINT)
				start := time.Now()
				select {
				case <-done:
					exitAfter = time.Since(start)
				case <-time.After(30 * time.Second):
					cmd.Process.Kill()
					<-done
					t.Fatalf("still running 30 s after Ctrl-C:\n%s", out.String())
				}
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
			fmt.Fprintf(&table, "%s | %d MB | %v | %d\n", attack, rss>>20, exitAfter.Round(time.Millisecond), cmd.ProcessState.ExitCode())
			if rss > 256<<20 {
				t.Errorf("peak RSS %d MB; the server wrote %d MB\n%s", rss>>20, hs.Written()>>20, out.String())
			}
			if strings.Contains(out.String(), "what was measured is saved") && !fileExists(filepath.Join(dir, "r.json")) {
				t.Errorf("says what was measured is saved, but no run file exists:\n%s", out.String())
			}
		})
	}
	t.Logf("\n%s", table.String())
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
