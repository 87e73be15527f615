package runner

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/hostile"
	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/sim"
)

// Attacks and accidents a run must survive, each reproduced here.

// TestCapacityCheckCannotOverflow: -max-output 9223372036854775000 once
// passed the capacity check, because C × (N + max output) wrapped around.
func TestCapacityCheckCannotOverflow(t *testing.T) {
	for _, tt := range []struct {
		maxLen, kv, maxOut, concurrency int
	}{
		{0, 1 << 20, math.MaxInt - 807, 4}, // the sum fits, the product wraps
		{0, 1 << 20, math.MaxInt, 1},       // the sum wraps
		{1 << 20, 0, math.MaxInt - 100, 1}, // past the model's length
		{0, 1 << 20, math.MaxInt / 2, 3},   // wraps to a small positive product
	} {
		sw := &sweeper{probe: &matrixgen.Probe{MaxModelLen: tt.maxLen, KVCacheTokens: tt.kv}}
		sw.s.Sweep.MaxOutput = tt.maxOut
		if reason := sw.overCapacity(1024, tt.concurrency); reason == "" {
			t.Errorf("max output %d × %d streams: the cell passes the capacity check", tt.maxOut, tt.concurrency)
		}
	}
	sw := &sweeper{probe: &matrixgen.Probe{MaxModelLen: 1 << 20, KVCacheTokens: 1 << 20}}
	sw.s.Sweep.MaxOutput = 1024
	if reason := sw.overCapacity(1024, 4); reason != "" {
		t.Errorf("a cell that fits is over capacity: %s", reason)
	}
}

// onLine calls f with the log so far whenever a line containing marker is
// written.
type onLine struct {
	marker string
	f      func()
	buf    bytes.Buffer
}

func (o *onLine) Write(p []byte) (int, error) {
	n, err := o.buf.Write(p)
	if strings.Contains(string(p), o.marker) {
		o.f()
	}
	return n, err
}

// TestKilledRunLooksIncomplete: a run killed mid-sweep left not_run cells
// but no "incomplete": true. The file says incomplete from its first save
// until its last measurement.
func TestKilledRunLooksIncomplete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		file := filepath.Join(t.TempDir(), "run.json")
		var seen []bool
		log := &onLine{marker: "decode 1K", f: func() {
			e, err := runfile.Load(file)
			if err != nil {
				t.Errorf("mid-sweep the file does not load: %v", err)
				return
			}
			seen = append(seen, e.Run.Incomplete)
		}}
		run, err := Run(context.Background(), Options{Settings: testSettings(url, []string{"1K"}, []int{1, 2}, time.Second), File: file, Log: log, dial: dial})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || !seen[0] || !seen[1] {
			t.Errorf("mid-sweep the file said incomplete: %v, want true at every cell", seen)
		}
		e, err := runfile.Load(file)
		if err != nil || run.Incomplete || e.Run.Incomplete {
			t.Errorf("the finished run says incomplete (%v)", err)
		}
	})
}

// hostileSweep runs a small sweep against a hostile server and returns the
// run (nil when the probe refused the server), the log and the error.
func hostileSweep(t *testing.T, attack hostile.Attack) (*matrixgen.Run, string, error, *hostile.Server) {
	t.Helper()
	hs := &hostile.Server{Attack: attack, Deadline: 20 * time.Second}
	ts := httptest.NewServer(hs)
	t.Cleanup(ts.Close)
	settings := testSettings(ts.URL, []string{"1K"}, []int{1}, time.Second)
	settings.Sweep.KVCacheTokens = 1 << 20
	settings.Sweep.StallTimeout = 3 * time.Second
	settings.Sweep.WarmupTimeout = 5 * time.Second
	file := filepath.Join(t.TempDir(), "run.json")
	var log bytes.Buffer
	run, err := Run(context.Background(), Options{Settings: settings, File: file, Log: &log})
	if run != nil {
		if _, lerr := runfile.Load(file); lerr != nil {
			t.Errorf("%s: the run file written does not validate: %v", attack, lerr)
		}
	}
	return run, log.String(), err, hs
}

