// Package measure turns what was seen of a cell's requests into its
// figures and status, as the methodology page defines them. It talks to
// nothing and reads no clock: the runner feeds it what its client saw, the
// sim's tests what the sim wrote, so both sides are one statistic.
package measure

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
)

// Event is tokens arriving (or written) at one moment: one chunk.
type Event struct {
	At     time.Time
	Tokens int
}

// Stream is one request as seen: when it went out, when its first text
// came, its token-carrying events, and how it ended.
type Stream struct {
	Sent      time.Time
	FirstText time.Time // zero: no text came
	End       time.Time // zero: still going when the window closed
	// Complete is true for a request that ended as the server meant (a
	// finish reason), not cut or failed.
	Complete bool
	Events   []Event
	// ServerTokS is the request's decode rate as the server timed it, 0
	// for none; Tokens all its output tokens, for the same rate of ours.
	ServerTokS float64
	Tokens     int
}

// Figures are a window's figures. Latency and rate lists hold one value a
// request; their medians and tails are the cell's.
type Figures struct {
	Length       time.Duration
	OutputTokens int
	TotalTokS    float64
	// PerRequestTokS: each request's tokens inside the window over the time
	// it produced inside it (from its first text or the window's start, to
	// its end or the window's).
	PerRequestTokS []float64
	// TTFTMs: first text − sent, for every request whose first text came
	// before the window closed. TBTMs: per request, the time from its first
	// to its last event inside the window over the tokens after the first.
	TTFTMs, TBTMs []float64
	// AvgActive is the time-weighted mean of requests producing inside the
	// window; Completed counts requests that ended as meant inside it.
	AvgActive float64
	Completed int
	// PerSecond counts the tokens of each whole second of the window; the
	// few milliseconds a window overruns its length go into its last.
	PerSecond []int
	// ServerRates and SameRequests: the server's rate and ours for exactly
	// the same requests, those that completed with text and a server rate.
	ServerRates, SameRequests []float64
}

// Window computes the figures of [start, end) from streams.
func Window(streams []Stream, start, end time.Time) Figures {
	f := Figures{Length: end.Sub(start)}
	f.PerSecond = make([]int, max(1, int(math.Round(f.Length.Seconds()))))
	var active time.Duration
	for _, s := range streams {
		if !s.FirstText.IsZero() && s.FirstText.Before(end) {
			f.TTFTMs = append(f.TTFTMs, ms(s.FirstText.Sub(s.Sent)))
		}
		in, afterFirst := 0, 0
		var first, last time.Time
		for _, e := range s.Events {
			if e.At.Before(start) || !e.At.Before(end) {
				continue
			}
			in += e.Tokens
			if first.IsZero() {
				first = e.At
			} else {
				afterFirst += e.Tokens
			}
			last = e.At
			f.PerSecond[min(int(e.At.Sub(start)/time.Second), len(f.PerSecond)-1)] += e.Tokens
		}
		f.OutputTokens += in
		if afterFirst > 0 {
			f.TBTMs = append(f.TBTMs, ms(last.Sub(first))/float64(afterFirst))
		}
		if s.Complete && !s.End.Before(start) && s.End.Before(end) {
			f.Completed++
		}
		// A request that ended at once, on its end token, has a server rate
		// and no span of ours: it goes into neither list.
		if span := s.End.Sub(s.FirstText); s.Complete && s.ServerTokS > 0 && !s.FirstText.IsZero() && span > 0 {
			f.ServerRates = append(f.ServerRates, s.ServerTokS)
			f.SameRequests = append(f.SameRequests, float64(s.Tokens)/span.Seconds())
		}
		if s.FirstText.IsZero() {
			continue
		}
		from, to := s.FirstText, end
		if from.Before(start) {
			from = start
		}
		if !s.End.IsZero() && s.End.Before(end) {
			to = s.End
		}
		if to.After(from) {
			active += to.Sub(from)
			if in > 0 {
				f.PerRequestTokS = append(f.PerRequestTokS, float64(in)/to.Sub(from).Seconds())
			}
		}
	}
	if f.Length > 0 {
		f.TotalTokS = float64(f.OutputTokens) / f.Length.Seconds()
		f.AvgActive = float64(active) / float64(f.Length)
	}
	return f
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Quantile is the q-quantile (0…1) of xs by linear interpolation between
// ranks; 0 for none.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (s[lo+1]-s[lo])*(pos-float64(lo))
}

// Median is Quantile(xs, 0.5).
func Median(xs []float64) float64 { return Quantile(xs, 0.5) }

// Percentiles are a latency's median and tails as a run file records
// them; nil for none.
func Percentiles(xs []float64) *matrixgen.Percentiles {
	if len(xs) == 0 {
		return nil
	}
	return &matrixgen.Percentiles{P50: Quantile(xs, 0.5), P90: new(Quantile(xs, 0.9)), P99: new(Quantile(xs, 0.99))}
}

// Classify decides a measured cell's status (loops are the caller's):
// queued when the server held requests back inside the window (its waiting
// count above zero; without a count, streams idle clearly longer than in
// the context's lowest-concurrency cell, which cannot queue), else valid.
func Classify(d matrixgen.Decode, concurrency int, openedByTimeout bool, baselineActive float64) (matrixgen.Status, string) {
	if openedByTimeout {
		return matrixgen.StatusQueued, "not every stream was producing tokens by the end of the warm-up"
	}
	maxWaiting, metrics := 0.0, false
	for _, m := range d.ServerMetrics {
		if m.Waiting != nil {
			metrics = true
			maxWaiting = max(maxWaiting, *m.Waiting)
		}
	}
	if metrics && maxWaiting > 0 {
		return matrixgen.StatusQueued, fmt.Sprintf("the server reported up to %s waiting inside the window", plural.Count(int(math.Ceil(maxWaiting)), "request", "requests"))
	}
	if metrics || baselineActive == 0 || d.AvgActive == nil {
		return matrixgen.StatusValid, ""
	}
	if active := *d.AvgActive / float64(concurrency); active < queuedShare*baselineActive {
		return matrixgen.StatusQueued, fmt.Sprintf("streams produced tokens %.0f%% of the window, against %.0f%% for the context's lowest concurrency: the server held requests back",
			100*active, 100*baselineActive)
	}
	return matrixgen.StatusValid, ""
}

// queuedShare is the share of its baseline activity below which a cell is
// queued: batching slows a first token a little, holding back a whole answer.
const queuedShare = 0.8
