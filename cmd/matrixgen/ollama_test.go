package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/gguf"
	"github.com/matrixgen/matrixgen/internal/procgroup"
	"github.com/matrixgen/matrixgen/runfile"
)

// TestRealOllama sweeps a real Ollama serving a tiny random-weight model
// that the test writes itself, then builds the site, and checks what only a
// real server can show: prefill from a prompt its cache has never seen,
// the client's figures against Ollama's own accounting, no cell lost to a
// closed connection.
//
// Ollama installs with the Go toolchain (`go install
// github.com/ollama/ollama@v0.6.5`, with Debian's nlohmann-json3-dev);
// .ci/run does so and sets MATRIXGEN_REQUIRE_OLLAMA, so there the test
// cannot be skipped. Elsewhere, without `ollama` on PATH, it skips and says
// so on the terminal.
func TestRealOllama(t *testing.T) {
	bin := realServer(t, "ollama", "MATRIXGEN_REQUIRE_OLLAMA", "go install github.com/ollama/ollama@v0.6.5")
	if testing.Short() {
		t.Skip("a real server sweep takes minutes")
	}
	dir := t.TempDir()
	url := startOllama(t, bin, dir)
	model := createTinyModel(t, bin, url, dir)

	runFile := filepath.Join(dir, "runs", "ollama.json")
	config := filepath.Join(dir, "matrixgen.toml")
	writeFile(t, config, []byte("[sweep]\nwarmup_timeout = \"5m\"\nidle_timeout = \"2m\"\n[describe]\nlaunch_command = \"OLLAMA_NUM_PARALLEL=4 ollama serve\"\n"))
	maxOutput, window := sweepSize(ollamaDecodeRate(t, url, model))
	t.Logf("requests of %d tokens in windows of %v", maxOutput, window)
	code, stdout, stderr := matrixgenCmd(t, "run", "-config", config, "-base-url", url, "-model", model, "-o", runFile,
		"-contexts", "1K,4K", "-concurrency", "1,2,4", "-duration", window.String(), "-max-output", fmt.Sprint(maxOutput))
	t.Logf("matrixgen run:\n%s%s", stdout, stderr)
	if code != 0 {
		t.Fatalf("run exited %d", code)
	}
	entry, err := runfile.Load(runFile)
	if err != nil {
		t.Fatal(err)
	}
	run := entry.Run
	if run.Probe.Engine != "ollama" || run.Probe.MaxModelLen != ollamaNumCtx {
		t.Errorf("probe: engine %q, per-request context %d; want ollama, %d", run.Probe.Engine, run.Probe.MaxModelLen, ollamaNumCtx)
	}
	t.Logf("%s", ollamaTable(run))
	for _, p := range run.Prefill {
		label := "prefill " + matrixgen.ContextLabel(p.ContextTokens)
		if p.Status != matrixgen.StatusValid || p.PromptTokS == nil || p.ServerPromptTokS == nil {
			t.Errorf("%s: %s (%s)", label, p.Status, p.Reason)
			continue
		}
		// Measured warm, on fresh prompts, the client's figure is the
		// server's prefill: within 25 % of Ollama's own prompt timing (it
		// includes the request's way in and out). A prompt served from the
		// cache would make both many times what the model can read; a cold
		// one would put the first request's costs in the client's figure.
		if r := *p.PromptTokS / *p.ServerPromptTokS; r > 1+matrixgen.OutsidePromptShare || r < 1-matrixgen.OutsidePromptShare {
			t.Errorf("%s: %.0f tok/s by the client, %.0f by Ollama's own timing", label, *p.PromptTokS, *p.ServerPromptTokS)
		}
		if len(p.Requests) != 3 || p.ColdTTFTMs == nil || p.ServerClock != "Ollama prompt_eval_duration" {
			t.Errorf("%s: %d requests measured, cold start %v, clock %q; want 3 after a warm-up, by Ollama's prompt_eval_duration",
				label, len(p.Requests), p.ColdTTFTMs != nil, p.ServerClock)
		}
	}
	for _, d := range run.Decode {
		label := fmt.Sprintf("%s × %d", matrixgen.ContextLabel(d.ContextTokens), d.Concurrency)
		if !d.Measured() || (d.Status != matrixgen.StatusValid && d.Status != matrixgen.StatusQueued) {
			t.Errorf("%s: %s (%s)", label, d.Status, d.Reason)
			continue
		}
		// Ollama holds back text that might begin a stop sequence and sends
		// it later in one line with the next, so its lines can undercount
		// its tokens: a disagreement is a finding the page flags, not a
		// failure. The count itself must be there.
		if c := d.ServerCount; c == nil || c.ServerTokens == 0 {
			t.Errorf("%s: no server's own count: %+v", label, c)
		} else if c.Disagrees() {
			t.Logf("%s: %d lines against Ollama's eval_count of %d (%+.1f%%), flagged on the page", label, c.ClientTokens, c.ServerTokens, 100*c.Deviation())
		}
		// At one request, the client's rate for the requests Ollama timed
		// agrees with Ollama's own eval_count / eval_duration, request for
		// request: within 5 % at 4K × 1, whose medians were within 1 % in
		// every run (a single request's two rates were 0.0–0.7 % apart).
		// 1K × 1 is shown, not held to a bound: its answers are a few dozen
		// tokens at a token a millisecond or two, where the time Ollama
		// holds back the first text (it might begin a stop sequence) is a
		// large share of each request, and its medians ranged from +0.0 to
		// +10.7 % across CI runs. (Counting only the tokens after the first
		// text made them −4.9 to −7.6 %: the held-back text is the bias.)
		if d.Concurrency == 1 {
			if d.ClientRateOfServerTimed == nil || d.ServerPerRequestTokS == nil {
				t.Errorf("%s: no per-request rate to compare", label)
				continue
			}
			r := *d.ClientRateOfServerTimed / *d.ServerPerRequestTokS
			if d.ContextTokens == 4096 && (r < 0.95 || r > 1.05) {
				t.Errorf("%s: %.1f tok/s for the requests Ollama timed, by the client; %.1f by Ollama's eval_count / eval_duration", label, *d.ClientRateOfServerTimed, *d.ServerPerRequestTokS)
			}
			t.Logf("%s: per request %.1f tok/s by the client, %.1f by Ollama (%+.1f%%)", label, *d.ClientRateOfServerTimed, *d.ServerPerRequestTokS, 100*(r-1))
		}
	}
	out := filepath.Join(dir, "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", filepath.Dir(runFile), "-o", out); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "ollama", "index.html")); err != nil {
		t.Error(err)
	}
}