// TestHostileServers: what a server sends cannot take the run's memory or
// time, nor put impossible figures in the file. Each attack's answer is
// far larger than what the runner reads of it; the server counts what it
// got to write before the runner stopped reading.
func TestHostileServers(t *testing.T) {
	const readCap = 200 << 20 // far above every limit, far below the attack
	for _, tt := range []struct {
		attack hostile.Attack
		want   string // in the error or a cell's reason
	}{
		{hostile.HugeError, "HTTP 500"},
		{hostile.LongSSELine, "longer than"},
		{hostile.KeepAliveFlood, "without data"},
		{hostile.EndlessMetrics, ""},
		{hostile.UsageJump, "impossible usage"},
		{hostile.UsageBackwards, "impossible usage"},
		{hostile.HugeVersion, ""},
	} {
		t.Run(string(tt.attack), func(t *testing.T) {
			run, log, err, hs := hostileSweep(t, tt.attack)
			if hs.Written() > readCap {
				t.Errorf("the runner read on: the server wrote %d MB", hs.Written()>>20)
			}
			text := log
			if err != nil {
				text += err.Error()
			}
			if run != nil {
				for _, d := range run.Decode {
					text += d.Reason
					if d.TotalTokS != nil && (*d.TotalTokS < 0 || *d.TotalTokS > 1e7) {
						t.Errorf("1K × %d: %g tok/s", d.Concurrency, *d.TotalTokS)
					}
					if d.OutputTokens != nil && *d.OutputTokens < 0 {
						t.Errorf("1K × %d: %d output tokens", d.Concurrency, *d.OutputTokens)
					}
				}
				if p := run.Probe; p != nil && len(p.EngineVersion) > 1000 {
					t.Errorf("an engine version of %d bytes kept", len(p.EngineVersion))
				}
			}
			if !strings.Contains(text, tt.want) {
				t.Errorf("want %q in what the run said:\n%s", tt.want, text)
			}
		})
	}
}

// TestSlowProbe: /v1/models trickling a byte a second once kept the run in
// its probe until Ctrl-C.
func TestSlowProbe(t *testing.T) {
	ts := httptest.NewServer(&hostile.Server{Attack: hostile.SlowModels, Deadline: 20 * time.Second})
	defer ts.Close()
	c := newClient(ts.URL, "", 1, nil)
	c.jsonTimeout = time.Second
	start := time.Now()
	_, err := c.probe(context.Background(), "")
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("probe of a trickling server: %v", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("the probe waited %v", waited)
	}
}

// TestKeyStaysWithItsServer: the API key was sent as a Bearer token to a
// metrics_url on another host. It goes to the server's own origin only.
func TestKeyStaysWithItsServer(t *testing.T) {
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer own.Close()
	c := newClient(own.URL, "sk-secret", 1, nil)
	c.metrics(context.Background(), other.URL+"/metrics")
	c.metrics(context.Background(), "")
	if len(got) != 2 || got[0] != "" || got[1] != "Bearer sk-secret" {
		t.Errorf("Authorization sent: %q; want none to the other host, the key to the server's own", got)
	}
}

// TestKeyDoesNotFollowARedirect: a server redirecting a request of its
// own (here /sim/timing, any GET alike) to another port of the same host
// does not get the key sent there; a redirect within its origin keeps it.
func TestKeyDoesNotFollowARedirect(t *testing.T) {
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, "other:"+r.Header.Get("Authorization"))
		fmt.Fprint(w, `{}`)
	}))
	defer other.Close()
	var own *httptest.Server
	own = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/sim/timing", http.StatusFound)
		case "/here":
			http.Redirect(w, r, own.URL+"/there", http.StatusFound)
		default:
			got = append(got, "own:"+r.Header.Get("Authorization"))
			fmt.Fprint(w, `{}`)
		}
	}))
	defer own.Close()
	c := newClient(own.URL, "sk-secret", 1, nil)
	var v map[string]any
	if err := c.getJSON(context.Background(), "/away", &v); err != nil {
		t.Fatal(err)
	}
	if err := c.getJSON(context.Background(), "/here", &v); err != nil {
		t.Fatal(err)
	}
	if want := []string{"other:", "own:Bearer sk-secret"}; !slices.Equal(got, want) {
		t.Errorf("Authorization sent: %q, want %q", got, want)
	}
}

