package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/hostile"
	"github.com/matrixgen/matrixgen/measure"
	"github.com/matrixgen/matrixgen/runfile"

	openai "github.com/sashabaranov/go-openai"
)

// What a server sends cannot make a stream keep more than its request's
// budget of tokens, more than one token event a millisecond, or any line
// without data: each attacked here with many generated inputs.

// serveInMemory serves h over in-memory connections; call it inside a
// synctest bubble. At the end the server closes, and its handlers get an
// hour of the bubble's time to see their clients gone.
func serveInMemory(t *testing.T, h http.Handler) (string, dialFunc) {
	t.Helper()
	ln := newMemListener()
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); time.Sleep(time.Hour) })
	return "http://hostile.test", ln.dial
}

// TestTokenEventsBounded feeds streams of every chunk size and speed to
// the client's reading of chunks: a stream never keeps more tokens than
// its budget (one past it is an error), never more than one event a
// millisecond however fast the chunks come, loses no token, and where
// chunks come a millisecond apart or more (every real server) keeps each
// as it came, so every figure of package measure is what it was.
func TestTokenEventsBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gaps := []time.Duration{0, time.Nanosecond, 10 * time.Microsecond, 300 * time.Microsecond, 999 * time.Microsecond,
		time.Millisecond, 1500 * time.Microsecond, 7 * time.Millisecond, 31 * time.Millisecond}
	for trial := range 400 {
		gap := gaps[trial%len(gaps)]
		perChunk := 1 + rng.IntN(4)
		maxTokens := 1 + rng.IntN(3000)
		chunks := rng.IntN(maxTokens/perChunk + 2*matrixgen.RequestTokenSlack)
		jitter := time.Duration(0)
		if gap >= time.Millisecond {
			jitter = time.Duration(rng.Int64N(int64(gap / 2)))
		}
		obs := newObservation(chatRequest{maxTokens: maxTokens}, matrixgen.TokensChunks)
		var raw []measure.Event
		at := t0
		var err error
		for i := range chunks {
			at = at.Add(gap + jitter*time.Duration(i%2))
			ch := wireChunk{Usage: &openai.Usage{PromptTokens: 3, CompletionTokens: (i + 1) * perChunk}, Choices: make([]wireChoice, 1)}
			ch.Choices[0].Delta.Content = strings.Repeat("x", perChunk)
			if err = obs.read(&ch, at, hooks{}); err != nil {
				break
			}
			raw = append(raw, measure.Event{At: at, Tokens: perChunk})
		}
		name := fmt.Sprintf("trial %d: %d chunks of %d tokens %v apart, max_tokens %d", trial, chunks, perChunk, gap, maxTokens)
		budget := matrixgen.TokenBudget(1, maxTokens)
		if sent := chunks * perChunk; sent > budget {
			if err == nil || !strings.Contains(err.Error(), "more than") {
				t.Fatalf("%s: %d tokens past a budget of %d, error %v", name, sent, budget, err)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if obs.tokens() > budget || obs.tokens() != len(raw)*perChunk {
			t.Fatalf("%s: kept %d tokens, took %d, budget %d", name, obs.tokens(), len(raw)*perChunk, budget)
		}
		if len(raw) > 0 {
			if span := raw[len(raw)-1].At.Sub(raw[0].At); len(obs.events) > int(span/time.Millisecond)+1 {
				t.Fatalf("%s: %d events over %v", name, len(obs.events), span)
			}
		}
		if gap >= time.Millisecond {
			if len(obs.events) != len(raw) {
				t.Fatalf("%s: %d events of %d chunks a millisecond or more apart", name, len(obs.events), len(raw))
			}
			sameFigures(t, name, obs, raw, t0)
		}
	}
}

// sameFigures holds the window figures of what a stream kept to those of
// every chunk as it came, over windows at generated places.
func sameFigures(t *testing.T, name string, obs *observation, raw []measure.Event, t0 time.Time) {
	t.Helper()
	if len(raw) == 0 {
		return
	}
	end := raw[len(raw)-1].At
	for _, w := range [][2]time.Time{{t0, end.Add(time.Nanosecond)}, {raw[len(raw)/3].At, end}, {raw[len(raw)/2].At.Add(-time.Microsecond), end.Add(time.Second)}} {
		kept := obs.asStream()
		kept.Sent = t0
		all := kept
		all.Events = raw
		got, want := measure.Window([]measure.Stream{kept}, w[0], w[1]), measure.Window([]measure.Stream{all}, w[0], w[1])
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: window %v–%v: %+v, every chunk gives %+v", name, w[0].Sub(t0), w[1].Sub(t0), got, want)
		}
	}
}