// ollamaNumCtx is the test model's context per request.
const ollamaNumCtx = 8192

// The sweep is sized by how fast this machine runs the model now: every
// cell must see requests complete inside its window, or there is no count
// of Ollama's to hold ours against, and a busy machine (9 tok/s in one CI
// run, where 256-token answers at 6 s windows completed none) must pass
// as a quiet one does. A request gets the tokens that a quarter of the
// window allows each of four streams sharing the machine, between 16 and
// 256; the window grows from 6 s as far as the shortest request needs.
func sweepSize(rate float64) (maxOutput int, window time.Duration) {
	const streams, minWindow = 4, 6 * time.Second
	perStream := rate / streams
	maxOutput = min(max(int(perStream*minWindow.Seconds()/4), 16), 256)
	window = max(minWindow, time.Duration(4*float64(maxOutput)/perStream*float64(time.Second)).Round(time.Second))
	return maxOutput, window
}

// ollamaDecodeRate asks the model for 32 tokens after a prompt about the
// sweep's longest context (4K) and reads Ollama's own eval_count /
// eval_duration: its slowest decode on this machine, now. Sized on a short
// prompt instead, a busy CI runner decoded 907 tok/s there and 10 in the
// 4K cells, where no 256-token request then ended inside a 6 s window and
// no cell had the server's own count.
func ollamaDecodeRate(t *testing.T, url, model string) float64 {
	t.Helper()
	prompt := strings.Repeat("one two three four ", 800)
	body := fmt.Sprintf(`{"model":%q,"prompt":%q,"stream":false,"options":{"num_predict":32}}`, model, prompt)
	resp, err := http.Post(url+"/api/generate", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		EvalCount    int   `json:"eval_count"`
		EvalDuration int64 `json:"eval_duration"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.EvalCount == 0 || out.EvalDuration <= 0 {
		t.Fatalf("a first request to size the sweep: %v, %+v", err, out)
	}
	rate := float64(out.EvalCount) / (float64(out.EvalDuration) / 1e9)
	t.Logf("the model decodes %.0f tok/s on one stream after a long prompt here, now", rate)
	return rate
}

// realServer finds a real server's command on PATH; without it the test
// fails where require is set (CI) and skips visibly elsewhere.
func realServer(t *testing.T, command, require, hint string) string {
	t.Helper()
	bin, err := exec.LookPath(command)
	if err != nil {
		if os.Getenv(require) != "" {
			t.Fatalf("%s is set and there is no %s on PATH (%s)", require, command, hint)
		}
		skipVisibly(t, fmt.Sprintf("%s SKIPPED, not passed: no %s on PATH (%s)", t.Name(), command, hint))
	}
	return bin
}

// skipVisibly skips the test and says so on the terminal too: go test
// prints nothing of a passing package but its "ok" line.
func skipVisibly(t *testing.T, msg string) {
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprintln(tty, msg)
		tty.Close()
	}
	t.Skip(msg)
}

// startOllama starts `ollama serve` on a free loopback port with its own
// model folder and home, and waits until it answers.
func startOllama(t *testing.T, bin, dir string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+addr, "OLLAMA_MODELS="+filepath.Join(dir, "models"),
		"HOME="+dir, "OLLAMA_NUM_PARALLEL=4", "OLLAMA_KEEP_ALIVE=-1", "OLLAMA_MAX_LOADED_MODELS=1")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	// Its own process group: `ollama serve` starts a runner process that
	// inherits the log's pipe, and both must end with the test.
	procgroup.Own(cmd)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		procgroup.Kill(cmd)
		cmd.Wait()
		if t.Failed() {
			t.Logf("ollama serve's log, last part:\n%s", tail(log.String(), 4000))
		}
	})
	url := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/api/version")
		if err == nil {
			resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("ollama serve did not answer within 30 s: %v\n%s", err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createTinyModel writes the test model and has Ollama create it, with a
// ChatML template and num_ctx set; it returns the name Ollama serves.
func createTinyModel(t *testing.T, bin, url, dir string) string {
	m := gguf.Tiny()
	m.Layers, m.Width, m.Heads, m.FeedForward = 2, 64, 2, 256 // quick on two cores
	model := filepath.Join(dir, "tiny.gguf")
	if err := gguf.Write(model, m); err != nil {
		t.Fatal(err)
	}
	modelfile := filepath.Join(dir, "Modelfile")
	writeFile(t, modelfile, []byte(fmt.Sprintf(`FROM %s
TEMPLATE """{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
"""
PARAMETER num_ctx %d
`, model, ollamaNumCtx)))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "create", "tiny", "-f", modelfile)
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+strings.TrimPrefix(url, "http://"), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ollama create: %v\n%s", err, out)
	}
	return "tiny:latest"
}

// ollamaTable sets each measurement's client and server figures side by side.
func ollamaTable(run *matrixgen.Run) string {
	var b strings.Builder
	f := func(v *float64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%.1f", *v)
	}
	fmt.Fprintf(&b, "prefill: context | client tok/s | Ollama's tok/s | TTFT ms\n")
	for _, p := range run.Prefill {
		fmt.Fprintf(&b, "  %s | %s | %s | %s\n", matrixgen.ContextLabel(p.ContextTokens), f(p.PromptTokS), f(p.ServerPromptTokS), f(p.TTFTMs))
	}
	fmt.Fprintf(&b, "decode: cell | status | total tok/s | per-request client (all) | client (requests Ollama timed) | Ollama | tokens client/server | idle wait s\n")
	for _, d := range run.Decode {
		counts := "–"
		if c := d.ServerCount; c != nil {
			counts = fmt.Sprintf("%d/%d (%+.1f%%)", c.ClientTokens, c.ServerTokens, 100*c.Deviation())
		}
		fmt.Fprintf(&b, "  %s × %d | %s | %s | %s | %s | %s | %s | %s\n", matrixgen.ContextLabel(d.ContextTokens), d.Concurrency, d.Status,
			f(d.TotalTokS), f(d.PerRequestTokS), f(d.ClientRateOfServerTimed), f(d.ServerPerRequestTokS), counts, f(d.IdleWaitSeconds))
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
