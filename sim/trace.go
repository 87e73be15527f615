package sim

import (
	"slices"
	"sync"
	"time"

	"github.com/matrixgen/matrixgen/measure"
)

// RequestTrace is what the server did with one request: the truth a
// client's figures are checked against.
type RequestTrace struct {
	ID       string    `json:"id"`
	Arrival  time.Time `json:"arrival"`
	Admitted time.Time `json:"admitted,omitzero"`
	// PrefillEnd is when the engine finished the prompt (its first token
	// was sampled): PrefillEnd − Admitted is the server's own prompt time.
	PrefillEnd time.Time `json:"prefill_end,omitzero"`
	// ColdMs is the one-time cost the request paid before the scheduler
	// saw it (the profile's new_size_ms and after_burst_ms).
	ColdMs       float64   `json:"cold_ms,omitempty"`
	FirstToken   time.Time `json:"first_token,omitzero"` // first chunk with text, as written
	Finished     time.Time `json:"finished,omitzero"`
	FinishReason string    `json:"finish_reason,omitempty"`
	PromptTokens int       `json:"prompt_tokens"`
	CachedTokens int       `json:"cached_tokens"`
	OutputTokens int       `json:"output_tokens"`
	Waited       bool      `json:"waited"`
	Looped       bool      `json:"looped"`
	LoopStart    int       `json:"loop_start"`
	Preemptions  int       `json:"preemptions"`
	Fault        string    `json:"fault,omitempty"`
	Chunks       []Chunk   `json:"chunks,omitempty"`
}

// Chunk is one SSE event that carried tokens: when it was written (after the
// flush), when the engine's schedule produced its last token, and how many
// tokens it carried.
type Chunk struct {
	At        time.Time `json:"at"`
	Scheduled time.Time `json:"scheduled"`
	Tokens    int       `json:"tokens"`
}

// tracer keeps the traces of the most recent requests.
type tracer struct {
	mu     sync.Mutex
	limit  int
	traces []*RequestTrace
}

func (t *tracer) add(rt *RequestTrace) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.limit > 0 && len(t.traces) >= t.limit {
		t.traces = slices.Delete(t.traces, 0, len(t.traces)-t.limit+1)
	}
	t.traces = append(t.traces, rt)
}

// update changes a trace under the tracer's lock, so readers see it whole.
func (t *tracer) update(f func()) {
	t.mu.Lock()
	f()
	t.mu.Unlock()
}

func (t *tracer) snapshot() []RequestTrace {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]RequestTrace, len(t.traces))
	for i, rt := range t.traces {
		out[i] = *rt
		out[i].Chunks = slices.Clone(rt.Chunks)
	}
	return out
}

// WindowOf is what a client should report for the window [start, end) of
// the requests traces record, from the server's own record: the truth for
// `matrixgen run`'s figures, computed by the same core as the runner's.
func WindowOf(traces []RequestTrace, start, end time.Time) measure.Figures {
	streams := make([]measure.Stream, len(traces))
	for i, rt := range traces {
		// The request as its server wrote it: sent when it arrived,
		// complete when it finished with a reason.
		s := &streams[i]
		*s = measure.Stream{Sent: rt.Arrival, FirstText: rt.FirstToken, End: rt.Finished,
			Complete: !rt.Finished.IsZero() && rt.FinishReason != "",
			Events:   make([]measure.Event, len(rt.Chunks))}
		for j, c := range rt.Chunks {
			s.Events[j] = measure.Event{At: c.At, Tokens: c.Tokens}
			s.Tokens += c.Tokens
		}
	}
	return measure.Window(streams, start, end)
}
