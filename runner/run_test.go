package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/measure"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/sim"
)

// testProfile is a sim with realistic latencies at small scale: 10 ms decode
// steps, prefill at 20,000 tok/s, 250 ms of per-request overhead (the sample run's
// TTFTs at one stream are about that), no speculation unless a test asks.
func testProfile() sim.Profile {
	p := sim.DefaultProfile()
	p.MaxModelLen = 1 << 20
	p.Decode = sim.DecodeProfile{BaseMs: 10, PerSeqMs: 0.5, MaxBatchedTokens: 8192}
	p.Prefill = sim.PrefillProfile{PeakTokS: 20000, HalfContext: 1 << 20, RequestOverheadMs: 250}
	p.Speculative.DraftTokens = 0
	p.KeepAliveSeconds = 0.5
	return p
}

func startSim(t testing.TB, p sim.Profile) (*sim.Server, string) {
	t.Helper()
	s, err := sim.New(p, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts.URL
}

// startSimWith serves the sim with some of its routes replaced (an older
// version of its engine), and returns its URL.
func startSimWith(t testing.TB, p sim.Profile, replace func(mux *http.ServeMux)) string {
	t.Helper()
	s, err := sim.New(p, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", s)
	replace(mux)
	ts := httptest.NewServer(mux)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts.URL
}

func testSettings(url string, contexts []string, concurrency []int, window time.Duration) Settings {
	s := Settings{}
	s.Server.BaseURL = url
	s.Sweep.Contexts = contexts
	s.Sweep.Concurrency = concurrency
	s.Sweep.Duration = window
	s.Sweep.MaxOutput = 4096
	s.Sweep.WarmupTimeout = 20 * time.Second
	return s
}

func sweep(t *testing.T, s Settings) (*matrixgen.Run, string) {
	t.Helper()
	return sweepWith(t, s, nil)
}

// sweepWith runs a sweep whose client connects through dial (nil: TCP).
func sweepWith(t *testing.T, s Settings, dial dialFunc) (*matrixgen.Run, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "run.json")
	var log bytes.Buffer
	run, err := Run(context.Background(), Options{Settings: s, File: file, Log: &log, Version: "test", Simulated: true, dial: dial})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Logf("%s", log.String())
	return run, file
}

func within(got, want, tolerance float64) bool {
	return math.Abs(got-want) <= tolerance*math.Abs(want)
}

// TestSweepMatchesTheTruth runs 3 contexts × 3 concurrency levels against
// the sim and checks every cell's figures against what the sim recorded.
//
// The sim and the client run in a synctest bubble, connected in memory:
// time is virtual, so the figures must agree with the sim's exactly, and
// the sweep takes a moment whatever else the machine does.
func TestSweepMatchesTheTruth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, url, dial := startMemSim(t, testProfile())
		run, file := sweepWith(t, testSettings(url, []string{"1K", "2K", "4K"}, []int{1, 2, 4}, 3*time.Second), dial)
		checkAgainstTruth(t, s, run, file, exactly)
	})
}

// TestSweepOverRealSockets is the same over loopback TCP in real time: the
// token counts within a tolerance: tokens written near the window's edges
// may be read on either side of it, and on a loaded machine (load 13 on two
// cores) that was 6 of 192 tokens (3.1 %). The bound is 15 %, five times
// that, so a busy CI machine passes while a lost or doubled chunk still
// fails; TestSweepMatchesTheTruth holds the counts exactly, in virtual time.
// Latencies are not held to a bound here: on a busy machine the client's
// and the sim's own scheduling move them by more than any fixed share
// (TBT 59 against 64 ms at a load of 10 on two cores), and
// TestSweepMatchesTheTruth holds them exactly, in virtual time.
func TestSweepOverRealSockets(t *testing.T) {
	s, url := startSim(t, testProfile())
	run, file := sweep(t, testSettings(url, []string{"1K"}, []int{1, 2}, 2*time.Second))
	checkAgainstTruth(t, s, run, file, tolerances{tokens: 0.15, latency: math.Inf(1)})
}

