package runner

import (
	"bytes"
	"context"
	"math"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/runner/sim"
)

// testProfile is a sim with realistic latencies at small scale: 10 ms decode
// steps, prefill at 20,000 tok/s, no speculation unless a test asks.
func testProfile() sim.Profile {
	p := sim.DefaultProfile()
	p.MaxModelLen = 1 << 20
	p.Decode = sim.DecodeProfile{BaseMs: 10, PerSeqMs: 0.5, MaxBatchedTokens: 8192}
	p.Prefill = sim.PrefillProfile{PeakTokS: 20000, HalfContext: 1 << 20, RequestOverheadMs: 100}
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

func testSettings(url string, contexts []string, concurrency []int, window time.Duration) Settings {
	s := Settings{}
	s.Server.BaseURL = url
	s.Sweep.Contexts = contexts
	s.Sweep.Concurrency = concurrency
	s.Sweep.Duration.Duration = window
	s.Sweep.MaxOutput = 4096
	s.Sweep.WarmupTimeout.Duration = 20 * time.Second
	return s
}

func sweep(t *testing.T, s Settings) (*matrixgen.Run, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "run.json")
	var log bytes.Buffer
	run, err := Run(context.Background(), Options{Settings: s, File: file, Log: &log, Version: "test", Simulated: true})
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
func TestSweepMatchesTheTruth(t *testing.T) {
	s, url := startSim(t, testProfile())
	run, file := sweep(t, testSettings(url, []string{"1K", "2K", "4K"}, []int{1, 2, 4}, 3*time.Second))
	if _, err := matrixgen.LoadFile(file); err != nil {
		t.Fatalf("the run file does not load: %v", err)
	}
	if run.Incomplete || len(run.Decode) != 9 || len(run.Prefill) != 3 {
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
		truth := sim.WindowOf(trace, d.WindowStart, end)
		if !within(float64(*d.OutputTokens), float64(truth.OutputTokens), 0.01) || !within(*d.TotalTokS, truth.TokS, 0.01) {
			t.Errorf("%s: %d tokens, %.1f tok/s; the sim wrote %d, %.1f tok/s", name, *d.OutputTokens, *d.TotalTokS, truth.OutputTokens, truth.TokS)
		}
		// The cell's requests: sent after the previous cell closed, with the
		// context plus a suffix (the scout sends the context alone).
		var ttft, tbt []float64
		for _, rt := range trace {
			if rt.Arrival.After(prevEnd) && rt.PromptTokens > d.ContextTokens && !rt.FirstToken.IsZero() && rt.FirstToken.Before(end) {
				ttft = append(ttft, ms(rt.FirstToken.Sub(rt.Arrival)))
			}
		}
		prevEnd = end
		for _, rt := range trace {
			first, last, after := time.Time{}, time.Time{}, 0
			for _, c := range rt.Chunks {
				if c.At.Before(d.WindowStart) || !c.At.Before(end) {
					continue
				}
				if first.IsZero() {
					first = c.At
				} else {
					after += c.Tokens
				}
				last = c.At
			}
			if after > 0 {
				tbt = append(tbt, ms(last.Sub(first))/float64(after))
			}
		}
		if d.TTFTMs == nil || !within(d.TTFTMs.P50, quantile(ttft, 0.5), 0.02) {
			t.Errorf("%s: TTFT p50 %.3f ms, the sim's %.3f ms (%d requests)", name, d.TTFTMs.P50, quantile(ttft, 0.5), len(ttft))
		}
		if d.TBTMs == nil || !within(d.TBTMs.P50, quantile(tbt, 0.5), 0.02) {
			t.Errorf("%s: TBT p50 %.3f ms, the sim's %.3f ms", name, d.TBTMs.P50, quantile(tbt, 0.5))
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