// TestTinyChunkFlood: a server streaming one-token chunks without end once
// made a single stream hold 820 MB and wrote 10 million tokens as a valid
// cell. Every decode request now fails at its budget, and the cell says so.
func TestTinyChunkFlood(t *testing.T) {
	for _, maxOutput := range []int{41, 512, 4096} {
		t.Run(fmt.Sprint(maxOutput), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hs := &hostile.Server{Attack: hostile.TinyChunkFlood, Deadline: time.Minute}
				url, dial := serveInMemory(t, hs)
				settings := testSettings(url, []string{"1K"}, []int{1, 4}, time.Second)
				settings.Sweep.KVCacheTokens = 1 << 20
				settings.Sweep.MaxOutput = maxOutput
				var log strings.Builder
				run, err := Run(context.Background(), Options{Settings: settings, File: filepath.Join(t.TempDir(), "r.json"), Log: &log, dial: dial})
				if err != nil {
					t.Fatalf("%v\n%s", err, log.String())
				}
				// (The flood answers requests of more than 40 tokens.)
				want := fmt.Sprintf("more than %d tokens for a request of max_tokens %d", maxOutput+matrixgen.RequestTokenSlack, maxOutput)
				for _, d := range run.Decode {
					if d.Status != matrixgen.StatusError || !strings.Contains(d.Reason, want) {
						t.Errorf("1K × %d: %s (%s), want an error with %q", d.Concurrency, d.Status, d.Reason, want)
					}
					if d.OutputTokens != nil && *d.OutputTokens > matrixgen.TokenBudget(*d.Completed+d.Concurrency, maxOutput) {
						t.Errorf("1K × %d: %d tokens saved", d.Concurrency, *d.OutputTokens)
					}
				}
				// Each stream read past its budget by a batch of the server's
				// writes at most: far below what the flood would send.
				if limit := int64(5 * 200 * (maxOutput + 64 + 2000)); hs.Written() > limit {
					t.Errorf("the server wrote %d bytes, more than %d", hs.Written(), limit)
				}
			})
		})
	}
}

// TestNonDataLinesAreNotHeld: lines that carry no data (event:, id:,
// retry:, comments, fields no one knows) of up to a megabyte, on 128
// streams, once took 906 MB, each held whole twice. Whatever their kind,
// length and place, reading a stream that has them allocates no more
// than the same stream without them, give or take the reader's buffer;
// past a megabyte of them in a row the stream fails, saying so.
func TestNonDataLinesAreNotHeld(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	kinds := []string{": ", "event: ", "id: ", "retry: ", "x-unknown: ", "datum: ", "dat", "   event: "}
	baseline := allocated(t, goodSSE)
	for trial := range 24 {
		kind := kinds[trial%len(kinds)]
		size := 1 + rng.IntN(maxNoData-200)
		if trial%6 == 5 {
			size = maxNoData + rng.IntN(8<<20) // past the bound
		}
		line := kind + strings.Repeat("x", size) + "\n"
		cut := strings.Index(goodSSE, "data: {\"choices\":[{\"delta\":{\"content\":\"a b\"")
		if trial%2 == 1 {
			cut = 0
		}
		body := goodSSE[:cut] + line + goodSSE[cut:]
		name := fmt.Sprintf("trial %d: a %q line of %d bytes at byte %d", trial, kind, len(line), cut)
		obs := streamBody(t, body)
		if size > maxNoData-200 {
			if obs.err == nil || !strings.Contains(obs.err.Error(), "without data") {
				t.Errorf("%s: %v, want the bound's error", name, obs.err)
			}
		} else if !obs.complete() || obs.tokens() != 3 {
			t.Errorf("%s: complete %v (%v), %d tokens", name, obs.complete(), obs.err, obs.tokens())
		}
		if extra := allocated(t, body) - baseline; extra > 2*sseBuffer {
			t.Errorf("%s: reading it allocated %d bytes more than without it", name, extra)
		}
	}
}

