package main

import (
	"cmp"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/hostile"
)

// hostileCase is one attack on `matrixgen run`: a server's, a GPU tool's
// (a stand-in nvidia-smi first on the PATH, beside a plain server), the
// concurrency levels it is run at, and how long before Ctrl-C (2 s when
// 0).
type hostileCase struct {
	server      hostile.Attack
	tool        hostile.ToolAttack
	concurrency string
	ctrlCAfter  time.Duration
}

func (c hostileCase) name() string {
	if c.tool != "" {
		return "nvidia-smi " + string(c.tool)
	}
	return string(c.server) + " × " + c.concurrency
}

// TestHostileServersFromOutside runs `matrixgen run` as its own process
// against each hostile server and each hostile GPU tool, interrupts it
// after a few seconds, and reads what the process used: its peak memory
// must stay under 256 MB whatever the other side sends, and it must end
// on Ctrl-C. How fast it ends is logged beside the goal of 2 s; the test
// fails only far past it (ctrlCHung), where it is a hang, not a slow
// machine.
func TestHostileServersFromOutside(t *testing.T) {
	if testing.Short() {
		t.Skip("floods a loopback server for seconds per attack")
	}
	cases := []hostileCase{}
	for _, attack := range []hostile.Attack{
		hostile.HugeTokenize, hostile.HugeError, hostile.LongSSELine, hostile.KeepAliveFlood,
		hostile.EndlessMetrics, hostile.SlowModels, hostile.UsageJump, hostile.UsageBackwards, hostile.HugeVersion,
		hostile.TinyChunkFlood,
	} {
		cases = append(cases, hostileCase{server: attack, concurrency: "1,2"})
	}
	// The attacks that once grew with the streams and the time, on as many
	// streams as a sweep has, for long enough to reach them (300 and 374 MB
	// in six seconds, before).
	cases = append(cases, hostileCase{server: hostile.TinyChunkFlood, concurrency: "128", ctrlCAfter: 6 * time.Second},
		hostileCase{server: hostile.LongEventLines, concurrency: "128", ctrlCAfter: 6 * time.Second})
	if runtime.GOOS != "windows" { // the stand-in tools are shell scripts
		cases = append(cases, hostileCase{tool: hostile.EndlessTool, concurrency: "1,2"}, hostileCase{tool: hostile.HungTool, concurrency: "1,2"})
	}
	var table strings.Builder
	fmt.Fprintf(&table, "attack | peak RSS | exit after Ctrl-C (goal %v) | exit code\n", ctrlCGoal)
	for _, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			hs := &hostile.Server{Attack: c.server, Deadline: 30 * time.Second}
			ts := httptest.NewServer(hs)
			defer ts.Close()
			dir := t.TempDir()
			var env []string
			if c.tool != "" {
				bin := filepath.Join(dir, "bin")
				if err := os.Mkdir(bin, 0o755); err != nil {
					t.Fatal(err)
				}
				if _, err := hostile.WriteTool(bin, "nvidia-smi", c.tool); err != nil {
					t.Fatal(err)
				}
				env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
			}
			cfg := filepath.Join(dir, "matrixgen.toml")
			writeFile(t, cfg, []byte("[sweep]\nkv_cache_tokens = 1048576\n"))
			cmd, out := startCommandWith(t, env, "run", "-config", cfg, "-base-url", ts.URL, "-o", filepath.Join(dir, "r.json"),
				"-contexts", "1K", "-concurrency", c.concurrency, "-duration", "2s")
			peak := followPeakRSS(cmd.Process.Pid)
			done := waitFor(cmd)
			exitAfter := "ended by itself"
			select {
			case <-done: // the run gave up on the server by itself
			case <-time.After(cmp.Or(c.ctrlCAfter, 2*time.Second)):
				took, _ := interrupt(t, cmd, done, out)
				exitAfter = took.Round(time.Millisecond).String()
			}
			rss := peak(cmd)
			fmt.Fprintf(&table, "%s | %d MB | %s | %d\n", c.name(), rss>>20, exitAfter, cmd.ProcessState.ExitCode())
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

// followPeakRSS follows a running process's peak resident memory, VmHWM
// in /proc/<pid>/status, and returns a function that gives it once the
// process has ended. Not the rusage's maxrss: a process started by
// os/exec shares its parent's memory until it execs, and Linux carries
// the parent's peak over the exec into the child's maxrss, so that it
// would be this test's (whose hostile servers hold hundreds of MB), not
// the command's. Without /proc, maxrss it is.
func followPeakRSS(pid int) func(*exec.Cmd) int64 {
	var peak atomic.Int64
	stop := make(chan struct{})
	stopped := make(chan struct{})
	status := fmt.Sprintf("/proc/%d/status", pid)
	go func() {
		defer close(stopped)
		for {
			if b, err := os.ReadFile(status); err == nil {
				for line := range strings.Lines(string(b)) {
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						var kb int64
						fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
						peak.Store(max(peak.Load(), kb<<10))
					}
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func(cmd *exec.Cmd) int64 {
		close(stop)
		<-stopped
		if p := peak.Load(); p > 0 {
			return p
		}
		return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
