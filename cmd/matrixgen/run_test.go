package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/hostile"
	"github.com/matrixgen/matrixgen/runfile"
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
	if !strings.Contains(stdout, "6 of 6 cells and prefill rows done") || !strings.Contains(stdout, "(complete)") {
		t.Errorf("run summary: %s", stdout)
	}
	e, err := runfile.Load(runFile)
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
	// The GPU typed in [describe] is recorded and shown as given.
	if !e.Run.Hardware.IsGiven("gpu") || !strings.Contains(string(page), "<dt>GPU</dt><dd>Loopback (as given)</dd>") {
		t.Errorf("the typed GPU is not shown as given: %v", e.Run.Hardware.Given)
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
// the line "matrixgen run: 9 of 9 cells and prefill rows done, in … (complete)". Its words are
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

// sweepFlags is a small, quick sweep.
var sweepFlags = []string{"-contexts", "1K", "-concurrency", "1", "-duration", "300ms", "-max-output", "64"}

// TestExampleConfigAgainstTheSim copies examples/matrixgen.toml beside an
// empty runs folder, as the README says, and runs it against the sim with
// no API key set: it works, -contexts limits the config's longer prefill
// list too, the run claims no hardware by hand, and its id reads
// <date>-<model>-<host>.
func TestExampleConfigAgainstTheSim(t *testing.T) {
	url := quickSim(t)
	dir := t.TempDir()
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "matrixgen.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "matrixgen.toml"), example)
	t.Chdir(dir)
	t.Setenv("VLLM_API_KEY", "")
	os.Unsetenv("VLLM_API_KEY")
	code, stdout, stderr := matrixgenCmd(t, append([]string{"run", "-base-url", url}, sweepFlags...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join("runs", "*.json"))
	if len(files) != 1 {
		t.Fatalf("run files: %v", files)
	}
	host, _ := os.Hostname()
	id := strings.TrimSuffix(filepath.Base(files[0]), ".json")
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d-\d{4}-sim-30b-a3b-` + regexp.QuoteMeta(idPart(host, 40, "host")) + `$`).MatchString(id) {
		t.Errorf("run id %q, want <date>-<model>-<host>", id)
	}
	e, err := runfile.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Run.PrefillContexts(); len(got) != 1 || got[0] != 1024 {
		t.Errorf("prefill contexts %v: -contexts 1K should limit the config's list", got)
	}
	if len(e.Run.Hardware.Given) != 0 || !e.Run.Simulated {
		t.Errorf("hardware given %v, simulated %v", e.Run.Hardware.Given, e.Run.Simulated)
	}
	if !regexp.MustCompile(`[12] of 2 cells and prefill rows done, in `).MatchString(stdout) {
		t.Errorf("summary: %s", stdout)
	}
}

// TestPrefillContextsFollowTheContexts: new contexts, from -contexts or
// -set, replace the config's prefill list unless the prefill contexts are
// given too.
func TestPrefillContextsFollowTheContexts(t *testing.T) {
	url := quickSim(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "matrixgen.toml")
	writeFile(t, cfg, []byte("[sweep]\ncontexts = [\"2K\"]\nprefill_contexts = [\"2K\", \"4K\"]\nconcurrency = [1]\nduration = \"300ms\"\nmax_output = 64\n"))
	for i, tt := range []struct {
		args []string
		want []int
	}{
		{nil, []int{2048, 4096}},
		{[]string{"-contexts", "1K"}, []int{1024}},
		{[]string{"-set", `sweep.contexts=["1K"]`}, []int{1024}},
		{[]string{"-contexts", "1K", "-prefill-contexts", "1K,2K"}, []int{1024, 2048}},
		{[]string{"-set", `sweep.contexts=["1K"]`, "-set", `sweep.prefill_contexts=["4K"]`}, []int{4096}},
	} {
		file := filepath.Join(dir, "runs", fmt.Sprintf("p%d.json", i))
		code, stdout, stderr := matrixgenCmd(t, append([]string{"run", "-config", cfg, "-base-url", url, "-o", file}, tt.args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s\n%s", tt.args, code, stdout, stderr)
		}
		e, err := runfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Run.PrefillContexts(); !slices.Equal(got, tt.want) {
			t.Errorf("%q: prefill at %v, want %v", tt.args, got, tt.want)
		}
	}
}

// TestModelNotServed: asking for a model the server does not serve names
// the ones it does.
func TestModelNotServed(t *testing.T) {
	url := quickSim(t)
	dir := t.TempDir()
	code, stdout, stderr := matrixgenCmd(t, append([]string{"run", "-base-url", url, "-model", "nemotron", "-o", filepath.Join(dir, "r.json")}, sweepFlags...)...)
	if code != 1 || !strings.Contains(stderr, `does not serve model "nemotron"; it serves "sim"`) || !strings.Contains(stderr, "no run file was written") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestAPIKeyOnlyWhenAsked: an API key is used when its variable is set,
// not required; a server that wants one and did not get it is told apart,
// naming the variable to set.
func TestAPIKeyOnlyWhenAsked(t *testing.T) {
	s, err := sim.New(quickProfile(), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const key = "sk-wanted-0123456789"
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":"Unauthorized"}`, http.StatusUnauthorized)
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer func() { ts.Close(); s.Close() }()
	dir := t.TempDir()
	file := filepath.Join(dir, "runs", "keyed.json")
	args := append([]string{"run", "-base-url", ts.URL, "-api-key-env", "MATRIXGEN_TEST_WANTED_KEY", "-o", file}, sweepFlags...)
	t.Setenv("MATRIXGEN_TEST_WANTED_KEY", "")
	os.Unsetenv("MATRIXGEN_TEST_WANTED_KEY")
	code, stdout, stderr := matrixgenCmd(t, args...)
	if code != 1 || !strings.Contains(stderr, "401 Unauthorized: the server wants an API key; set MATRIXGEN_TEST_WANTED_KEY to it") {
		t.Errorf("without the key: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Setenv("MATRIXGEN_TEST_WANTED_KEY", "sk-wrong")
	if code, stdout, stderr := matrixgenCmd(t, args...); code != 1 || !strings.Contains(stderr, "refused the API key in MATRIXGEN_TEST_WANTED_KEY") {
		t.Errorf("a wrong key: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Setenv("MATRIXGEN_TEST_WANTED_KEY", key)
	if code, stdout, stderr := matrixgenCmd(t, args...); code != 0 {
		t.Errorf("with the key: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestDeadServerWritesNothing: against a server that does not answer, run
// says on stderr that no file was written and why, claims on stdout to be
// writing nothing, and leaves no file; a resume leaves its file as it was.
func TestDeadServerWritesNothing(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	dead := ts.URL
	ts.Close()
	sample := sampleRuns(t)
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := matrixgenCmd(t, append([]string{"run", "-base-url", dead}, sweepFlags...)...)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "connection refused") || !strings.HasSuffix(stderr, "no run file was written: nothing was measured\n") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat("runs"); !os.IsNotExist(err) {
		entries, _ := os.ReadDir("runs")
		t.Errorf("a dead server left files: %v", entries)
	}
	file := filepath.Join(sample, sampleID+".json")
	before, _ := os.ReadFile(file)
	code, stdout, stderr = matrixgenCmd(t, "run", "-base-url", dead, "-resume", file)
	after, _ := os.ReadFile(file)
	if code != 1 || stdout != "" || !strings.Contains(stderr, file+" is as it was: nothing was measured") || !bytes.Equal(before, after) {
		t.Errorf("resume: exit %d\nstdout %q\nstderr %q\nchanged: %v", code, stdout, stderr, !bytes.Equal(before, after))
	}
}

// TestSkippedStepsOnStderr: what a run could not do (here: read GPU
// telemetry, on a machine without nvidia-smi) is said on stderr, where CI
// logs keep it, with what the run lacks for it; progress stays on stdout.
func TestSkippedStepsOnStderr(t *testing.T) {
	url := quickSim(t)
	t.Setenv("PATH", t.TempDir()) // no nvidia-smi, no rocm-smi
	dir := t.TempDir()
	code, stdout, stderr := matrixgenCmd(t, append([]string{"run", "-base-url", url, "-o", filepath.Join(dir, "runs", "r.json")}, sweepFlags...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "no GPU telemetry (") || !strings.Contains(stderr, "cells get no power figures") || strings.Contains(stdout, "no GPU telemetry") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if !strings.Contains(stdout, "decode 1K × 1:") {
		t.Errorf("progress is not on stdout:\n%s", stdout)
	}
}

func quickProfile() sim.Profile {
	p := sim.DefaultProfile()
	p.Decode = sim.DecodeProfile{BaseMs: 5, MaxBatchedTokens: 8192}
	p.Prefill.RequestOverheadMs = 20
	return p
}

// TestRunIDs: a new run's id is <date>-<model>-<host>, valid by the
// build's rules whatever the model and host are called, and sorts by time.
func TestRunIDs(t *testing.T) {
	now := time.Date(2026, 12, 4, 16, 24, 59, 0, time.FixedZone("CET", 3600))
	if got := newRunID(now, "nvidia/NVIDIA-Nemotron-3.5-Lightning", "GPU-Box.lab"); got != "2026-12-04-1524-nvidia-nemotron-3.5-lightning-gpu-box.lab" {
		t.Errorf("id %q", got)
	}
	if got := newRunID(now, "", ""); got != "2026-12-04-1524-model-host" {
		t.Errorf("id %q", got)
	}
	rng := rand.New(rand.NewPCG(6, 23))
	text := func() string {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		if rng.IntN(3) == 0 {
			return "../" + string(b) + "/.."
		}
		return string(b)
	}
	earlier := ""
	for i := range 5000 {
		at := now.Add(time.Duration(i) * time.Minute)
		id := newRunID(at, text(), text())
		if !matrixgen.ValidID(id) {
			t.Fatalf("invalid id %q", id)
		}
		stamp := id[:len("2006-01-02-1504")]
		if stamp <= earlier {
			t.Fatalf("%q does not sort after %q", stamp, earlier)
		}
		earlier = stamp
	}
	dir := t.TempDir()
	for _, want := range []string{"a", "a-2", "a-3"} {
		id, err := freeRunID(dir, "a")
		if err != nil || id != want {
			t.Fatalf("free id %q %v, want %q", id, err, want)
		}
		writeFile(t, filepath.Join(dir, id+".json"), nil)
	}
}

// TestShellQuote: any argument, quoted for a printed command line, reads
// back as itself.
func TestShellQuote(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	const alphabet = "aZ09_./:@%+=,- '\"\\$`;&|<>(){}*?[]#~!\téλ"
	runes := []rune(alphabet)
	for range 3000 {
		b := make([]rune, rng.IntN(20))
		for i := range b {
			b[i] = runes[rng.IntN(len(runes))]
		}
		s := string(b)
		if got := shellWords(t, shellQuote(s)); len(got) != 1 || got[0] != s {
			t.Fatalf("%q quoted as %q reads back as %q", s, shellQuote(s), got)
		}
	}
}

// onePlural is "1" followed by a plural noun: "1 runs", "1 measurements".
var onePlural = regexp.MustCompile(`(^|[^0-9.,])1 (simultaneous )?(runs|pages|measurements|files|cells|rows|objects|models|requests|tokens|GPUs|streams|steps|results|contexts|levels|chunks|prefill rows|decode cells|concurrency levels)\b`)

// TestOneIsSingular runs a sweep of one context at one level, builds a
// site of that one run, builds it again, validates and imports, and reads
// every line the commands printed and every page and CSV they wrote: no
// count of one says "1 runs".
func TestOneIsSingular(t *testing.T) {
	url := quickSim(t)
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	var said []string
	do := func(args ...string) {
		t.Helper()
		code, stdout, stderr := matrixgenCmd(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		said = append(said, stdout, stderr)
	}
	do(append([]string{"run", "-base-url", url, "-o", filepath.Join(runs, "one.json")}, sweepFlags...)...)
	out := filepath.Join(dir, "public")
	do("build", "-runs", runs, "-o", out)
	do("build", "-runs", runs, "-o", out)
	do("validate", filepath.Join(runs, "one.json"))
	writeFile(t, filepath.Join(dir, "bad.json"), []byte("{}"))
	code, _, stderr := matrixgenCmd(t, "validate", filepath.Join(dir, "bad.json"))
	if code != 1 || !strings.Contains(stderr, "1 of 1 file is not a valid run") {
		t.Errorf("validate one bad file: exit %d, %s", code, stderr)
	}
	said = append(said, stderr)
	all := strings.Join(said, "\n")
	for _, want := range []string{"from 1 run in", "(1 run unchanged: its pages kept)", "2 of 2 cells and prefill rows done"} {
		if !strings.Contains(all, want) {
			t.Errorf("the output lacks %q:\n%s", want, all)
		}
	}
	for _, line := range strings.Split(all, "\n") {
		if m := onePlural.FindString(line); m != "" {
			t.Errorf("%q in %q", m, line)
		}
	}
	if page, _ := os.ReadFile(filepath.Join(out, "runs", "one", "index.html")); !strings.Contains(string(page), "1 context (1K) × 1 concurrency level (1)") {
		t.Error("the run page does not say its sweep's shape in the singular")
	}
	filepath.Walk(out, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(path, ".html") && !strings.HasSuffix(path, ".csv") {
			return err
		}
		data, _ := os.ReadFile(path)
		for _, m := range onePlural.FindAllString(string(data), -1) {
			t.Errorf("%s: %q", path, m)
		}
		return nil
	})
}

// TestDoneLine: the run's last line counts its cells and prefill rows done
// (a failed one apart) and, with -repeat, its decode repeats made of cells
// × repeats; a cell over capacity once stands for all its repeats.
func TestDoneLine(t *testing.T) {
	valid := matrixgen.Decode{Status: matrixgen.StatusValid, TotalTokS: new(1.0)}
	failed := matrixgen.Decode{Status: matrixgen.StatusError, Reason: "x"}
	full, part, over := matrixgen.Decode{}, matrixgen.Decode{}, matrixgen.Decode{}
	for range 3 {
		full.AddRepeat(valid)
	}
	part.AddRepeat(valid)
	part.AddRepeat(failed)
	over.AddRepeat(matrixgen.Decode{Status: matrixgen.StatusOverCapacity, Reason: "x"})
	prefill := []matrixgen.Prefill{{Status: matrixgen.StatusValid}, {Status: matrixgen.StatusError}, {Status: matrixgen.StatusNotRun}}
	for _, tt := range []struct {
		name string
		run  matrixgen.Run
		want string
	}{
		{"once", matrixgen.Run{Prefill: prefill, Decode: []matrixgen.Decode{valid, failed, {Status: matrixgen.StatusNotRun}, valid}},
			"3 of 7 cells and prefill rows done, 2 failed"},
		{"repeated", matrixgen.Run{Sweep: matrixgen.Sweep{Repeats: 3}, Prefill: prefill[:1],
			Decode: []matrixgen.Decode{full, part, over, {Status: matrixgen.StatusNotRun}}},
			"3 of 5 cells and prefill rows done, 7 of 12 decode repeats made, 1 repeat failed"},
		{"one", matrixgen.Run{Decode: []matrixgen.Decode{valid}}, "1 of 1 cell and prefill row done"},
	} {
		if got := doneLine(&tt.run); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestResumeHintHidesSecrets: an interrupted run prints the command that
// continues it, with the -set overrides of the server; one that carried
// a password or a token printed it. A value is hidden whole where a key
// on its path or inside it says secret, or the redaction step finds one.
func TestResumeHintHidesSecrets(t *testing.T) {
	for _, o := range []string{
		`server.extra.password="#Tr0ub4dor&3"`, `server.extra.api_key=LEAKLEAK`, `server.extra.note="sk-proj-Zx9QwErTy7UiOp3AsDfGhJkL0"`,
		`server.extra={password = "LEAKLEAK"}`, `server.extra={auth = {basic = "LEAKLEAK"}}`, `server.chat_template_kwargs={"api_key" = "LEAKLEAK"}`,
		`server.extra.Authorization="Bearer LEAKLEAK"`,
	} {
		got := resumeHint("runs/r.json", []string{"-set", hintOverride(o)})
		if strings.Contains(got, "LEAK") || strings.Contains(got, "Tr0ub4dor") || strings.Contains(got, "Zx9Q") || !strings.Contains(got, "<redacted>") {
			t.Errorf("%s: hint %s", o, got)
		}
	}
	for _, o := range []string{`server.temperature=0.6`, `server.extra={repetition_penalty = 1.1}`, `server.chat_template_kwargs={enable_thinking = false}`} {
		if got := hintOverride(o); got != o {
			t.Errorf("%s became %s", o, got)
		}
	}
}

// TestResumeHintHidesURLPassword: the hint's -base-url kept a password
// in the URL's user information (found by an attacker).
func TestResumeHintHidesURLPassword(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.String("base-url", "", "")
	fs.String("config", "", "")
	if err := fs.Parse([]string{"-base-url", "http://bot:hunter2hunter2@127.0.0.1:8000/v1?token=tok3ntok3n", "-config", "lab.toml"}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(serverFlags(fs), " ")
	if strings.Contains(got, "hunter2") || strings.Contains(got, "tok3n") || !strings.Contains(got, "127.0.0.1:8000") || !strings.Contains(got, "-config=lab.toml") {
		t.Errorf("hint flags %s", got)
	}
}

// TestErrorsNeverPrintSecrets: every command's errors pass one printer
// that hides secrets; a -set override that named no known key was
// quoted back whole, its password with it.
func TestErrorsNeverPrintSecrets(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-base-url", "http://127.0.0.1:1", "-set", "server.api_key=hunter2hunter2"},
		{"run", "-base-url", "http://127.0.0.1:1", "-set", "sweep.password=hunter2hunter2"},
		{"build", "-runs", "s3://bot:hunter2hunter2@bucket/runs/"},
		{"compare", "-runs", "https://h/x?token=hunter2hunter2", "a", "b"},
	} {
		var stdout, stderr strings.Builder
		code := run(args, &stdout, &stderr)
		if code == 0 || strings.Contains(stderr.String()+stdout.String(), "hunter2") {
			t.Errorf("%q: exit %d, printed:\n%s%s", args, code, stdout.String(), stderr.String())
		}
	}
}