// allocated is how many bytes reading one stream of body allocates, the
// least of three reads.
func allocated(t *testing.T, body string) int64 {
	least := int64(-1)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		streamBody(t, body)
		runtime.ReadMemStats(&after)
		if n := int64(after.TotalAlloc - before.TotalAlloc); least < 0 || n < least {
			least = n
		}
	}
	return least
}

// TestDataLineBound: a data line is held up to maxSSELine and no further,
// however the server cuts it into writes.
func TestDataLineBound(t *testing.T) {
	for _, size := range []int{maxSSELine - 200, maxSSELine + 1, 3 * maxSSELine} {
		payload := strings.Repeat("a", size)
		body := "data: {\"choices\":[{\"delta\":{\"content\":\"" + payload + "\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
		obs := streamThrough(bodyTransport{open: func() io.Reader {
			return io.MultiReader(strings.NewReader(body[:size/3]), strings.NewReader(body[size/3:]))
		}}, 1<<20)
		tooLong := obs.err != nil && strings.Contains(obs.err.Error(), "data line is longer than")
		if tooLong != (size > maxSSELine-200) {
			t.Errorf("a data line of %d bytes: %v", size, obs.err)
		}
	}
}

// TestSettingsCheckedBeforeAnyRequest: `-duration -5s` wrote a valid cell
// of 0 tok/s. Settings no sweep can run with are refused before the first
// request, naming the config key.
func TestSettingsCheckedBeforeAnyRequest(t *testing.T) {
	for _, tt := range []struct {
		key   string
		tweak func(*Settings)
	}{
		{"sweep.duration", func(s *Settings) { s.Sweep.Duration = -5 * time.Second }},
		{"sweep.duration", func(s *Settings) { s.Sweep.Duration = -time.Nanosecond }},
		{"sweep.warmup_timeout", func(s *Settings) { s.Sweep.WarmupTimeout = -time.Second }},
		{"sweep.stall_timeout", func(s *Settings) { s.Sweep.StallTimeout = -time.Minute }},
		{"sweep.server_wait", func(s *Settings) { s.Sweep.ServerWait = -1 }},
		{"sweep.idle_timeout", func(s *Settings) { s.Sweep.IdleTimeout = -1 }},
		{"sweep.max_output", func(s *Settings) { s.Sweep.MaxOutput = -1 }},
		{"sweep.kv_cache_tokens", func(s *Settings) { s.Sweep.KVCacheTokens = -4 }},
		{"sweep.concurrency", func(s *Settings) { s.Sweep.Concurrency = []int{1, 0} }},
		{"sweep.concurrency", func(s *Settings) { s.Sweep.Concurrency = []int{-3} }},
		{"sweep.concurrency", func(s *Settings) { s.Sweep.Concurrency = []int{maxConcurrency + 1} }},
		{"sweep.prefill_repeats", func(s *Settings) { s.Sweep.PrefillRepeats = -1 }},
		{"sweep.loop_retries", func(s *Settings) { s.Sweep.LoopRetries = new(-1) }},
		{"sweep.cache_mode", func(s *Settings) { s.Sweep.CacheMode = "mixed" }},
		{"server.base_url", func(s *Settings) { s.Server.BaseURL = "ftp://127.0.0.1:8000" }},
		{"server.base_url", func(s *Settings) { s.Server.BaseURL = "127.0.0.1:8000" }},
		{"server.extra", func(s *Settings) { s.Server.Extra = map[string]any{"max_tokens": 5, "top_k": 20} }},
		{"server.extra", func(s *Settings) { s.Server.Extra = map[string]any{"stream": false} }},
		{"server.extra", func(s *Settings) { s.Server.Extra = map[string]any{"penalty": math.NaN()} }}, // TOML's nan
		{"server.chat_template_kwargs", func(s *Settings) { s.Server.ChatTemplateKwargs = map[string]any{"x": math.Inf(1)} }},
		{"server.temperature", func(s *Settings) { s.Server.Temperature = new(math.NaN()) }}, // TOML's nan
		{"server.temperature", func(s *Settings) { s.Server.Temperature = new(math.Inf(1)) }},
		{"server.temperature", func(s *Settings) { s.Server.Temperature = new(-0.5) }},
		{"describe", func(s *Settings) { s.Describe.VRAMGB = 1e308 }}, // past what a run file holds
		{"describe", func(s *Settings) { s.Describe.VRAMGB = math.NaN() }},
	} {
		var requests atomic.Int64
		ts := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) })
		synctest.Test(t, func(t *testing.T) {
			url, dial := serveInMemory(t, ts)
			s := testSettings(url, []string{"1K"}, []int{1}, time.Second)
			tt.tweak(&s)
			_, err := Run(context.Background(), Options{Settings: s, File: filepath.Join(t.TempDir(), "r.json"), Log: io.Discard, dial: dial})
			var setting *SettingError
			if !errors.As(err, &setting) || setting.Key != tt.key {
				t.Errorf("want a setting error for %s, got %v", tt.key, err)
			}
			if n := requests.Load(); n > 0 {
				t.Errorf("%s: %d requests sent before the refusal", tt.key, n)
			}
		})
	}
	good := testSettings("http://127.0.0.1:8000", []string{"1K"}, []int{1, 100000}, time.Nanosecond)
	good.defaults()
	if err := good.Check(); err != nil {
		t.Errorf("settings that can run: %v", err)
	}
}