// tolerances bound how far the client's figures may be from the sim's:
// relative, for token counts and rates, and for latencies.
type tolerances struct{ tokens, latency float64 }

// exactly is agreement to rounding, for sweeps in virtual time.
var exactly = tolerances{tokens: 1e-9, latency: 1e-9}

func checkAgainstTruth(t *testing.T, s *sim.Server, run *matrixgen.Run, file string, tol tolerances) {
	t.Helper()
	contexts, levels := len(run.Sweep.Contexts), len(run.Sweep.Concurrency)
	if _, err := runfile.Load(file); err != nil {
		t.Fatalf("the run file does not load: %v", err)
	}
	if run.Incomplete || len(run.Decode) != contexts*levels || len(run.Prefill) != contexts {
		t.Fatalf("incomplete %v, %d cells, %d prefill rows", run.Incomplete, len(run.Decode), len(run.Prefill))
	}
	trace := s.Trace()
	var prevEnd time.Time
	for _, d := range run.Decode { // in the order they ran
		name := matrixgen.ContextLabel(d.ContextTokens) + "×" + string(rune('0'+d.Concurrency))
		if d.Status != matrixgen.StatusValid {
			t.Errorf("%s: %s (%s)", name, d.Status, d.Reason)
			continue
		}
		end := d.WindowStart.Add(time.Duration(*d.WindowSeconds * float64(time.Second)))
		// The cell's requests: sent after the previous cell closed, with the
		// context plus a suffix (the scout sends the context alone). The
		// sim's record of them, through the same core as the client's.
		var cellTrace []sim.RequestTrace
		for _, rt := range trace {
			if !rt.Arrival.Before(prevEnd) && rt.PromptTokens > d.ContextTokens {
				cellTrace = append(cellTrace, rt)
			}
		}
		prevEnd = end
		truth := sim.WindowOf(cellTrace, d.WindowStart, end)
		if !within(float64(*d.OutputTokens), float64(truth.OutputTokens), tol.tokens) || !within(*d.TotalTokS, truth.TotalTokS, tol.tokens) {
			t.Errorf("%s: %d tokens, %.1f tok/s; the sim wrote %d, %.1f tok/s", name, *d.OutputTokens, *d.TotalTokS, truth.OutputTokens, truth.TotalTokS)
		}
		if len(truth.TTFTMs) == 0 || len(truth.TBTMs) == 0 {
			t.Errorf("%s: the sim's trace has %d TTFTs and %d TBTs for the cell", name, len(truth.TTFTMs), len(truth.TBTMs))
			continue
		}
		if ttft := measure.Median(truth.TTFTMs); d.TTFTMs == nil || !within(d.TTFTMs.P50, ttft, tol.latency) {
			t.Errorf("%s: TTFT p50 %v ms, the sim's %.3f ms (%d requests)", name, d.TTFTMs, ttft, len(truth.TTFTMs))
		}
		if tbt := measure.Median(truth.TBTMs); d.TBTMs == nil || !within(d.TBTMs.P50, tbt, tol.latency) {
			t.Errorf("%s: TBT p50 %v ms, the sim's %.3f ms", name, d.TBTMs, tbt)
		}
		if d.TokenSource != matrixgen.TokensContinuousUsage {
			t.Errorf("%s: token source %q", name, d.TokenSource)
		}
	}
	for _, p := range run.Prefill {
		if p.Status != matrixgen.StatusValid || p.PromptTokens != p.ContextTokens {
			t.Errorf("prefill %s: %s, %d prompt tokens (%s)", matrixgen.ContextLabel(p.ContextTokens), p.Status, p.PromptTokens, p.Reason)
		}
	}
}

