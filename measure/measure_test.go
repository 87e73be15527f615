package measure

import (
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
)

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, tt := range []struct{ q, want float64 }{{0, 1}, {0.5, 3}, {1, 5}, {0.9, 4.6}, {0.25, 2}} {
		if got := Quantile(xs, tt.q); got < tt.want-1e-12 || got > tt.want+1e-12 {
			t.Errorf("q%g = %g, want %g", tt.q, got, tt.want)
		}
	}
	if Quantile(nil, 0.5) != 0 || Percentiles(nil) != nil {
		t.Error("no values should give no figure")
	}
	if xs[0] != 5 {
		t.Error("Quantile sorted its caller's slice")
	}
	if p := Percentiles([]float64{10, 20}); p.P50 != 15 || *p.P90 != 19 || *p.P99 < 19.89 || *p.P99 > 19.91 {
		t.Errorf("percentiles of 10, 20: %+v", p)
	}
}

// TestWindowEdges: an event at the window's start counts, one at its end
// does not; a stream that sent nothing inside has a TTFT but no rate; the
// last few milliseconds go into the last second; a request that ended on
// its end token at once has a server rate and no span of ours, so it is in
// neither list of the same-request comparison.
func TestWindowEdges(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	start, end := at(1000), at(3004)
	streams := []Stream{
		{Sent: at(0), FirstText: at(200), Events: []Event{{at(200), 1}, {at(1000), 3}, {at(2999), 2}, {at(3002), 4}, {at(3004), 50}}},
		{Sent: at(100), FirstText: at(900), End: at(950), Complete: true, Events: []Event{{at(900), 5}}, ServerTokS: 99, Tokens: 5},
		{Sent: at(1500), FirstText: at(1500), End: at(1500), Complete: true, ServerTokS: 42, Tokens: 1},
		{Sent: at(2000), FirstText: at(2500), End: at(2900), Complete: true, Events: []Event{{at(2500), 1}, {at(2900), 4}}, ServerTokS: 10, Tokens: 5},
	}
	f := Window(streams, start, end)
	if f.OutputTokens != 3+2+4+1+4 || len(f.PerSecond) != 2 || f.PerSecond[0] != 3 || f.PerSecond[1] != 2+4+1+4 {
		t.Errorf("%d tokens, per second %v", f.OutputTokens, f.PerSecond)
	}
	if len(f.TTFTMs) != 4 || f.Completed != 2 {
		t.Errorf("TTFT %v, %d completed", f.TTFTMs, f.Completed)
	}
	if len(f.ServerRates) != 2 || f.ServerRates[0] != 99 || f.SameRequests[1] != 5/0.4 {
		t.Errorf("server rates %v, ours %v", f.ServerRates, f.SameRequests)
	}
	// Stream 1 produced from the window's start to its end; stream 4 from
	// its first text to its end.
	if len(f.PerRequestTokS) != 2 || f.PerRequestTokS[1] != 5/0.4 {
		t.Errorf("per request %v", f.PerRequestTokS)
	}
}

// TestClassify: the server's own waiting count decides where it has one;
// without it, streams active clearly less than at the lowest concurrency
// mean the server held requests back.
func TestClassify(t *testing.T) {
	waiting := func(n float64) matrixgen.Decode {
		return matrixgen.Decode{AvgActive: new(4.0), ServerMetrics: []matrixgen.MetricsSample{{Waiting: &n}}}
	}
	active := func(a float64) matrixgen.Decode { return matrixgen.Decode{AvgActive: &a} }
	for _, tt := range []struct {
		name     string
		d        matrixgen.Decode
		timedOut bool
		baseline float64
		want     matrixgen.Status
	}{
		{"warm-up timed out", active(4), true, 1, matrixgen.StatusQueued},
		{"server counted waiting", waiting(2), false, 1, matrixgen.StatusQueued},
		{"server counted none", waiting(0), false, 1, matrixgen.StatusValid},
		{"active as the baseline", active(3.9), false, 1, matrixgen.StatusValid},
		{"active 70 % of the baseline", active(2.8), false, 1, matrixgen.StatusQueued},
		{"no baseline", active(1), false, 0, matrixgen.StatusValid},
	} {
		if got, why := Classify(tt.d, 4, tt.timedOut, tt.baseline); got != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.name, got, why, tt.want)
		}
	}
}