// TestImpossibleFiguresAreErrors: a cell of more tokens than its requests
// could yield, or no token at all, is an error with the reason and no
// figures; power past what its GPUs can draw costs only its power figures.
// Generated at the bounds' edges.
func TestImpossibleFiguresAreErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	for trial := range 300 {
		cc, completed, maxOut := 1+rng.IntN(128), rng.IntN(400), 1+rng.IntN(8192)
		gpus := rng.IntN(9)
		budget := matrixgen.TokenBudget(completed+cc, maxOut)
		over := trial%2 == 1
		tokens := budget - rng.IntN(budget)
		if over {
			tokens = budget + 1 + rng.IntN(budget)
		}
		watts := float64(max(gpus, 1)) * matrixgen.MaxBoardPowerW * rng.Float64()
		powerOver := trial%3 == 2
		if powerOver {
			watts = float64(max(gpus, 1))*matrixgen.MaxBoardPowerW + 1 + rng.Float64()*1e300
		}
		window := 1 + rng.Float64()*60
		d := matrixgen.Decode{ContextTokens: 1024, Concurrency: cc, Status: matrixgen.StatusValid, Attempts: 1,
			TotalTokS: new(float64(tokens) / window), OutputTokens: &tokens, Completed: &completed, WindowSeconds: &window,
			Power: &matrixgen.Power{MeanPowerW: watts, EnergyJoules: watts * window}}
		name := fmt.Sprintf("trial %d: %d tokens of %d × (%d + slack), %g W on %d GPUs", trial, tokens, completed+cc, maxOut, watts, gpus)
		checkFigures(&d, maxOut, gpus, 0)
		switch {
		case over && (d.Status != matrixgen.StatusError || !strings.Contains(d.Reason, "output_tokens") || d.Measured()):
			t.Errorf("%s: %s (%s), measured %v", name, d.Status, d.Reason, d.Measured())
		case !over && d.Status != matrixgen.StatusValid:
			t.Errorf("%s: %s (%s)", name, d.Status, d.Reason)
		case !over && powerOver && (d.Power != nil || !strings.Contains(d.PowerMissing, "power.mean_power_w")):
			t.Errorf("%s: power %+v, missing %q", name, d.Power, d.PowerMissing)
		case !over && !powerOver && d.Power == nil:
			t.Errorf("%s: power dropped: %s", name, d.PowerMissing)
		}
		if ps := d.Problems(maxOut, gpus, 0); len(ps) > 0 {
			t.Errorf("%s: the checked cell still fails validation: %v", name, ps)
		}
	}
	// A server's own count is a count a run file bounds (a trillion): past
	// it, validate and build would refuse the run file.
	tokens, completed, window := 100, 1, 10.0
	d := matrixgen.Decode{Concurrency: 1, Status: matrixgen.StatusValid, Attempts: 1, TotalTokS: new(10.0),
		OutputTokens: &tokens, Completed: &completed, WindowSeconds: &window,
		ServerCount: &matrixgen.ServerCount{ServerTokens: math.MaxInt, ClientTokens: 100, Source: "vllm:generation_tokens_total"}}
	if checkFigures(&d, 4096, 0, 0); math.MaxInt > 1e12 && (d.Status != matrixgen.StatusError || !strings.Contains(d.Reason, "server_count.server_tokens")) {
		t.Errorf("a server's count of %d tokens: %s (%s)", math.MaxInt, d.Status, d.Reason)
	}
	zero, window := 0, 0.001
	d = matrixgen.Decode{Concurrency: 1, Status: matrixgen.StatusValid, TotalTokS: new(0.0), OutputTokens: &zero, WindowSeconds: &window}
	if checkFigures(&d, 4096, 0, 0); d.Status != matrixgen.StatusError || !strings.Contains(d.Reason, "no token arrived") {
		t.Errorf("a window without a token: %s (%s)", d.Status, d.Reason)
	}
}

