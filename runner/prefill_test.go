package runner

import (
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/prom"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/sim"
)

// shotOf is a measured prefill request with the TTFT and server reading given.
func shotOf(ttftMs, serverMs float64, serverTokens, promptTokens int) prefillShot {
	t0 := time.Unix(1_800_000_000, 0)
	return prefillShot{
		obs:      &observation{sent: t0, firstText: t0.Add(time.Duration(ttftMs * float64(time.Millisecond))), promptTokens: promptTokens},
		serverMs: serverMs, serverTokens: serverTokens, clock: "test clock",
	}
}

// FuzzSummarizePrefill: whatever a server says of its own prompt time and
// tokens, a row's figures are finite, the server's time lies within the
// TTFT, and the run file can be written.
func FuzzSummarizePrefill(f *testing.F) {
	for _, v := range []float64{0, -5, 1e-320, 1e-9, 51.2, 299, 300, 1e308, math.Inf(1), math.NaN()} {
		f.Add(300.0, v, 1024, 1024)
	}
	f.Add(300.0, 50.0, -7, 1024)
	f.Add(300.0, 50.0, math.MaxInt, 1024)
	f.Add(1e-6, 1e-7, 1, 1)
	f.Fuzz(func(t *testing.T, ttftMs, serverMs float64, serverTokens, promptTokens int) {
		if !(ttftMs > 0) || ttftMs > 1e9 || promptTokens <= 0 || promptTokens > 1<<24 {
			t.Skip() // prefillFailure refuses these requests before
		}
		prompt := builtPrompt{tokens: promptTokens, exact: true}
		shot := shotOf(ttftMs, serverMs, serverTokens, promptTokens)
		if _, ok := shot.ttft(); !ok {
			t.Skip() // a TTFT below the clock's grain
		}
		row := matrixgen.Prefill{ContextTokens: promptTokens, Status: matrixgen.StatusValid}
		summarizePrefill(&row, []prefillShot{shot, shot, shot}, prompt, nil)
		for _, x := range []*float64{row.PromptTokS, row.TTFTMs, row.ServerPromptMs, row.ServerPromptTokS} {
			if x != nil && (math.IsNaN(*x) || math.IsInf(*x, 0) || *x < 0) {
				t.Fatalf("a figure is %v: %+v", *x, row)
			}
		}
		if row.ServerPromptMs != nil && *row.ServerPromptMs > *row.TTFTMs {
			t.Fatalf("the server's prompt time %v exceeds the TTFT %v", *row.ServerPromptMs, *row.TTFTMs)
		}
		if row.ServerPromptTokS != nil && *row.ServerPromptTokS > maxPrefillTokS {
			t.Fatalf("a server rate of %v tok/s was kept", *row.ServerPromptTokS)
		}
		run := &matrixgen.Run{Schema: matrixgen.SchemaVersion, Tool: matrixgen.Tool{Name: "t"}, Engine: matrixgen.Engine{Name: "e"},
			Model: matrixgen.Model{Name: "m"}, Prefill: []matrixgen.Prefill{row}}
		if _, err := runfile.Encode(run); err != nil {
			t.Fatalf("the run cannot be written: %v", err)
		}
	})
}

func TestServerReadingsThatCannotBe(t *testing.T) {
	tests := []struct {
		name         string
		serverMs     float64
		serverTokens int
		ok           bool
	}{
		{"a plain reading", 51, 1024, true},
		{"tokens from the client when the server gives none", 51, 0, true},
		{"none", 0, 1024, false},
		{"negative", -5, 1024, false},
		{"longer than the TTFT", 301, 1024, false},
		{"huge", 1e308, 1024, false},
		{"infinite", math.Inf(1), 1024, false},
		{"not a number", math.NaN(), 1024, false},
		{"so short the rate is beyond any server", 1e-9, 1024, false},
		{"more tokens than the prompt", 51, 5000, false},
		{"negative tokens", 51, -7, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rate, ok := shotOf(300, tt.serverMs, tt.serverTokens, 1024).serverReading(300, 1024)
			if ok != tt.ok || ok && (math.IsInf(rate, 0) || rate <= 0) {
				t.Errorf("serverReading: rate %v, ok %v; want ok %v", rate, ok, tt.ok)
			}
		})
	}
}

// TestServerFiguresOverTheSameRequests: the row's server figures are the
// medians over every measured request or absent, never over a subset
// beside a TTFT median over all, which could hide or invent a gap.
func TestServerFiguresOverTheSameRequests(t *testing.T) {
	for _, shots := range [][]prefillShot{
		{shotOf(300, 0, 0, 8192), shotOf(3000, 2990, 0, 8192), shotOf(300, 0, 0, 8192)},
		{shotOf(3000, 0, 0, 8192), shotOf(300, 290, 0, 8192), shotOf(3000, 0, 0, 8192)},
	} {
		row := matrixgen.Prefill{ContextTokens: 8192}
		summarizePrefill(&row, shots, builtPrompt{tokens: 8192}, nil)
		if row.ServerPromptMs != nil || row.ServerClock != "" {
			t.Errorf("server figures %s ms by %q from one request of three", figure(row.ServerPromptMs), row.ServerClock)
		}
		if _, _, ok := row.OutsidePrompt(); ok {
			t.Error("the rule ran on a partial clock")
		}
	}
}

