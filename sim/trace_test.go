package sim

import (
	"testing"
	"time"
)

// TestWindowOf checks the truth helper on a hand-made trace: two streams,
// one finishing inside the window, one cut at its end.
func TestWindowOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	chunks := func(fromMs, everyMs, n, tokens int) []Chunk {
		var cs []Chunk
		for i := range n {
			cs = append(cs, Chunk{At: at(fromMs + i*everyMs), Tokens: tokens})
		}
		return cs
	}
	traces := []RequestTrace{
		// Arrives at 0, first token at 100, a chunk of 2 tokens every 10 ms until 590, done.
		{Arrival: at(0), FirstToken: at(100), Finished: at(590), Chunks: chunks(100, 10, 50, 2)},
		// Arrives at 900, first token at 1,200, a token every 20 ms, still going at 2,000.
		{Arrival: at(900), FirstToken: at(1200), Chunks: chunks(1200, 20, 50, 1)},
	}
	w := WindowOf(traces, at(500), at(1500))
	// Stream 1: chunks at 500…590 → 10 chunks, 20 tokens. Stream 2: 1,200…1,480 → 15 tokens.
	if w.OutputTokens != 35 {
		t.Errorf("output tokens %d, want 35", w.OutputTokens)
	}
	if w.TokS != 35 {
		t.Errorf("tok/s %v, want 35 over one second", w.TokS)
	}
	if w.Completed != 1 {
		t.Errorf("completed %d, want 1", w.Completed)
	}
	if len(w.TTFT) != 1 || w.TTFT[0] != 300*time.Millisecond {
		t.Errorf("TTFT %v, want [300ms] (only stream 2's first token is in the window)", w.TTFT)
	}
	// Stream 1 active 500→590 (90 ms), stream 2 1,200→1,500 (300 ms): 0.39 of the second.
	if w.AvgActive < 0.389 || w.AvgActive > 0.391 {
		t.Errorf("average active %v, want 0.39", w.AvgActive)
	}
	// TBT: stream 1 gaps of 10 ms over 2 tokens = 5 ms (10 of them), stream 2 gaps 20 ms (14).
	if got := Median(w.TBT); got != 20*time.Millisecond {
		t.Errorf("median TBT %v, want 20ms", got)
	}
	if len(w.TBT) != 24 {
		t.Errorf("%d TBT samples, want 24", len(w.TBT))
	}
	// Per request: 20 tokens in 90 ms, 15 tokens in 300 ms.
	if len(w.PerRequestTokS) != 2 || w.PerRequestTokS[1] != 50 {
		t.Errorf("per-request tok/s %v, want [222.2 50]", w.PerRequestTokS)
	}
}

func TestPercentiles(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	if Median(ds) != 3 || Percentile(ds, 0.99) != 5 || Percentile(ds, 0) != 1 || Median(nil) != 0 {
		t.Error("percentiles of 1…5 are wrong")
	}
	if MedianFloat([]float64{3, 1, 2}) != 2 || MedianFloat(nil) != 0 {
		t.Error("MedianFloat is wrong")
	}
}

func TestProfileValidation(t *testing.T) {
	bad := []func(*Profile){
		func(p *Profile) { p.Model = "" },
		func(p *Profile) { p.Decode.BaseMs = 0 },
		func(p *Profile) { p.KV.CapacityTokens = p.MaxModelLen - 1 },
		func(p *Profile) { p.Speculative.Acceptance = 1.5 },
		func(p *Profile) { p.Faults.HTTPStatus = 418 },
		func(p *Profile) { p.KeepAliveSeconds = 0 },
	}
	for i, breakIt := range bad {
		p := DefaultProfile()
		breakIt(&p)
		if p.Validate() == nil {
			t.Errorf("case %d: a broken profile validated", i)
		}
	}
	if err := DefaultProfile().Validate(); err != nil {
		t.Errorf("the default profile is invalid: %v", err)
	}
}