// TestResumeRefusesAnotherAddress: `run -resume` against another server
// that serves a model of the same name, from the same engine and version,
// once continued without a word. The address is kept in the run, without
// its user information or query, and a resume elsewhere is refused unless
// forced.
func TestResumeRefusesAnotherAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file, _ := interruptedRun(t, testSettings("http://user:secret@sim.test", []string{"1K"}, []int{1, 2}, time.Second))
		e, err := runfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if p := e.Run.Probe; p == nil || p.BaseURL != "http://sim.test" {
			t.Fatalf("the run keeps the probe %+v", p)
		}
		_, _, dial2 := startMemSim(t, testProfile()) // the same engine, version and model
		other := testSettings("http://other.test:8000", []string{"1K"}, []int{1, 2}, time.Second)
		_, err = Run(context.Background(), Options{Settings: other, File: file, Resume: true, Log: io.Discard, dial: dial2})
		if err == nil || !strings.Contains(err.Error(), "server address: http://sim.test then, http://other.test:8000 now") {
			t.Fatalf("resumed against another address: %v", err)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("the refusal shows the URL's secrets: %v", err)
		}
		run, err := Run(context.Background(), Options{Settings: other, File: file, Resume: true, Force: true, Log: io.Discard, dial: dial2})
		if err != nil || len(run.ResumedDespite) != 1 {
			t.Fatalf("forced: %v, recorded %q", err, run.ResumedDespite)
		}
		same := testSettings("http://SIM.test/", []string{"1K"}, []int{1, 2}, time.Second)
		if _, err := resumeRun(file, &matrixgen.Run{Probe: &matrixgen.Probe{BaseURL: serverAddress(same.Server.BaseURL)}}, false); err != nil && strings.Contains(err.Error(), "server address") {
			t.Errorf("the same address spelled otherwise is another: %v", err)
		}
	})
}

