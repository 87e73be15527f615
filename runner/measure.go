package runner

import (
	"math"
	"slices"
	"time"

	"github.com/matrixgen/matrixgen"
)

// window is a cell's measurement window and every stream seen in the cell.
type window struct {
	start, end time.Time
	streams    []*observation
}

// figures computes a decode cell's figures as product.md defines them:
// tokens that arrived inside the window, per-stream rates measured per
// stream, latencies as medians (and tails) over requests.
func (w window) figures(d *matrixgen.Decode) {
	length := w.end.Sub(w.start)
	total := 0
	var perRequest, serverRates, sameRequests []float64
	var ttft, tbt []float64
	var active time.Duration
	completed := 0
	// One count per whole second; the few milliseconds a window overruns its
	// length on the clock go into its last second.
	perSecond := make([]int, max(1, int(math.Round(length.Seconds()))))
	// The cell's source is the weakest any of its streams had to use.
	source := matrixgen.TokenSource("")
	for _, o := range w.streams {
		if len(o.events) > 0 && sourceRank(o.source) > sourceRank(source) {
			source = o.source
		}
		if !o.firstText.IsZero() && o.firstText.Before(w.end) {
			ttft = append(ttft, ms(o.firstText.Sub(o.sent)))
		}
		in, first, last := 0, time.Time{}, time.Time{}
		afterFirst := 0
		for _, e := range o.events {
			if e.at.Before(w.start) || !e.at.Before(w.end) {
				continue
			}
			in += e.tokens
			if first.IsZero() {
				first = e.at
			} else {
				afterFirst += e.tokens
			}
			last = e.at
			perSecond[min(int(e.at.Sub(w.start)/time.Second), len(perSecond)-1)] += e.tokens
		}
		total += in
		if afterFirst > 0 {
			tbt = append(tbt, ms(last.Sub(first))/float64(afterFirst))
		}
		if o.complete() && !o.end.Before(w.start) && o.end.Before(w.end) {
			completed++
		}
		// The server's rate and ours for exactly the same requests: those
		// that completed with text (a request that ended at once, on its end
		// token, has a server rate and no span of ours; letting it into one
		// median and not the other moved it by several percent).
		if span := o.end.Sub(o.firstText); o.complete() && o.serverTokS > 0 && !o.firstText.IsZero() && span > 0 {
			serverRates = append(serverRates, o.serverTokS)
			sameRequests = append(sameRequests, float64(o.tokens())/span.Seconds())
		}
		if o.firstText.IsZero() {
			continue
		}
		from := later(o.firstText, w.start)
		to := w.end
		if !o.end.IsZero() && o.end.Before(w.end) {
			to = o.end
		}
		if to.After(from) {
			active += to.Sub(from)
			if in > 0 {
				perRequest = append(perRequest, float64(in)/to.Sub(from).Seconds())
			}
		}
	}
	d.TotalTokS = new(float64(total) / length.Seconds())
	if len(perRequest) > 0 {
		d.PerRequestTokS = new(quantile(perRequest, 0.5))
	}
	d.TTFTMs = percentiles(ttft)
	d.TBTMs = percentiles(tbt)
	d.AvgActive = new(float64(active) / float64(length))
	d.Completed = new(completed)
	d.OutputTokens = new(total)
	d.WindowSeconds = new(length.Seconds())
	d.TokenSource = source
	if len(sameRequests) > 0 {
		d.ClientRateOfServerTimed = new(quantile(sameRequests, 0.5))
	}
	if len(serverRates) > 0 {
		d.ServerPerRequestTokS = new(quantile(serverRates, 0.5))
	}
	d.PerSecondTokens = perSecond
}

// sourceRank orders token sources from best (continuous usage) to last
// resort (counting chunks).
func sourceRank(s matrixgen.TokenSource) int {
	switch s {
	case matrixgen.TokensContinuousUsage:
		return 1
	case matrixgen.TokensTimingsPerToken:
		return 2
	case matrixgen.TokensFinalUsage:
		return 3
	case matrixgen.TokensServerMetrics:
		return 4
	case matrixgen.TokensChunks:
		return 5
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func percentiles(xs []float64) *matrixgen.Percentiles {
	if len(xs) == 0 {
		return nil
	}
	return &matrixgen.Percentiles{P50: quantile(xs, 0.5), P90: new(quantile(xs, 0.9)), P99: new(quantile(xs, 0.99))}
}

// quantile is the q-quantile of xs by linear interpolation between ranks.
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (s[lo+1]-s[lo])*(pos-float64(lo))
}

// counterCount sets the growth of the server's token counter over the
// window beside the client's count of the same: every token of the window,
// or, for a counter that grows as requests complete, the tokens of the
// requests that completed inside it.
func (w window) counterCount(c serverCounter, grew float64, windowTokens int) *matrixgen.ServerCount {
	if grew < 0 {
		return nil // the server restarted: its counter began again
	}
	sc := &matrixgen.ServerCount{Source: c.metric + " over the window", ServerTokens: int(math.Round(grew)), ClientTokens: windowTokens}
	if c.completedOnly {
		done := w.completedInside()
		if len(done) == 0 {
			return nil // nothing completed, nothing to set beside the counter
		}
		sc.Source = c.metric + " over the window, which counts a request as it completes: beside the tokens of the requests that completed in it"
		sc.ClientTokens = 0
		for _, o := range done {
			sc.ClientTokens += o.clientTokens
		}
	}
	return sc
}

// requestCount sets the server's own count of each request of the cell
// that completed (Ollama's eval_count), in its window or before it opened,
// beside the client's count of the same requests; nil when the server gives
// none. A slow cell may complete no request inside its window; the requests
// it completed while warming up still tell whether the counts agree.
func (w window) requestCount() *matrixgen.ServerCount {
	var sc *matrixgen.ServerCount
	for _, o := range w.streams {
		if !o.complete() {
			continue
		}
		if !o.serverCounted {
			continue
		}
		if sc == nil {
			sc = &matrixgen.ServerCount{}
		}
		sc.ServerTokens += o.serverTokens
		sc.ClientTokens += o.clientTokens
	}
	if sc != nil {
		sc.Source = "the server's own count (eval_count) of each request of the cell that completed"
	}
	return sc
}

// completedInside lists the streams that ended as the server meant inside
// the window.
func (w window) completedInside() []*observation {
	var out []*observation
	for _, o := range w.streams {
		if o.complete() && !o.end.Before(w.start) && o.end.Before(w.end) {
			out = append(out, o)
		}
	}
	return out
}