// TestSpeculativeChunksCountedExactly: with several tokens per chunk, a
// stream's count equals what the sim sent, chunk for chunk.
func TestSpeculativeChunksCountedExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Speculative = sim.SpeculativeProfile{DraftTokens: 3, Acceptance: 0.7}
		s, url, dial := startMemSim(t, p)
		c := newClient(url, "", 1, dial)
		c.model = "sim"
		c.chat.ignoreEOS = true
		obs := c.stream(context.Background(), chatRequest{prompt: "Tell me a story.", maxTokens: 500, seed: 3}, time.Minute, hooks{})
		if !obs.complete() {
			t.Fatalf("stream failed: %v", obs.err)
		}
		truth := s.Trace()[0]
		if obs.tokens() != 500 || truth.OutputTokens != 500 {
			t.Errorf("counted %d tokens, the sim sent %d, asked for 500", obs.tokens(), truth.OutputTokens)
		}
		if len(obs.events) != len(truth.Chunks) {
			t.Fatalf("%d token events, the sim sent %d chunks", len(obs.events), len(truth.Chunks))
		}
		multi := 0
		for i, e := range obs.events {
			if e.tokens != truth.Chunks[i].Tokens {
				t.Errorf("chunk %d: counted %d tokens, the sim sent %d", i, e.tokens, truth.Chunks[i].Tokens)
			}
			if e.tokens > 1 {
				multi++
			}
		}
		if multi == 0 {
			t.Error("no chunk carried several tokens; the test proves nothing")
		}
		if obs.source != matrixgen.TokensContinuousUsage {
			t.Errorf("token source %q", obs.source)
		}
	})
}

// TestQueuedCell: a server that runs 2 requests at once, asked for 4.
func TestQueuedCell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.KV.MaxRunning = 2
		_, url, dial := startMemSim(t, p)
		s := testSettings(url, []string{"1K"}, []int{2, 4}, 1500*time.Millisecond)
		s.Sweep.WarmupTimeout = 2 * time.Second
		run, _ := sweepWith(t, s, dial)
		if got := run.Decode[0].Status; got != matrixgen.StatusValid {
			t.Errorf("2 streams on 2 slots: %s (%s)", got, run.Decode[0].Reason)
		}
		if got := run.Decode[1]; got.Status != matrixgen.StatusQueued || got.TotalTokS == nil {
			t.Errorf("4 streams on 2 slots: %s (%s), figures %v", got.Status, got.Reason, got.TotalTokS)
		}
	})
}

// TestOverCapacityWithoutRequests: cells whose KV need exceeds the cache
// are decided before anything is sent for them.
func TestOverCapacityWithoutRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.MaxModelLen = 16384
		p.KV.CapacityTokens = 20000
		srv, url, dial := startMemSim(t, p)
		run, _ := sweepWith(t, testSettings(url, []string{"4K"}, []int{1, 2, 4}, time.Second), dial)
		want := []matrixgen.Status{matrixgen.StatusValid, matrixgen.StatusValid, matrixgen.StatusOverCapacity}
		for i, d := range run.Decode {
			if d.Status != want[i] {
				t.Errorf("4K × %d: %s (%s), want %s", d.Concurrency, d.Status, d.Reason, want[i])
			}
		}
		// 4 × (4,096 + 4,096) = 32,768 > 20,000; 2 × 8,192 = 16,384 fits.
		for _, rt := range srv.Trace() {
			if rt.Arrival.After(run.Decode[1].WindowStart.Add(time.Duration(*run.Decode[1].WindowSeconds * float64(time.Second)))) {
				t.Errorf("a request was sent after the last cell that could run: %s", rt.ID)
			}
		}
		if !strings.Contains(run.Decode[2].Reason, "KV cache of 20000 tokens") {
			t.Errorf("reason %q", run.Decode[2].Reason)
		}
	})
}