func TestOneObservation(t *testing.T) {
	before := prom.Totals{`engine="0",`: {Sum: 10, Count: 4}, `engine="1",`: {Sum: 3, Count: 2}}
	tests := []struct {
		name  string
		after prom.Totals
		want  float64
		ok    bool
	}{
		{"one series, once", prom.Totals{`engine="0",`: {Sum: 10.25, Count: 5}, `engine="1",`: {Sum: 3, Count: 2}}, 0.25, true},
		{"nothing moved", before, 0, false},
		{"two requests", prom.Totals{`engine="0",`: {Sum: 11, Count: 6}, `engine="1",`: {Sum: 3, Count: 2}}, 0, false},
		{"backwards", prom.Totals{`engine="0",`: {Sum: 9, Count: 3}, `engine="1",`: {Sum: 3, Count: 2}}, 0, false},
		{"an infinite sum", prom.Totals{`engine="0",`: {Sum: math.Inf(1), Count: 5}, `engine="1",`: {Sum: 3, Count: 2}}, 0, false},
		{"a series born since", prom.Totals{`engine="0",`: {Sum: 10, Count: 4}, `engine="1",`: {Sum: 3, Count: 2}, `engine="x",`: {Sum: 1e6, Count: 1}}, 0, false},
		{"ranks that agree", prom.Totals{`engine="0",`: {Sum: 10.25, Count: 5}, `engine="1",`: {Sum: 3.26, Count: 3}}, 0.255, true},
		{"ranks that disagree", prom.Totals{`engine="0",`: {Sum: 10.25, Count: 5}, `engine="1",`: {Sum: 4, Count: 3}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := oneObservation(before, tt.after)
			if ok != tt.ok || ok && math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("oneObservation = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// failingChats answers the n-th long chat request (a prefill's, counted
// from 1) with a 500 when fail says so, and passes the rest to the sim.
type failingChats struct {
	next  http.Handler
	fail  func(n int) bool
	mu    sync.Mutex
	count int
}

func (f *failingChats) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/chat/completions" && r.ContentLength > 2000 {
		f.mu.Lock()
		f.count++
		n := f.count
		f.mu.Unlock()
		if f.fail(n) {
			http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

// TestPrefillFailures: an untimed warm-up that fails leaves the measuring
// to the repeats; a repeat that fails makes the row an error with its
// reason and no figures, which no chart or table could show as a rate.
func TestPrefillFailures(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fail  func(n int) bool
		valid bool
	}{
		{"the warm-up fails", func(n int) bool { return n == 1 }, true},
		{"the second repeat fails", func(n int) bool { return n == 3 }, false},
		{"the last repeat fails", func(n int) bool { return n == 4 }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := testProfile()
				p.Flavour = sim.FlavourLlamaCpp
				p.KV.MaxRunning, p.KV.CapacityTokens = 8, 8<<20
				s, err := sim.New(p, sim.Options{})
				if err != nil {
					t.Fatal(err)
				}
				ln := newMemListener()
				srv := &http.Server{Handler: &failingChats{next: s, fail: tt.fail}, ConnState: s.ConnState}
				go srv.Serve(ln)
				t.Cleanup(func() { srv.Close(); s.Close() })
				settings := testSettings("http://sim.test", []string{"1K"}, []int{1}, time.Second)
				settings.Sweep.PrefillContexts = []string{"1K"}
				run, _ := sweepWith(t, settings, ln.dial)
				row := run.Prefill[0]
				if tt.valid {
					if row.Status != matrixgen.StatusValid || len(row.Requests) != defaultPrefillRepeats {
						t.Errorf("%s (%s), %d requests", row.Status, row.Reason, len(row.Requests))
					}
					return
				}
				if row.Status != matrixgen.StatusError || !strings.Contains(row.Reason, "boom") {
					t.Errorf("%s (%s), want an error in the server's words", row.Status, row.Reason)
				}
				if row.PromptTokS != nil || row.TTFTMs != nil || row.ColdTTFTMs != nil || row.Requests != nil || row.ServerPromptMs != nil {
					t.Errorf("a failed row kept figures: %+v", row)
				}
			})
		})
	}
}

// TestOllamaCountsThatCannotBe: Ollama's final line with a negative count
// fails the request, as a negative usage does on the OpenAI route, instead
// of reaching the run file as a valid row of -5 prompt tokens; the error
// names both counts, and the line leaves no finish reason behind.
func TestOllamaCountsThatCannotBe(t *testing.T) {
	for _, ch := range []ollamaChunk{{Done: true, PromptEvalCount: -5, EvalCount: 1}, {Done: true, PromptEvalCount: 5, EvalCount: -1}} {
		o := newObservation(chatRequest{maxTokens: 1}, matrixgen.TokensChunks)
		if err := o.readOllama(&ch, time.Now(), hooks{}); err == nil || !strings.Contains(err.Error(), "prompt_eval_count") || o.finishReason != "" {
			t.Errorf("%+v: %v, finish reason %q", ch, err, o.finishReason)
		}
	}
	o := newObservation(chatRequest{maxTokens: 1}, matrixgen.TokensChunks)
	if err := o.readOllama(&ollamaChunk{Done: true, PromptEvalCount: 1024, PromptEvalDuration: 50e6, EvalCount: 1}, time.Now(), hooks{}); err != nil || o.serverPromptMs != 50 {
		t.Errorf("a plain final line: %v, prompt %v ms", err, o.serverPromptMs)
	}
}
