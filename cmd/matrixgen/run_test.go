package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/hostile"
	"github.com/matrixgen/matrixgen/sim"
)

// TestRunThenBuild: `matrixgen run` against the sim, then `matrixgen build`
// publishes a page for the new run, marked simulated, and the API key is in
// none of the files written.
func TestRunThenBuild(t *testing.T) {
	p := sim.DefaultProfile()
	p.Decode = sim.DecodeProfile{BaseMs: 5, MaxBatchedTokens: 8192}
	p.Prefill.RequestOverheadMs = 20
	s, err := sim.New(p, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer func() { ts.Close(); s.Close() }()

	// The key the runner holds, under flags of every spelling, and under one
	// no pattern knows (only the live key's value can find that one); and
	// a password in a URL.
	const key = "sk-test-0123456789-do-not-leak"
	const password = "pa55-do-not-leak"
	t.Setenv("MATRIXGEN_TEST_KEY", key)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "matrixgen.toml")
	writeFile(t, cfg, []byte(`[server]
api_key_env = "MATRIXGEN_TEST_KEY"
[describe]
gpu = "Loopback"
launch_command = "vllm serve m --api-key `+key+` -api-key `+key+` --api-keys `+key+` --middleware-api-key `+key+` --served-as `+key+` --hf-url https://user:`+password+`@hf.example/"
`))
	runFile := filepath.Join(dir, "runs", "e2e.json")
	code, stdout, stderr := matrixgenCmd(t, "run", "-config", cfg, "-base-url", ts.URL, "-o", runFile,
		"-contexts", "1K,2K", "-concurrency", "1,2", "-duration", "1s", "-max-output", "256")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "6 of 6 measurements") || !strings.Contains(stdout, "(complete)") {
		t.Errorf("run summary: %s", stdout)
	}
	e, err := matrixgen.LoadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Run.Simulated || len(e.Run.Decode) != 4 || e.Run.Probe == nil || !e.Run.Probe.ContinuousUsage {
		t.Errorf("run: simulated %v, %d cells, probe %+v", e.Run.Simulated, len(e.Run.Decode), e.Run.Probe)
	}
	if !strings.Contains(e.Run.LaunchCommand, "--api-key <redacted>") {
		t.Errorf("launch command not redacted: %q", e.Run.LaunchCommand)
	}
	out := filepath.Join(dir, "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", filepath.Join(dir, "runs"), "-o", out, "-config", cfg); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(filepath.Join(out, "runs", "e2e", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "Simulated: measured against") || !strings.Contains(string(page), "1K") {
		t.Error("the page of the new run lacks its simulated mark or its matrix")
	}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && path != cfg {
			data, _ := os.ReadFile(path)
			if strings.Contains(string(data), key) || strings.Contains(string(data), password) {
				t.Errorf("%s contains the API key or the URL's password", path)
			}
		}
		return nil
	})
	if strings.Contains(stdout+stderr, key) {
		t.Error("the command's output contains the API key")
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-concurrency", "1,x"}, `-concurrency: "x" is not a whole number`},
		{[]string{"-concurrency", "0"}, "sweep.concurrency: want levels from 1 up"},
		{[]string{"-contexts", "lots"}, `context "lots"`},
		{[]string{"-o", filepath.Join(dir, "../x y.json")}, "want <id>.json"},
		{[]string{"-api-key-env", "MATRIXGEN_SURELY_UNSET"}, "MATRIXGEN_SURELY_UNSET, which is not set"},
	} {
		code, _, stderr := matrixgenCmd(t, append([]string{"run", "-base-url", "http://127.0.0.1:1"}, tt.args...)...)
		if code != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestContextBeyondTheModel: a context the server's model cannot hold is an
// error naming the config line, before any measurement.
func TestContextBeyondTheModel(t *testing.T) {
	p := sim.DefaultProfile()
	p.MaxModelLen = 16384
	s, err := sim.New(p, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer func() { ts.Close(); s.Close() }()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "matrixgen.toml")
	writeFile(t, cfg, []byte("[sweep]\nmax_output = 4096\ncontexts = [\"8K\", \"16K\"]\nconcurrency = [1]\n"))
	code, _, stderr := matrixgenCmd(t, "run", "-config", cfg, "-base-url", ts.URL, "-o", filepath.Join(dir, "runs", "x.json"))
	if code != 1 || !strings.Contains(stderr, "matrixgen.toml:3: sweep.contexts: 16K + max_output 4096 exceed the model's maximum length of 16384") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	for _, rt := range s.Trace() {
		if rt.PromptTokens > 100 {
			t.Errorf("a measurement request was sent: %+v", rt)
		}
	}
}

// TestEscapeSequencesArePrinted: a server's error holding escape sequences
// and a carriage return once retitled the terminal, cleared it and forged
// the line "matrixgen run: 9 of 9 measurements (complete)". Its words are
// printed escaped, wherever they surface.
func TestEscapeSequencesArePrinted(t *testing.T) {
	ts := httptest.NewServer(&hostile.Server{Attack: hostile.EscapeError, Deadline: 10 * time.Second})
	defer ts.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "matrixgen.toml")
	writeFile(t, cfg, []byte("[sweep]\nkv_cache_tokens = 1048576\n"))
	_, stdout, stderr := matrixgenCmd(t, "run", "-config", cfg, "-base-url", ts.URL, "-o", filepath.Join(dir, "r.json"),
		"-contexts", "1K", "-concurrency", "1", "-duration", "1s")
	out := stdout + stderr
	if strings.ContainsAny(out, "\x1b\r\x07") {
		t.Errorf("control characters reached the output:\n%q", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, hostile.ForgedLine) {
			t.Errorf("a forged line starts a line of the output: %q", line)
		}
	}
	if !strings.Contains(out, `\x1b]0;pwned`) {
		t.Errorf("the server's words should still be shown, escaped:\n%s", out)
	}
}
