package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/hostile"
)

// farPast is when a call that should end at once on its own, or on
// Ctrl-C, counts as hung: ten times the 2 s goal, so a slow machine never
// fails it and a hang always does.
const farPast = 20 * time.Second

// endsBy runs f and fails the test if it has not returned by farPast,
// logging how long it took.
func endsBy(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); f() }()
	select {
	case <-done:
		t.Logf("%s: ended after %v", what, time.Since(start).Round(time.Millisecond))
	case <-time.After(farPast):
		t.Fatalf("%s: still running after %v", what, farPast)
	}
}

// TestToolsAreBounded: a GPU tool printing without end once took the run
// to 2.1 GB, and one whose child held its output open hung the run past
// Ctrl-C. Every way the runner asks a tool (the panel's questions, the
// sampler, rocm-smi's rounds) ends with the tool's output bounded, and at
// once when the run is interrupted.
func TestToolsAreBounded(t *testing.T) {
	for _, name := range []string{"nvidia-smi", "rocm-smi"} {
		for _, attack := range []hostile.ToolAttack{hostile.EndlessTool, hostile.HungTool} {
			t.Run(name+"/"+string(attack), func(t *testing.T) {
				t.Parallel()
				tool, err := hostile.WriteTool(t.TempDir(), name, attack)
				if err != nil {
					t.Fatal(err)
				}
				// Ctrl-C a moment in: the hung tool is still hung then.
				interrupted := func() (context.Context, context.CancelFunc) {
					return context.WithTimeout(context.Background(), 300*time.Millisecond)
				}
				endsBy(t, "one question", func() {
					ctx, cancel := interrupted()
					if attack == hostile.EndlessTool {
						// Its bound must end it, not Ctrl-C: on a busy
						// CI runner the tool had printed nothing by 300 ms.
						ctx, cancel = context.WithTimeout(context.Background(), farPast)
					}
					defer cancel()
					out, err := askTool(ctx, tool, "--query-gpu="+gpuInfoFields)
					switch {
					case attack == hostile.EndlessTool && (err == nil || !strings.Contains(err.Error(), "more than 1 MB")):
						t.Errorf("endless answer: %d bytes, %v", len(out), err)
					case attack == hostile.HungTool && !errors.Is(err, context.DeadlineExceeded):
						t.Errorf("hung tool interrupted: %v", err)
					}
				})
				endsBy(t, "the hardware panel", func() {
					ctx, cancel := interrupted()
					defer cancel()
					if h := Detect(ctx, tool); h.GPUCount != 0 || h.GPU != "" {
						t.Errorf("a GPU from an attacking tool: %+v", h)
					}
				})
				endsBy(t, "the sampler", func() {
					ctx, cancel := interrupted()
					defer cancel()
					tel, err := Start(ctx, tool)
					if err != nil {
						return // rocm-smi's first round failed: bounded, and said
					}
					<-ctx.Done()
					tel.Wait()
					if n := len(tel.take(time.Time{}, time.Now())); n > maxSamples {
						t.Errorf("%d samples kept, more than %d", n, maxSamples)
					}
				})
			})
		}
	}
}

// TestToolLines: a tool's output is handed on line by line however it is
// cut into writes, and a line past maxToolLine stops the tool.
func TestToolLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	for trial := range 200 {
		var lines []string
		var text strings.Builder
		tooLong := -1
		for i := range 1 + rng.IntN(40) {
			n := rng.IntN(200)
			if trial%5 == 4 && i == 3 {
				n, tooLong = maxToolLine+1+rng.IntN(3*maxToolLine), i
			}
			line := fmt.Sprintf("%d,%s", i, strings.Repeat("x", n))
			lines = append(lines, line)
			text.WriteString(line + "\n")
		}
		var got []string
		stopped := false
		w := &toolOutput{limit: maxToolLine, line: func(b []byte) { got = append(got, string(b)) }, stop: func() { stopped = true }}
		var err error
		for rest := text.String(); rest != "" && err == nil; {
			n := min(len(rest), 1+rng.IntN(3*maxToolLine))
			_, err = w.Write([]byte(rest[:n]))
			rest = rest[n:]
		}
		if tooLong >= 0 {
			if err == nil || !stopped || len(got) > tooLong {
				t.Fatalf("trial %d: line %d too long, %d lines handed on, error %v", trial, tooLong, len(got), err)
			}
			continue
		}
		if err != nil || strings.Join(got, "\n") != strings.Join(lines, "\n") {
			t.Fatalf("trial %d: %d lines of %d, %v", trial, len(got), len(lines), err)
		}
	}
}