// TestServerCountsPastARunFile: a server that gives a model length no run
// file may hold gets a run that validates, its own figure kept in the probe.
func TestServerCountsPastARunFile(t *testing.T) {
	if math.MaxInt <= matrixgen.MaxFigure {
		t.Skip("an int cannot hold a count past a run file's bound here")
	}
	synctest.Test(t, func(t *testing.T) {
		p, huge := testProfile(), int64(2e12) // a variable: no int constant holds it on 32-bit machines
		p.MaxModelLen, p.KV.CapacityTokens = int(huge), int(huge)
		_, url, dial := startMemSim(t, p)
		run, _ := sweepWith(t, testSettings(url, []string{"1K"}, []int{1}, time.Second), dial)
		if problems := run.Validate(); len(problems) > 0 {
			t.Errorf("the run file fails validation: %v", problems)
		}
		if run.Model.MaxModelLen != 0 || run.Probe.MaxModelLen != int(huge) {
			t.Errorf("model length %d, probe's %d", run.Model.MaxModelLen, run.Probe.MaxModelLen)
		}
	})
}

// TestLoopedCell: a model that loops above 2K tokens of context is retried,
// then marked Looped with the repeated unit kept.
func TestLoopedCell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Loop = sim.LoopProfile{AboveContext: 2048, AfterTokens: 20, Phrase: "round and round it goes"}
		_, url, dial := startMemSim(t, p)
		s := testSettings(url, []string{"1K", "4K"}, []int{1}, 2*time.Second)
		s.Sweep.LoopRetries = new(1)
		run, _ := sweepWith(t, s, dial)
		if d := run.Decode[0]; d.Status != matrixgen.StatusValid {
			t.Errorf("1K: %s (%s)", d.Status, d.Reason)
		}
		d := run.Decode[1]
		if d.Status != matrixgen.StatusLooped || d.Loop == nil || d.Loop.Unit != "round and round it goes" || d.Attempts != 2 {
			t.Fatalf("4K: %s, loop %+v, attempts %d", d.Status, d.Loop, d.Attempts)
		}
		if d.TotalTokS == nil {
			t.Error("a looped cell lost its figures")
		}
	})
}

// TestExactPromptLengths builds prompts of exactly 8K, 128K and 1M tokens
// as the server counts them.
func TestExactPromptLengths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		c := newClient(url, "", 1, dial)
		c.model = "sim"
		for _, n := range []int{8 << 10, 128 << 10, 1 << 20} {
			h := newHeads(9, n)
			text, got, exact, err := exactPrompt(context.Background(), vllmTokenizer{c}, n, h, uint64(n))
			if err != nil || !exact {
				t.Fatalf("exact %v, %v", exact, err)
			}
			count, err := vllmTokenizer{c}.count(context.Background(), text)
			if got != n || count != n {
				t.Errorf("%s: built %d tokens, the server counts %d", matrixgen.ContextLabel(n), got, count)
			}
			if !strings.HasPrefix(text, h.measured) {
				t.Errorf("%s: the prompt's own first line is not at the very start", matrixgen.ContextLabel(n))
			}
		}
	})
}

func TestProseDoesNotCycle(t *testing.T) {
	words := proseWords(1, 200000)
	if ev := detectLoop([]byte(strings.Join(words, " ")), 0); ev != nil {
		t.Errorf("the prompt prose loops: %+v", ev)
	}
	seen := map[string]int{}
	for i := 0; i+12 <= len(words); i += 12 {
		seen[strings.Join(words[i:i+12], " ")]++
	}
	for s, n := range seen {
		if n > 1 {
			t.Fatalf("a 12-word run repeats %d times: %q", n, s)
		}
	}
}

// cancelAfter is a log that cancels the sweep when a line contains marker.
type cancelAfter struct {
	marker string
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.marker) {
		c.cancel()
	}
	return c.buf.Write(p)
}

