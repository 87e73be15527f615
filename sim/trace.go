package sim

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// RequestTrace is what the server did with one request: the truth a
// client's figures are checked against.
type RequestTrace struct {
	ID           string    `json:"id"`
	Arrival      time.Time `json:"arrival"`
	Admitted     time.Time `json:"admitted,omitzero"`
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

// Window is what a client should report for a measurement window, computed
// from the server's own record: the truth for `matrixgen run`'s figures.
type Window struct {
	Start, End time.Time
	// OutputTokens arrived (were written) inside the window.
	OutputTokens int
	// TokS is OutputTokens / window length.
	TokS float64
	// TTFT is first token − arrival, over requests whose first token came
	// inside the window; TBT is the gap before each chunk divided by its
	// tokens, over chunks inside the window after a request's first.
	TTFT, TBT []time.Duration
	// PerRequestTokS is each request's tokens inside the window over the time
	// it was producing inside it (from its first token or the window's start).
	PerRequestTokS []float64
	// Completed counts requests that finished inside the window.
	Completed int
	// AvgActive is the time-weighted mean number of requests producing
	// tokens (between first token and finish) inside the window.
	AvgActive float64
}

// WindowOf computes the figures of [start, end) from traces.
func WindowOf(traces []RequestTrace, start, end time.Time) Window {
	w := Window{Start: start, End: end}
	length := end.Sub(start)
	var activeTime time.Duration
	for _, rt := range traces {
		inWindow := func(t time.Time) bool { return !t.Before(start) && t.Before(end) }
		tokens := 0
		var prev time.Time
		for _, c := range rt.Chunks {
			if inWindow(c.At) {
				tokens += c.Tokens
				if !prev.IsZero() && c.Tokens > 0 {
					w.TBT = append(w.TBT, c.At.Sub(prev)/time.Duration(c.Tokens))
				}
			}
			prev = c.At
		}
		w.OutputTokens += tokens
		if !rt.FirstToken.IsZero() && inWindow(rt.FirstToken) {
			w.TTFT = append(w.TTFT, rt.FirstToken.Sub(rt.Arrival))
		}
		if !rt.Finished.IsZero() && inWindow(rt.Finished) {
			w.Completed++
		}
		if rt.FirstToken.IsZero() {
			continue
		}
		from := later(rt.FirstToken, start)
		to := end
		if !rt.Finished.IsZero() && rt.Finished.Before(end) {
			to = rt.Finished
		}
		if to.After(from) {
			activeTime += to.Sub(from)
			if tokens > 0 {
				w.PerRequestTokS = append(w.PerRequestTokS, float64(tokens)/to.Sub(from).Seconds())
			}
		}
	}
	if length > 0 {
		w.TokS = float64(w.OutputTokens) / length.Seconds()
		w.AvgActive = float64(activeTime) / float64(length)
	}
	return w
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Median of durations; 0 for none.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// Percentile q (0…1) of durations, nearest rank; 0 for none.
func Percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

// MedianFloat of values; 0 for none.
func MedianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}