// TestServerAddress: the address a run keeps is the server's, without
// what a URL may carry beside it (a password, a token in the query).
func TestServerAddress(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8000":                      "http://127.0.0.1:8000",
		"http://127.0.0.1:8000/":                     "http://127.0.0.1:8000",
		"HTTP://Box.LAN:8000/v1/":                    "http://box.lan:8000",
		"https://user:p%40ss@api.example/?key=k#top": "https://api.example",
		"https://tok@api.example/base?":              "https://api.example/base",
		"not a url":                                  "",
	} {
		if got := serverAddress(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestServerInfoIsBounded: what a server says of itself is read up to
// maxJSONInfo (a 32 MB list of empty models decoded to 2 GB).
func TestServerInfoIsBounded(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"data":[`+strings.Repeat("{},", maxJSONInfo/3)+`{"id":"m"}]}`)
	}))
	defer ts.Close()
	c := newClient(ts.URL, "", 1, nil)
	var models struct{ Data []struct{ ID string } }
	if err := c.getJSON(context.Background(), "/v1/models", &models); err == nil || !strings.Contains(err.Error(), strconv.Itoa(maxJSONInfo)) && !strings.Contains(err.Error(), byteSize(maxJSONInfo)) {
		t.Errorf("a %d-byte /v1/models: %v", maxJSONInfo, err)
	}
}

// TestResumeComparesTheMachine: `run -resume` compared the server but not
// the GPUs it ran on, and gave a run file from before addresses were kept
// the new address as if it had been measured there. A resume on other
// GPUs, or of a run that cannot say where it was measured, is refused
// with each difference listed and the flag that overrides named; the
// refused file is left as it was, and a forced resume records the
// differences without rewriting the address the run was measured at.
func TestResumeComparesTheMachine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		settings := testSettings("http://sim.test", []string{"1K"}, []int{1, 2}, time.Second)
		file, dial := interruptedRun(t, settings)
		e, err := runfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name  string
			edit  func(r *matrixgen.Run)
			diffs []string
		}{
			{"another GPU", func(r *matrixgen.Run) { r.Hardware.GPU, r.Hardware.GPUCount = "NVIDIA H100 80GB HBM3", 1 },
				[]string{"GPU: NVIDIA H100 80GB HBM3 then, none detected now", "GPU count: 1 then, 0 now"}},
			{"more GPUs", func(r *matrixgen.Run) { r.Hardware.GPUCount = 4 },
				[]string{"GPU count: 4 then, 0 now"}},
			{"no address kept", func(r *matrixgen.Run) { r.Probe.BaseURL = "" },
				[]string{"server address: not recorded then, http://sim.test now"}},
			{"all of them", func(r *matrixgen.Run) {
				r.Probe.BaseURL, r.Probe.Engine, r.Probe.EngineVersion = "", "sglang", "0.4"
				r.Hardware.GPU, r.Hardware.GPUCount = "AMD Instinct MI300X", 8
			}, []string{"server address: not recorded then", "engine: sglang then", "engine version: 0.4 then",
				"GPU: AMD Instinct MI300X then", "GPU count: 8 then"}},
		} {
			old := *e.Run
			probe := *old.Probe
			old.Probe = &probe
			c.edit(&old)
			if err := runfile.Save(file, &old); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(file)
			_, err := Run(context.Background(), Options{Settings: settings, File: file, Resume: true, Log: io.Discard, dial: dial})
			if err == nil {
				t.Fatalf("%s: resumed", c.name)
			}
			for _, d := range c.diffs {
				if !strings.Contains(err.Error(), d) {
					t.Errorf("%s: the refusal does not say %q:\n%v", c.name, d, err)
				}
			}
			if !strings.Contains(err.Error(), "-force") {
				t.Errorf("%s: the refusal does not name the flag that overrides it:\n%v", c.name, err)
			}
			if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
				t.Errorf("%s: a refused resume changed the file", c.name)
			}
			run, err := Run(context.Background(), Options{Settings: settings, File: file, Resume: true, Force: true, Log: io.Discard, dial: dial})
			if err != nil {
				t.Fatalf("%s: forced: %v", c.name, err)
			}
			if len(run.ResumedDespite) != len(c.diffs) {
				t.Errorf("%s: forced, recorded %q", c.name, run.ResumedDespite)
			}
			if run.Probe.BaseURL != old.Probe.BaseURL {
				t.Errorf("%s: forced, the address the run was measured at became %q", c.name, run.Probe.BaseURL)
			}
		}
	})
}

// interruptedRun runs settings' sweep against the sim in memory until its
// first decode cell is measured, then interrupts it (in a synctest
// bubble), and gives the run file and the sim's dialer.
func interruptedRun(t *testing.T, settings Settings) (string, dialFunc) {
	t.Helper()
	_, _, dial := startMemSim(t, testProfile())
	file := filepath.Join(t.TempDir(), "run.json")
	ctx, cancel := context.WithCancel(context.Background())
	log := &cancelAfter{marker: "decode 1K × 1", cancel: cancel}
	if _, err := Run(ctx, Options{Settings: settings, File: file, Log: log, dial: dial}); err == nil {
		t.Fatal("the interrupted sweep did not stop")
	}
	return file, dial
}

// TestIdleWaitStopsForAServerGone: a server that refuses connections is
// not busy: the idle wait ran its whole two minutes, then said the server
// "still looked busy". It stops at once, and the cell's requests find the
// server gone.
func TestIdleWaitStopsForAServerGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var said []string
		sw := &sweeper{s: Settings{Sweep: Sweep{IdleTimeout: 2 * time.Minute}},
			idle: &ownIdle{name: "its /metrics", idle: func(context.Context, *client) (bool, error) {
				return false, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
			}},
			warnf: func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }}
		waited, err := sw.waitIdle(context.Background())
		if err != nil || waited == nil || *waited > 1 || len(said) != 1 || !strings.Contains(said[0], "did not answer its idle check") {
			t.Errorf("waited %v s, %v, said %q", waited, err, said)
		}
	})
}
