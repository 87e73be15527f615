package runner

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/sim"
)

// The tests in this file each reproduce, with the sim, something a real
// server did that the sim at first did not: each fails without the fix it
// names.

// TestClosedIdleConnections: llama-server closes keep-alive connections
// idle for 5 s; a request sent on one as it closes is lost unanswered. A
// whole sweep against the sim's llamacpp flavour, which loses requests that
// way (at 0.2 s here, so a short sweep meets it), keeps every cell. In a
// sweep most requests that meet a stale connection are GETs, which Go's
// transport sends again by itself; TestResendUnanswered is the POST, which
// it does not, and fails without the runner's fix.
func TestClosedIdleConnections(t *testing.T) {
	p := testProfile()
	p.Flavour = sim.FlavourLlamaCpp
	p.KV.MaxRunning = 4
	p.KV.CapacityTokens = 1 << 22
	p.Connections = sim.ConnectionProfile{IdleCloseSeconds: 0.2, MaxRequests: 100}
	s, url := startSim(t, p)
	run, _ := sweep(t, testSettings(url, []string{"1K"}, []int{1, 2, 4}, time.Second))
	if s.LostRequests() == 0 {
		t.Fatal("no request met a closed connection: the test proves nothing")
	}
	t.Logf("%d requests met a closed connection, %d of them POSTs", s.LostRequests(), s.LostPosts())
	for _, d := range run.Decode {
		if d.Status != matrixgen.StatusValid {
			t.Errorf("1K × %d: %s (%s)", d.Concurrency, d.Status, d.Reason)
		}
	}
}

// TestResendUnanswered sends requests on one keep-alive connection with a
// pause between them longer than the server keeps idle connections: the
// GET Go's transport sends again by itself, the POST the runner does (with
// Go's transport alone it fails with EOF, as the real llama-server's did).
func TestResendUnanswered(t *testing.T) {
	p := testProfile()
	p.Connections = sim.ConnectionProfile{IdleCloseSeconds: 0.05}
	s, url := startSim(t, p)
	c := newClient(url, "", 1, nil)
	var models struct{ Data []any }
	for i := range 2 {
		if err := c.getJSON(context.Background(), "/v1/models", &models); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.postJSON(context.Background(), "/tokenize", map[string]any{"prompt": "hello"}, &struct{}{}); err != nil {
		t.Fatalf("POST after an idle pause: %v", err)
	}
	if s.LostRequests() != 2 {
		t.Errorf("%d requests met a closed connection, want 2", s.LostRequests())
	}
}

// TestPrefillIsCold: Ollama's prompt cache made a 1K prefill 26,959 tok/s
// on two cores, because the requests that calibrated the prompt's length
// had sent the same prompt first. A server without cache_salt shares its
// prefix cache among all requests; the scout's prompt must still be one
// whose first tokens it has never seen.
func TestPrefillIsCold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Flavour = sim.FlavourOpenAI // no tokenize: prompts are calibrated by sending them
		s, url, dial := startMemSim(t, p)
		run, _ := sweepWith(t, testSettings(url, []string{"2K"}, []int{1}, 500*time.Millisecond), dial)
		row := run.Prefill[0]
		if row.Status != matrixgen.StatusValid {
			t.Fatalf("prefill 2K: %s (%s)", row.Status, row.Reason)
		}
		// The scout is the last request of exactly the context's length (the
		// decode cell's carry a suffix).
		var scout *sim.RequestTrace
		for _, rt := range s.Trace() {
			if rt.PromptTokens == row.PromptTokens {
				scout = &rt
			}
		}
		if scout == nil {
			t.Fatal("no scout request in the trace")
		}
		if scout.CachedTokens != 0 {
			t.Errorf("the scout found %d of its %d prompt tokens in the server's cache: its prefill figure is a warm one", scout.CachedTokens, scout.PromptTokens)
		}
	})
}

