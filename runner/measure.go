package runner

import (
	"math"
	"slices"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/measure"
)

// window is a cell's measurement window and every stream seen in the cell.
type window struct {
	start, end time.Time
	streams    []*observation
}

// figures computes a decode cell's figures (package measure defines
// them) from what the client saw of every stream of the cell.
func (w window) figures(d *matrixgen.Decode) {
	streams := make([]measure.Stream, len(w.streams))
	// The cell's source is the weakest any of its streams had to use.
	source := matrixgen.TokenSource("")
	for i, o := range w.streams {
		if len(o.events) > 0 && sourceRank(o.source) > sourceRank(source) {
			source = o.source
		}
		streams[i] = o.asStream()
	}
	f := measure.Window(streams, w.start, w.end)
	d.TotalTokS = new(f.TotalTokS)
	if len(f.PerRequestTokS) > 0 {
		d.PerRequestTokS = new(measure.Median(f.PerRequestTokS))
	}
	d.TTFTMs = measure.Percentiles(f.TTFTMs)
	d.TBTMs = measure.Percentiles(f.TBTMs)
	d.AvgActive = new(f.AvgActive)
	d.Completed = new(f.Completed)
	d.OutputTokens = new(f.OutputTokens)
	d.WindowSeconds = new(f.Length.Seconds())
	d.TokenSource = source
	if len(f.SameRequests) > 0 {
		d.ClientRateOfServerTimed = new(measure.Median(f.SameRequests))
	}
	if len(f.ServerRates) > 0 {
		d.ServerPerRequestTokS = new(measure.Median(f.ServerRates))
	}
	d.PerSecondTokens = f.PerSecond
}

// asStream is the observation as the measurement core reads it.
func (o *observation) asStream() measure.Stream {
	s := measure.Stream{Sent: o.sent, FirstText: o.firstText, End: o.end, Complete: o.complete(),
		ServerTokS: o.serverTokS, Tokens: o.tokens(), Events: make([]measure.Event, len(o.events))}
	for i, e := range o.events {
		s.Events[i] = measure.Event{At: e.at, Tokens: e.tokens}
	}
	return s
}

// sourceRank orders token sources from best (continuous usage) to last
// resort (counting chunks).
func sourceRank(s matrixgen.TokenSource) int {
	return 1 + slices.Index([]matrixgen.TokenSource{matrixgen.TokensContinuousUsage, matrixgen.TokensTimingsPerToken,
		matrixgen.TokensFinalUsage, matrixgen.TokensServerMetrics, matrixgen.TokensChunks}, s) // 0: none
}

// counterCount sets the growth of the server's token counter over the
// window beside the client's count of the same tokens.
func (w window) counterCount(c serverCounter, grew float64, windowTokens int) *matrixgen.ServerCount {
	if grew < 0 {
		return nil // the server restarted: its counter began again
	}
	sc := &matrixgen.ServerCount{Source: c.metric + " over the window", ServerTokens: int(math.Round(grew)), ClientTokens: windowTokens}
	if c.completedOnly {
		sc.ClientTokens = 0
		done := 0
		for _, o := range w.streams {
			if o.complete() && !o.end.Before(w.start) && o.end.Before(w.end) {
				sc.ClientTokens += o.clientTokens
				done++
			}
		}
		if done == 0 {
			return nil // nothing completed, nothing to set beside the counter
		}
		sc.Source = c.metric + " over the window, which counts a request as it completes: beside the tokens of the requests that completed in it"
	}
	return sc
}

// requestCount sets the server's own count of each request of the cell
// that completed (Ollama's eval_count) beside the client's; nil if none.
func (w window) requestCount() *matrixgen.ServerCount {
	sc, counted := &matrixgen.ServerCount{}, false
	for _, o := range w.streams {
		if o.complete() && o.serverCounted {
			sc.ServerTokens += o.serverTokens
			sc.ClientTokens += o.clientTokens
			counted = true
		}
	}
	if !counted {
		return nil
	}
	sc.Source = "the server's own count (eval_count) of each request of the cell that completed"
	return sc
}
