package main

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/sim"
)

// TestMain lets a test run this very binary as `matrixgen`: with
// MATRIXGEN_MAIN set, the process is the command, not the tests.
func TestMain(m *testing.M) {
	if os.Getenv("MATRIXGEN_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// startCommand starts `matrixgen args…` as a separate process.
func startCommand(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	return startCommandWith(t, nil, args...)
}

// startCommandWith starts `matrixgen args…` as a separate process, with
// env (KEY=value) over this one's environment.
func startCommandWith(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "MATRIXGEN_MAIN=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

func quickSim(t *testing.T) string {
	p := sim.DefaultProfile()
	p.Decode = sim.DecodeProfile{BaseMs: 5, MaxBatchedTokens: 8192}
	p.Prefill.RequestOverheadMs = 20
	s, err := sim.New(p, sim.Options{TraceLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts.URL
}

// finishedCells maps each finished measurement of a run file to when its
// window opened (prefill rows to their TTFT), to see that none is lost or
// measured again.
func finishedCells(t *testing.T, file string) map[string]string {
	t.Helper()
	e, err := runfile.Load(file)
	if err != nil {
		t.Fatalf("after kill -9 the run file does not load: %v", err)
	}
	out := map[string]string{}
	for _, p := range e.Run.Prefill {
		if p.Status != matrixgen.StatusNotRun && p.TTFTMs != nil {
			out["prefill "+matrixgen.ContextLabel(p.ContextTokens)] = string(p.Status) + " " + time.Duration(*p.TTFTMs*1e6).String()
		}
	}
	for _, d := range e.Run.Decode {
		if d.Status != matrixgen.StatusNotRun {
			out[matrixgen.ContextLabel(d.ContextTokens)+"×"+string(rune('0'+d.Concurrency))] = string(d.Status) + " " + d.WindowStart.String()
		}
	}
	return out
}

// TestKill9AndResume kills `matrixgen run` at random moments, many times:
// the run file always parses, and resuming never loses or re-measures a
// finished cell.
func TestKill9AndResume(t *testing.T) {
	url := quickSim(t)
	file := filepath.Join(t.TempDir(), "runs", "killed.json")
	sweep := []string{"-base-url", url, "-contexts", "1K,2K,4K", "-concurrency", "1,2,4,8", "-duration", "700ms", "-max-output", "512"}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]string{}
	kills := 0
	for i := 0; i < 12 && kills < 8; i++ {
		args := append([]string{"run", "-o", file}, sweep...)
		if _, err := os.Stat(file); err == nil {
			args = append([]string{"run", "-resume", file}, sweep...)
		}
		cmd, out := startCommand(t, args...)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-time.After(time.Duration(300+rng.IntN(2500)) * time.Millisecond):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
		case err := <-done:
			if err != nil {
				t.Fatalf("run failed: %v\n%s", err, out)
			}
		}
		if _, err := os.Stat(file); err != nil {
			continue // killed before its first save
		}
		now := finishedCells(t, file)
		for k, v := range seen {
			if now[k] != v {
				t.Fatalf("after kill %d, %s was %q and is now %q", kills, k, v, now[k])
			}
		}
		seen = now
	}
	cmd, out := startCommand(t, append([]string{"run", "-resume", file}, sweep...)...)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the final resume failed: %v\n%s", err, out)
	}
	final := finishedCells(t, file)
	for k, v := range seen {
		if final[k] != v {
			t.Errorf("%s was %q and is now %q", k, v, final[k])
		}
	}
	if len(final) != 3+12 {
		t.Errorf("%d measurements finished, want 15: %v", len(final), final)
	}
	if kills < 3 {
		t.Errorf("only %d kills landed; the test needs more", kills)
	}
	t.Logf("%d kills", kills)
}

// ctrlCGoal is how soon a run should end after Ctrl-C, and ctrlCHung how
// long after it a test calls it hung: ten times the goal, so a slow
// machine never fails and a hang always does. How long it took is logged.
const (
	ctrlCGoal = 2 * time.Second
	ctrlCHung = 10 * ctrlCGoal
)

// TestInterruptExitsCleanly sends Ctrl-C mid-sweep: the command stops
// (within ctrlCGoal, logged; a test failure only past ctrlCHung), saves,
// says what it has and exits non-zero.
func TestInterruptExitsCleanly(t *testing.T) {
	url := quickSim(t)
	file := filepath.Join(t.TempDir(), "runs", "interrupted.json")
	cmd, out := startCommand(t, "run", "-o", file, "-base-url", url, "-contexts", "1K", "-concurrency", "1,2,4,8", "-duration", "3s")
	time.Sleep(2 * time.Second)
	took, err := interrupt(t, cmd, waitFor(cmd), out)
	t.Logf("stopping took %v (goal %v)", took.Round(time.Millisecond), ctrlCGoal)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitStopped {
		t.Errorf("an interrupted run exited with %v, want %d", err, exitStopped)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "interrupted; what was measured is saved") {
		t.Errorf("last line %q", last)
	}
	if !strings.Contains(out.String(), "(incomplete: continue with matrixgen run -resume "+file+" -base-url="+url+")") {
		t.Errorf("no summary with the resume hint:\n%s", out)
	}
	e, lerr := runfile.Load(file)
	if lerr != nil {
		t.Fatalf("the saved file does not load: %v", lerr)
	}
	if !e.Run.Incomplete {
		t.Error("the saved file does not say it is incomplete")
	}
}

// TestResumeHintWorksAsPrinted interrupts a run against the sim, named as
// a newcomer's run is (no -o), and runs the hint it printed, exactly as
// printed: the run completes, keeping what was measured before. Flags that
// change the sweep are refused on a resume, listing the differences.
func TestResumeHintWorksAsPrinted(t *testing.T) {
	url := quickSim(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "run", "-base-url", url, "-contexts", "1K,2K", "-concurrency", "1,2", "-duration", "1s", "-max-output", "256")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MATRIXGEN_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once a measurement is saved; the deadline is far past any
	// machine's time for one.
	var file string
	for deadline := time.Now().Add(2 * time.Minute); file == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		names, _ := filepath.Glob(filepath.Join(dir, "runs", "*.json"))
		if len(names) == 1 && len(finishedCells(t, names[0])) > 0 {
			file = names[0]
		}
	}
	if file == "" {
		cmd.Process.Kill()
		t.Fatalf("no measurement was saved:\n%s", out.String())
	}
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err == nil {
		t.Fatal("an interrupted run exited 0")
	}
	_, hint, ok := strings.Cut(out.String(), "(incomplete: continue with ")
	hint, _, _ = strings.Cut(hint, "\n")
	hint, ok2 := strings.CutSuffix(hint, ")")
	if !ok || !ok2 {
		t.Fatalf("no resume hint:\n%s", out.String())
	}
	args := shellWords(t, hint)
	if len(args) < 4 || args[0] != "matrixgen" || args[1] != "run" || args[2] != "-resume" || args[3] != filepath.Join("runs", filepath.Base(file)) {
		t.Fatalf("hint %q", hint)
	}
	before := finishedCells(t, file)
	t.Chdir(dir)
	saved, _ := os.ReadFile(file)
	code, stdout, stderr := matrixgenCmd(t, append(args[1:], "-contexts", "4K")...)
	if now, _ := os.ReadFile(file); code != 1 || !strings.Contains(stderr, "contexts: [1024 2048] then, [4096] now") || !bytes.Equal(saved, now) {
		t.Errorf("a resume with other contexts: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = matrixgenCmd(t, args[1:]...)
	if code != 0 || !strings.Contains(stdout, "6 of 6 cells and prefill rows done") || !strings.Contains(stdout, "(complete)") {
		t.Fatalf("the hint %q: exit %d\n%s\n%s", hint, code, stdout, stderr)
	}
	after := finishedCells(t, file)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s was %q before the resume and is %q after", k, v, after[k])
		}
	}
	if len(after) != 6 {
		t.Errorf("%d measurements after the resume: %v", len(after), after)
	}
}

// shellWords splits a command line as a POSIX shell would the ones
// shellQuote writes: words apart by spaces, '…' quoting anything, \
// escaping the next character.
func shellWords(t *testing.T, line string) []string {
	var words []string
	var word []byte
	inWord, quoted, escaped := false, false, false
	for i := 0; i < len(line); i++ { // by byte: every special character is ASCII
		c := line[i]
		switch {
		case escaped:
			word = append(word, c)
			escaped = false
		case !quoted && c == '\\':
			escaped, inWord = true, true
		case quoted && c == '\'':
			quoted = false
		case quoted:
			word = append(word, c)
		case c == '\'':
			quoted, inWord = true, true
		case c == ' ':
			if inWord {
				words = append(words, string(word))
				word, inWord = nil, false
			}
		case strings.IndexByte("\"\\$`;&|<>(){}*?[]#~!\t\n", c) >= 0:
			t.Fatalf("%q: %q unquoted", line, c)
		default:
			word = append(word, c)
			inWord = true
		}
	}
	if quoted || escaped {
		t.Fatalf("%q: a quote or escape left open", line)
	}
	if inWord {
		words = append(words, string(word))
	}
	return words

}

// interrupt sends Ctrl-C to a running command, whose end done will tell,
// and waits for that end: the command is killed, and the test fails, when
// it is still running ctrlCHung after. It returns how long it took to end
// and how it ended.
func interrupt(t *testing.T, cmd *exec.Cmd, done <-chan error, out *bytes.Buffer) (time.Duration, error) {
	t.Helper()
	sent := time.Now()
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-done:
		return time.Since(sent), err
	case <-time.After(ctrlCHung):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running %v after Ctrl-C, far past the goal of %v:\n%s", ctrlCHung, ctrlCGoal, out)
		return 0, nil
	}
}

// waitFor waits for cmd to end, and tells how on the channel it returns.
func waitFor(cmd *exec.Cmd) <-chan error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done
}