// TestPromptOneTokenShort: with Ollama's small vocabulary the calibration
// landed on 1023 tokens for 1K, and the scout then called its own prompt
// cut, comparing the server's count with the target instead of with the
// prompt it built. A prompt one token short is measured, and says so.
func TestPromptOneTokenShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Flavour = sim.FlavourOpenAI
		p.WordTokens = 2 // every prompt has an odd length: 1024 cannot be reached
		_, url, dial := startMemSim(t, p)
		run, _ := sweepWith(t, testSettings(url, []string{"1K"}, []int{1}, 500*time.Millisecond), dial)
		row := run.Prefill[0]
		if row.Status != matrixgen.StatusValid || row.PromptTokens != 1023 || !strings.Contains(row.Note, "1023 tokens, not 1024") {
			t.Errorf("prefill 1K: %s, %d prompt tokens, reason %q, note %q", row.Status, row.PromptTokens, row.Reason, row.Note)
		}
		if d := run.Decode[0]; d.Status != matrixgen.StatusValid {
			t.Errorf("1K × 1: %s (%s)", d.Status, d.Reason)
		}
	})
}

// TestOneStreamDoesNotQueue: against Ollama, 1K × 1 was "Requests queued:
// only 0.9 of 1 streams were producing", because each new request's time
// to first token left the one stream idle a tenth of the time. Queued
// means the server held requests back; a server with one slot and two
// streams does, and is still caught without metrics.
func TestOneStreamDoesNotQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Flavour = sim.FlavourOpenAI // no metrics: activity is all there is
		p.KV.MaxRunning = 1
		_, url, dial := startMemSim(t, p)
		settings := testSettings(url, []string{"1K"}, []int{1, 2}, 2*time.Second)
		settings.Sweep.MaxOutput = 48 // 0.5 s answers after 0.25 s to the first token
		run, _ := sweepWith(t, settings, dial)
		one, two := run.Decode[0], run.Decode[1]
		if one.Status != matrixgen.StatusValid {
			t.Errorf("1K × 1: %s (%s), active %.2f", one.Status, one.Reason, *one.AvgActive)
		}
		if two.Status != matrixgen.StatusQueued {
			t.Errorf("1K × 2 on one slot: %s (%s)", two.Status, two.Reason)
		}
	})
}

// TestServerIdleBeforeMeasuring: after a cell that matrixgen cut off, a
// server that goes on with the abandoned requests ran a request sent right
// after at a fifth of its speed. The runner waits for the server to be idle
// first, by the best signal it has, and records the wait. The sim's Ollama
// does as Ollama does (it drops a request cut after its first token), the
// others go on to the requests' ends.
func TestServerIdleBeforeMeasuring(t *testing.T) {
	for _, flavour := range []string{sim.FlavourOllama, sim.FlavourOpenAI, sim.FlavourVLLM} {
		t.Run(flavour, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := testProfile()
				p.Flavour = flavour
				p.FinishAbandoned = flavour != sim.FlavourOllama
				p.Decode.PerSeqMs = 5 // each stream in the batch slows every other
				p.Prefill.RequestOverheadMs = 20
				_, url, dial := startMemSim(t, p)
				settings := testSettings(url, []string{"1K", "2K"}, []int{1, 4}, time.Second)
				settings.Sweep.MaxOutput = 150 // the cut streams run on for about 3 s
				settings.Sweep.Concurrency = []int{1, 4}
				run, _ := sweepWith(t, settings, dial)
				idleRate := 1000 / (p.Decode.BaseMs + p.Decode.PerSeqMs) // one stream alone
				pre2K := run.Prefill[1]
				if p.FinishAbandoned && (pre2K.IdleWaitSeconds == nil || *pre2K.IdleWaitSeconds < 0.5) {
					t.Errorf("prefill 2K after the cut 1K × 4 cell waited %s s, want the abandoned streams' time", show(pre2K.IdleWaitSeconds))
				}
				d, _ := run.Cell(2048, 1)
				if d.Status != matrixgen.StatusValid || d.PerRequestTokS == nil || !within(*d.PerRequestTokS, idleRate, 0.1) {
					t.Errorf("2K × 1: %s, %s tok/s per request; alone the sim runs %.1f", d.Status, show(d.PerRequestTokS), idleRate)
				}
			})
		})
	}
}