// TestResumeRefusesAnotherServer: resuming a vLLM-sim run against a
// llama.cpp-flavoured sim with another model once completed without a
// word, five cells of eight from the other server. Resume lists every
// difference and refuses; -force resumes and records them.
func TestResumeRefusesAnotherServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		file := filepath.Join(t.TempDir(), "run.json")
		settings := testSettings(url, []string{"1K"}, []int{1, 2}, time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		log := &cancelAfter{marker: "decode 1K × 1", cancel: cancel}
		if _, err := Run(ctx, Options{Settings: settings, File: file, Log: log, dial: dial}); err == nil {
			t.Fatal("the interrupted sweep did not stop")
		}
		p := testProfile()
		p.Flavour, p.Model = sim.FlavourLlamaCpp, "other"
		_, url2, dial2 := startMemSim(t, p)
		settings2 := testSettings(url2, []string{"1K"}, []int{1, 2}, 2*time.Second)
		var out bytes.Buffer
		_, err := Run(context.Background(), Options{Settings: settings2, File: file, Resume: true, Log: &out, dial: dial2})
		if err == nil {
			t.Fatal("resumed against another server")
		}
		for _, want := range []string{"engine: vllm then, llama.cpp now", "model: sim then, other now", "window seconds: 1 then, 2 now"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal does not say %q:\n%v", want, err)
			}
		}
		run, err := Run(context.Background(), Options{Settings: settings2, File: file, Resume: true, Force: true, Log: &out, dial: dial2})
		if err != nil {
			t.Fatal(err)
		}
		if len(run.ResumedDespite) < 3 {
			t.Errorf("forced resume recorded %q", run.ResumedDespite)
		}
	})
}

// TestEchoedKeyIsNeverShown: a server that repeats the API key in its
// error bodies, in the probe or in a cell, around the lengths where the
// runner cuts such text, cannot put the key, or the piece of it a cut
// leaves, in the run's error, its log or its run file.
func TestEchoedKeyIsNeverShown(t *testing.T) {
	const key = "sk-live-0123456789abcdefghij"
	for _, attack := range []hostile.Attack{hostile.EchoKeyAtOnce, hostile.EchoKey} {
		t.Run(string(attack), func(t *testing.T) {
			ts := httptest.NewServer(&hostile.Server{Attack: attack, Deadline: 20 * time.Second})
			defer ts.Close()
			settings := testSettings(ts.URL, []string{"1K"}, []int{1}, time.Second)
			settings.Sweep.KVCacheTokens = 1 << 20
			file := filepath.Join(t.TempDir(), "run.json")
			var log bytes.Buffer
			run, err := Run(context.Background(), Options{Settings: settings, File: file, Log: &log, APIKey: key})
			said := log.String()
			if err != nil {
				said += err.Error()
			}
			if data, rerr := os.ReadFile(file); rerr == nil {
				said += string(data)
			}
			if !strings.Contains(said, "401") {
				t.Fatalf("the server's 401 was not reported:\n%s", said)
			}
			if attack == hostile.EchoKey && (run == nil || run.Prefill[0].Status != matrixgen.StatusError) {
				t.Fatalf("the cell did not fail on the 401: %v", err)
			}
			if i := strings.Index(said, key[:len(key)/2]); i >= 0 {
				t.Errorf("the key (or what a cut left of it) was shown: …%s…", said[max(0, i-80):min(len(said), i+80)])
			}
		})
	}
}