// TestInterruptAndResume stops a sweep after its first decode cell, then
// resumes it: the finished cell is kept as it was, the rest are measured.
func TestInterruptAndResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		s := testSettings(url, []string{"1K"}, []int{1, 2, 4}, time.Second)
		file := filepath.Join(t.TempDir(), "run.json")
		ctx, cancel := context.WithCancel(context.Background())
		log := &cancelAfter{marker: "decode 1K × 1:", cancel: cancel}
		started := time.Now()
		_, err := Run(ctx, Options{dial: dial, Settings: s, File: file, Log: log})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("an interrupted sweep returned %v", err)
		}
		if took := time.Since(started); took > 10*time.Second {
			t.Errorf("stopping took %v", took)
		}
		first, err := runfile.Load(file)
		if err != nil {
			t.Fatalf("the interrupted run file does not load: %v", err)
		}
		if !first.Run.Incomplete || first.Run.Decode[0].Status != matrixgen.StatusValid || first.Run.Decode[1].Status != matrixgen.StatusNotRun {
			t.Fatalf("after the interrupt: incomplete %v, cells %s, %s", first.Run.Incomplete, first.Run.Decode[0].Status, first.Run.Decode[1].Status)
		}
		run, err := Run(context.Background(), Options{dial: dial, Settings: s, File: file, Resume: true, Log: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if run.Incomplete {
			t.Error("the resumed run is still incomplete")
		}
		if !run.Decode[0].WindowStart.Equal(first.Run.Decode[0].WindowStart) {
			t.Error("resuming measured the finished cell again")
		}
		for _, d := range run.Decode {
			if d.Status != matrixgen.StatusValid {
				t.Errorf("1K × %d: %s after resuming", d.Concurrency, d.Status)
			}
		}
	})
}

// TestLiveLine: on a terminal the cell's status line is rewritten in place.
func TestLiveLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		var live bytes.Buffer
		s := testSettings(url, []string{"1K"}, []int{2}, 2500*time.Millisecond)
		if _, err := Run(context.Background(), Options{dial: dial, Settings: s, File: filepath.Join(t.TempDir(), "r.json"), Log: io.Discard, Live: &live}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(live.String(), "\r\033[K") || !strings.Contains(live.String(), "1K × 2: window") || !strings.Contains(live.String(), "tok/s") {
			t.Errorf("live output %q", live.String())
		}
	})
}

// TestPrefillIsWarmedAndHeldToTheServersClock: a server that pays one-time
// costs on the first prompt of a new length and on the first request after
// a burst of streams, as GPU servers do (3 s and 5 s here, against about
// 50 ms and 400 ms of prompt processing). The published prefill must not
// carry them: each row is measured after an untimed warm-up, on fresh
// prompts, and held against the server's own prompt time, which the sim
// reports as vLLM does. The warm-up's TTFT is kept as the cold start.
func TestPrefillIsWarmedAndHeldToTheServersClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Prefill.RequestOverheadMs = 5
		p.Prefill.NewSizeMs, p.Prefill.AfterBurstMs, p.Prefill.BurstStreams = 3000, 5000, 4
		s, url, dial := startMemSim(t, p)
		run, _ := sweepWith(t, testSettings(url, []string{"1K", "8K"}, []int{1, 4}, time.Second), dial)
		paid := 0
		for _, rt := range s.Trace() {
			if rt.ColdMs > 0 {
				paid++
			}
		}
		if paid < 2 {
			t.Fatalf("the sim charged %d one-time costs; the test proves nothing", paid)
		}
		cold := map[int]float64{1024: 3000, 8192: 3000 + 5000} // 8K comes after the 4-stream cell
		for _, row := range run.Prefill {
			label := matrixgen.ContextLabel(row.ContextTokens)
			if row.Status != matrixgen.StatusValid || row.TTFTMs == nil || row.ServerPromptMs == nil {
				t.Fatalf("%s: %s (%s), TTFT %v, server %v", label, row.Status, row.Reason, row.TTFTMs, row.ServerPromptMs)
			}
			// The server's own prompt time is its compute: tokens at the
			// profile's rate for a prompt that long, nothing else.
			wantMs := 1000 * float64(row.PromptTokens) / p.Prefill.Rate(row.PromptTokens)
			if !within(*row.ServerPromptMs, wantMs, 1e-6) || row.ServerClock != "vllm:request_prefill_time_seconds" {
				t.Errorf("%s: the server's prompt time %.3f ms by %q, want %.3f ms", label, *row.ServerPromptMs, row.ServerClock, wantMs)
			}
			// Not one measured request may carry a one-time cost: a median
			// over repeats hides one, but its range would not.
			for i, req := range row.Requests {
				if req.TTFTMs > wantMs+p.Prefill.RequestOverheadMs+1 {
					t.Errorf("%s, request %d: TTFT %.0f ms carries a one-time cost (prompt %.0f ms + overhead %.0f ms)", label, i, req.TTFTMs, wantMs, p.Prefill.RequestOverheadMs)
				}
			}
			if !within(*row.PromptTokS, *row.ServerPromptTokS, matrixgen.OutsidePromptShare) {
				t.Errorf("%s: %.0f tok/s, the server's own %.0f tok/s", label, *row.PromptTokS, *row.ServerPromptTokS)
			}
			if _, beyond, _ := row.OutsidePrompt(); beyond {
				t.Errorf("%s: flagged as not the server's prefill speed", label)
			}
			if row.ColdTTFTMs == nil || *row.ColdTTFTMs < cold[row.ContextTokens] {
				t.Errorf("%s: cold start %s ms, want at least the %.0f ms the sim charged", label, figure(row.ColdTTFTMs), cold[row.ContextTokens])
			}
			if len(row.Requests) != defaultPrefillRepeats || *row.Completed != defaultPrefillRepeats {
				t.Errorf("%s: %d requests measured, %d completed, want %d", label, len(row.Requests), *row.Completed, defaultPrefillRepeats)
			}
		}
	})
}

