package sim

import (
	"testing"
	"time"
)

// TestWindowOf: a trace read as the measurement core reads a client's
// streams: two requests, one finishing inside the window, one cut at its
// end.
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
		{Arrival: at(0), FirstToken: at(100), Finished: at(590), FinishReason: "stop", Chunks: chunks(100, 10, 50, 2)},
		// Arrives at 900, first token at 1,200, a token every 20 ms, still going at 2,000.
		{Arrival: at(900), FirstToken: at(1200), Chunks: chunks(1200, 20, 50, 1)},
	}
	w := WindowOf(traces, at(500), at(1500))
	// Stream 1: chunks at 500…590 → 10 chunks, 20 tokens. Stream 2: 1,200…1,480 → 15 tokens.
	if w.OutputTokens != 35 || w.TotalTokS != 35 || w.Completed != 1 {
		t.Errorf("%d tokens, %g tok/s, %d completed; want 35, 35 over one second, 1", w.OutputTokens, w.TotalTokS, w.Completed)
	}
	if len(w.TTFTMs) != 2 || w.TTFTMs[0] != 100 || w.TTFTMs[1] != 300 {
		t.Errorf("TTFT %v ms, want [100 300]", w.TTFTMs)
	}
	// TBT a request: 90 ms over the 18 tokens after stream 1's first in the
	// window; 280 ms over stream 2's 14.
	if len(w.TBTMs) != 2 || w.TBTMs[0] != 5 || w.TBTMs[1] != 20 {
		t.Errorf("TBT %v ms, want [5 20]", w.TBTMs)
	}
	// Stream 1 active 500→590 (90 ms), stream 2 1,200→1,500 (300 ms): 0.39 of the second.
	if w.AvgActive < 0.389 || w.AvgActive > 0.391 {
		t.Errorf("average active %v, want 0.39", w.AvgActive)
	}
	if len(w.PerRequestTokS) != 2 || w.PerRequestTokS[1] != 50 {
		t.Errorf("per-request tok/s %v, want [222.2 50]", w.PerRequestTokS)
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