// TestRedactedBeforeCut: a server's reason of any length, with the key at
// every offset around where the run file cuts it: the key is hidden before
// the cut, so no piece of it is kept.
func TestRedactedBeforeCut(t *testing.T) {
	const key = "sk-live-0123456789abcdefghij"
	red := redact.New(key)
	for at := maxReasonText - 2*len(key); at < maxReasonText+len(key); at++ {
		r := &matrixgen.Run{Prefill: []matrixgen.Prefill{{Reason: strings.Repeat("e", at-1) + " " + key + " more"}}}
		cleanServerText(r, red)
		if got := r.Prefill[0].Reason; strings.Contains(got, key[:8]) {
			t.Fatalf("key at byte %d: kept as %q", at, got[max(0, len(got)-60):])
		}
	}
}

// TestWeakKeyRewritesNothing: with VLLM_API_KEY=vllm the engine's name
// became <redacted> and the repository github.com/<redacted>-project/…;
// with a one-letter key "matrixgen" became matri<redacted>gen. A key too
// short or too ordinary to be told from names is warned about, once, and
// hidden only where it stands as a secret; a URL's credentials leave the
// repository whatever the key.
func TestWeakKeyRewritesNothing(t *testing.T) {
	for _, key := range []string{"vllm", "x", "m", "1", "sim"} {
		t.Run(key, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, url, dial := startMemSim(t, testProfile())
				s := testSettings(url, []string{"1K"}, []int{1}, time.Second)
				s.Describe.Repository = "https://user:pa55@github.com/vllm-project/vllm"
				s.Describe.LaunchCommand = "VLLM_API_KEY=" + key + " vllm serve sim --api-key " + key + " # matrixgen x 1 m"
				var log bytes.Buffer
				file := filepath.Join(t.TempDir(), "run.json")
				run, err := Run(context.Background(), Options{Settings: s, File: file, Log: &log, APIKey: key, dial: dial})
				if err != nil {
					t.Fatal(err)
				}
				e, err := runfile.Load(file)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range []*matrixgen.Run{run, e.Run} {
					if r.Engine.Name != "vllm" || !strings.HasPrefix(r.Model.Name, "sim") || r.Engine.Repository != "https://github.com/vllm-project/vllm" {
						t.Errorf("engine %q, model %q, repository %q", r.Engine.Name, r.Model.Name, r.Engine.Repository)
					}
					if want := "VLLM_API_KEY=<redacted> vllm serve sim --api-key <redacted> # matrixgen x 1 m"; r.LaunchCommand != want {
						t.Errorf("launch command %q, want %q", r.LaunchCommand, want)
					}
				}
				if n := strings.Count(log.String(), "warning: the API key"); n != 1 {
					t.Errorf("warned %d times about the key:\n%s", n, log.String())
				}
				if strings.Contains(log.String(), "<redacted>") {
					t.Errorf("the log hid something:\n%s", log.String())
				}
			})
		})
	}
}

// TestOllamaLineIsBounded: Ollama's native stream is read a line at a time;
// a line that never ends is refused at maxOllamaLine, named in the cell's
// error, holding no more than about that much: the rest of what the
// server sends is never read.
func TestOllamaLineIsBounded(t *testing.T) {
	hs := &hostile.Server{Attack: hostile.EndlessNativeLine, Deadline: 20 * time.Second}
	ts := httptest.NewServer(hs)
	defer ts.Close()
	c := newClient(ts.URL, "", 1, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	req := chatRequest{prompt: "hi", maxTokens: 16}
	obs := ollamaEngine{}.stream(context.Background(), c, req, 10*time.Second, hooks{})
	runtime.ReadMemStats(&after)
	if obs.err == nil || !strings.Contains(obs.err.Error(), "longer than "+strconv.Itoa(maxOllamaLine)) {
		t.Errorf("an endless line: %v", obs.err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16*maxOllamaLine {
		t.Errorf("reading a line bounded at %d bytes allocated %d MB", maxOllamaLine, got>>20)
	}
}