// TestPrefillPromptsShareNoCache: the warm-up and every repeat begin with
// words of their own, so none finds any of its prompt in the cache, and the
// last leaves the context cached for its decode cells.
func TestPrefillPromptsShareNoCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		s, url, dial := startMemSim(t, p)
		run, _ := sweepWith(t, testSettings(url, []string{"2K"}, []int{1}, time.Second), dial)
		n := run.Prefill[0].ContextTokens
		prefill := prefillTraces(s.Trace(), n)
		if len(prefill) != 1+defaultPrefillRepeats {
			t.Fatalf("%d prefill requests, want a warm-up and %d", len(prefill), defaultPrefillRepeats)
		}
		for i, rt := range prefill {
			if rt.CachedTokens != 0 {
				t.Errorf("prefill request %d found %d of its %d tokens cached", i, rt.CachedTokens, rt.PromptTokens)
			}
		}
		// A decode stream on the cached context pays the request overhead
		// and its few own tokens, not the context's prefill.
		prefillMs := 1000 * float64(n) / p.Prefill.Rate(n)
		if d := run.Decode[0]; d.TTFTMs == nil || d.TTFTMs.P50 > p.Prefill.RequestOverheadMs+prefillMs/2 {
			t.Errorf("decode TTFT %v ms: the context was not cached (overhead %.0f ms, its prefill %.0f ms)", d.TTFTMs, p.Prefill.RequestOverheadMs, prefillMs)
		}
	})
}

// figure prints an optional figure for a test's message.
func figure(x *float64) string {
	if x == nil {
		return "none"
	}
	return strconv.FormatFloat(*x, 'f', 1, 64)
}

// TestRunThatWouldNotValidate: a sweep whose run file validate would
// refuse (more cells than a page lays out) is refused before any cell is
// measured, not written after hours of measuring.
func TestRunThatWouldNotValidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, url, dial := startMemSim(t, testProfile())
		var contexts []string
		for n := range 65 {
			contexts = append(contexts, strconv.Itoa(1024+n))
		}
		levels := make([]int, 65)
		for i := range levels {
			levels[i] = i + 1
		}
		file := filepath.Join(t.TempDir(), "run.json")
		_, err := Run(context.Background(), Options{Settings: testSettings(url, contexts, levels, time.Second), File: file, Log: io.Discard, dial: dial})
		if err == nil || !strings.Contains(err.Error(), "sweep: 65 contexts × 65 concurrency levels are 4225 cells") {
			t.Errorf("got %v", err)
		}
		if len(srv.Trace()) > 1 { // the probe's one request
			t.Errorf("%d requests were measured", len(srv.Trace()))
		}
		if _, err := os.Stat(file); err == nil {
			t.Error("a run file was written")
		}
	})
}