// TestIdleAfterPromptsCut: against a real Ollama, before the last cell of
// a 1K/2K × 1/2 sweep the idle check waited its whole two minutes on an
// idle server. Ollama had finished the prompt of the request cut before its
// first token (it drops an abandoned request only when it has text to
// send), but a request cut so counted as busy for the whole idle timeout,
// and a short request's speed, lower once long prompts filled the cache,
// never came back to the run's first. The sim's Ollama finishes such a
// prompt and decodes slower with a fuller cache; streams that spend most
// of their time in fresh prompts are cut in one. No measurement may wait
// out the idle timeout.
func TestIdleAfterPromptsCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Flavour = sim.FlavourOllama
		p.Prefill = sim.PrefillProfile{PeakTokS: 2000, HalfContext: 1 << 20, RequestOverheadMs: 20}
		p.Decode.PerKCachedTokenMs = 2 // 20K cached tokens: 50 ms more a step
		_, url, dial := startMemSim(t, p)
		settings := testSettings(url, []string{"1K", "2K"}, []int{1, 2}, 3*time.Second)
		settings.Sweep.MaxOutput = 8 // each request mostly its prompt: cut in it
		settings.Sweep.CacheMode = "distinct"
		settings.Sweep.IdleTimeout = 2 * time.Minute
		file := filepath.Join(t.TempDir(), "run.json")
		var log bytes.Buffer
		run, err := Run(context.Background(), Options{Settings: settings, File: file, Log: &log, dial: dial})
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		if strings.Contains(log.String(), "still looked busy") {
			t.Errorf("an idle check waited out its timeout:\n%s", log.String())
		}
		waited := 0.0
		for _, d := range run.Decode {
			if w := d.IdleWaitSeconds; w != nil {
				waited = max(waited, *w)
				if *w > 10 {
					t.Errorf("%s × %d waited %.1f s for an idle server", d.ContextLabel(), d.Concurrency, *w)
				}
			}
		}
		if waited == 0 {
			t.Errorf("no cell waited: no prompt was cut, the test proves nothing\n%s", log.String())
		}
	})
}

// TestSimOllamaFinishesAbandonedPrompts holds the sim's Ollama to what
// Ollama 0.6.5 does with a request whose client left (its runner drops a
// request only when the text it sends is refused): one cut in its prompt
// keeps the server's one slot to the end of its prompt, one cut after its
// first token frees it at once. A short request sent right after each
// tells which.
func TestSimOllamaFinishesAbandonedPrompts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Flavour = sim.FlavourOllama
		p.KV.MaxRunning = 1
		p.Prefill = sim.PrefillProfile{PeakTokS: 1000, HalfContext: 1 << 20} // 2K tokens: about 2 s
		_, url, dial := startMemSim(t, p)
		c := newClient(url, "", 2, dial)
		c.model, c.eng = "sim", ollamaEngine{}
		long := strings.Repeat("word ", 2000)
		// cutAt sends a long-prompted request, cuts it after cut, and
		// returns how long a short request sent then took.
		cutAt := func(cut time.Duration, prompt string) time.Duration {
			ctx, cancel := context.WithTimeout(context.Background(), cut)
			c.stream(ctx, chatRequest{prompt: prompt, maxTokens: 100000, seed: 1}, time.Minute, hooks{})
			cancel()
			start := time.Now()
			if o := c.stream(context.Background(), chatRequest{prompt: "hi", maxTokens: 2, seed: 2}, time.Minute, hooks{}); o.err != nil {
				t.Fatal(o.err)
			}
			return time.Since(start)
		}
		if took := cutAt(100*time.Millisecond, long); took < time.Second {
			t.Errorf("a request cut 0.1 s into a 2 s prompt: the next took %v; want it to wait for the rest of that prompt", took)
		}
		if took := cutAt(time.Second, "short prompt"); took > 500*time.Millisecond {
			t.Errorf("a request cut while decoding: the next took %v; want the slot free at once", took)
		}
	})
}