// fakeTool writes a shell script named name that runs body.
func fakeTool(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := hostile.WriteExecutable(path, "#!/bin/sh\n"+body); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTelemetryWithoutReading: a tool that stops answering, or answers
// what this package refuses (a power no board draws, a field it cannot
// read, no JSON), gave cells of 0 W and 0 J. A window without a reading has
// no power figures and says why.
func TestTelemetryWithoutReading(t *testing.T) {
	lms := func(line string) string {
		return "case \"$*\" in *-lms*) while :; do echo '" + line + "'; sleep 0.2; done ;; esac\n"
	}
	for _, tt := range []struct {
		name, tool, body, want string
	}{
		{"power past any board", "nvidia-smi", lms("0, 1e300, 2400, 12000, 95, 80213, 61, 0x0"), "more than a GPU can draw"},
		{"infinite power", "nvidia-smi", lms("0, +Inf, 2400, 12000, 95, 80213, 61, 0x0"), "impossible value"},
		{"power not reported", "nvidia-smi", lms("0, [N/A], 2400, 12000, 95, 80213, 61, 0x0"), "no GPU reported its power"},
		{"sampler hangs", "nvidia-smi", "case \"$*\" in *-lms*) echo '0, 300.00, 2400, 12000, 95, 80213, 61, 0x0'; sleep 3600 & wait ;; esac\n",
			"nvidia-smi gave no sample in the window"},
		{"sampler dies", "nvidia-smi", "case \"$*\" in *-lms*) echo '0, 300.00, 2400, 12000, 95, 80213, 61, 0x0'; exit 3 ;; esac\n", "nvidia-smi stopped"},
		{"rocm-smi power unreadable", "rocm-smi", `echo '{"card0": {"Current Socket Graphics Package Power (W)": "lots", "GPU use (%)": "99"}}'` + "\n",
			"no GPU reported its power"},
		{"rocm-smi not JSON", "rocm-smi", "echo 'ERROR: GPU[0] : Unable to read power'\n", "rocm-smi --json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool := fakeTool(t, tt.tool, tt.body)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var tel *Sampler
			var err error
			endsBy(t, "starting the sampler", func() { tel, err = Start(ctx, tool) })
			if err != nil { // rocm-smi's first round must answer
				if !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("start: %v; want %q", err, tt.want)
				}
				return
			}
			defer func() { cancel(); endsBy(t, "stopping the sampler", tel.Wait) }()
			for cell := range 3 { // windows longer than the sampler's interval
				time.Sleep(700 * time.Millisecond)
				end := time.Now()
				p, why := tel.Window(end.Add(-600*time.Millisecond), end, 100)
				if p != nil || !strings.Contains(why, tt.want) || !strings.HasPrefix(why, "no reading") {
					t.Errorf("cell %d: power %+v, missing %q; want no reading, with %q", cell, p, why, tt.want)
				}
			}
		})
	}
}

// FuzzToolLines holds the tool's line reader to strings.Split over the
// same bytes, cut into writes every way, wherever no line passes the
// bound (here fuzzLineLimit, that short inputs reach it).
func FuzzToolLines(f *testing.F) {
	const fuzzLineLimit = 24
	f.Add("0, 300.00, 2400\n1, [N/A], 2400\n", uint8(5))
	f.Add("\n\n  \r\nx", uint8(1))
	f.Add(strings.Repeat("y", fuzzLineLimit+1)+"\n", uint8(7))
	f.Fuzz(func(t *testing.T, text string, cut uint8) {
		var want []string
		tooLong := false
		lines := strings.Split(text, "\n")
		for i, line := range lines {
			tooLong = tooLong || len(line) > fuzzLineLimit
			if i == len(lines)-1 || tooLong {
				break // a last line without its newline waits for it
			}
			if line = strings.TrimSpace(line); line != "" {
				want = append(want, line)
			}
		}
		var got []string
		w := &toolOutput{limit: fuzzLineLimit, line: func(b []byte) { got = append(got, string(b)) }, stop: func() {}}
		var err error
		for rest, n := text, 1+int(cut); rest != "" && err == nil; {
			k := min(len(rest), n)
			_, err = w.Write([]byte(rest[:k]))
			rest = rest[k:]
		}
		if (err != nil) != tooLong {
			t.Fatalf("error %v, a line past the bound: %v", err, tooLong)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("lines %q, want %q", got, want)
		}
	})
}