// show prints an optional figure.
func show(v *float64) string {
	if v == nil {
		return "no"
	}
	return fmt.Sprintf("%.2f", *v)
}

// TestSlotsIdle reads llama.cpp's /slots, the idle signal of a llama-server
// started without --metrics.
func TestSlotsIdle(t *testing.T) {
	p := testProfile()
	p.Flavour = sim.FlavourLlamaCpp
	p.KV.MaxRunning = 2
	_, url := startSim(t, p)
	sw := &sweeper{c: newClient(url, "", 4, nil)}
	sw.c.model = "sim"
	if idle, err := slotsIdle(context.Background(), sw.c); err != nil || !idle {
		t.Fatalf("a fresh server: idle %v, %v", idle, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sw.c.stream(ctx, chatRequest{prompt: "go on", maxTokens: 10000}, time.Minute, hooks{})
	deadline := time.Now().Add(10 * time.Second)
	for {
		idle, err := slotsIdle(context.Background(), sw.c)
		if err != nil {
			t.Fatal(err)
		}
		if !idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/slots never showed the request processing")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServerCountBesideOurs: every engine that keeps its own count of the
// tokens it generated has it recorded beside the client's, for the same
// window or the same requests; they agree, and a server whose counter
// disagrees by more than 2 % is flagged.
func TestServerCountBesideOurs(t *testing.T) {
	for _, tt := range []struct {
		flavour, source string
		skew            float64
	}{
		{sim.FlavourVLLM, "vllm:generation_tokens_total over the window", 0},
		{sim.FlavourSGLang, "sglang:generation_tokens_total over the window", 0},
		{sim.FlavourLlamaCpp, "llamacpp:tokens_predicted_total over the window", 0},
		{sim.FlavourOllama, "eval_count", 0},
		{sim.FlavourVLLM, "vllm:generation_tokens_total over the window", 0.1},
	} {
		t.Run(fmt.Sprintf("%s skew %g", tt.flavour, tt.skew), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := testProfile()
				p.Flavour = tt.flavour
				p.CounterSkew = tt.skew
				p.KV.MaxRunning = 8
				p.Prefill.RequestOverheadMs = 20
				_, url, dial := startMemSim(t, p)
				settings := testSettings(url, []string{"1K"}, []int{1, 2}, 2*time.Second)
				settings.Sweep.MaxOutput = 30 // requests complete inside the window
				file := filepath.Join(t.TempDir(), "run.json")
				var log bytes.Buffer
				run, err := Run(context.Background(), Options{Settings: settings, File: file, Log: &log, dial: dial})
				if err != nil {
					t.Fatalf("%v\n%s", err, log.String())
				}
				t.Logf("%s", log.String())
				for _, d := range run.Decode {
					c := d.ServerCount
					if c == nil || !strings.Contains(c.Source, tt.source) || c.ServerTokens == 0 {
						t.Errorf("1K × %d: server count %+v", d.Concurrency, c)
						continue
					}
					if c.Disagrees() != (tt.skew > 0) {
						t.Errorf("1K × %d: we counted %d, the server %d (%+.2f%%): flagged %v", d.Concurrency, c.ClientTokens, c.ServerTokens, 100*c.Deviation(), c.Disagrees())
					}
				}
				if warned := strings.Contains(log.String(), "warning: 1K × 1: we counted"); warned != (tt.skew > 0) {
					t.Errorf("warning in the output: %v\n%s", warned, log.String())
				}
			})
		})
	}
}
