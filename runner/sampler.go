package runner

import (
	"context"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/prom"
)

// metricsSampler reads the server's /metrics through a cell's window.
type metricsSampler struct {
	c        *client
	url      string
	enabled  bool
	interval time.Duration
}

// during samples from start for length in the background; the returned
// function stops sampling and gives the samples.
func (s *metricsSampler) during(ctx context.Context, start time.Time, length time.Duration) func() []matrixgen.MetricsSample {
	if s == nil || !s.enabled {
		return func() []matrixgen.MetricsSample { return nil }
	}
	ctx, cancel := context.WithCancel(ctx)
	names := s.c.eng.metrics()
	var out []matrixgen.MetricsSample // the caller's once done is closed
	done := make(chan struct{})
	go func() {
		defer close(done)
		var prevDraft, prevAccepted float64
		tick := time.NewTicker(s.interval)
		defer tick.Stop()
		for first := true; ; first = false {
			if !first {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
			at := time.Since(start)
			if at > length {
				return
			}
			samples, err := s.c.metrics(ctx, s.url)
			if err != nil {
				continue
			}
			m := matrixgen.MetricsSample{AtSeconds: at.Seconds()}
			m.Running = metric(samples, names.running...)
			m.Waiting = metric(samples, names.waiting...)
			m.KVCacheUsage = metric(samples, names.kvUsage...)
			m.Preemptions = metric(samples, names.preemptions...)
			draft, okD := prom.Sum(samples, names.draft)
			accepted, okA := prom.Sum(samples, names.accepted)
			if okD && okA && !first && draft > prevDraft {
				m.SpecAcceptanceRate = new((accepted - prevAccepted) / (draft - prevDraft))
			}
			prevDraft, prevAccepted = draft, accepted
			out = append(out, m)
		}
	}()
	return func() []matrixgen.MetricsSample {
		cancel()
		<-done
		return out
	}
}

// metric is the first of the named metrics the server reports, summed
// over its engines.
func metric(samples []prom.Sample, names ...string) *float64 {
	for _, name := range names {
		if v, ok := prom.Sum(samples, name); ok {
			return new(v)
		}
	}
	return nil
}

// counter reads one counter of the server's metrics, summed over engines.
func (s *metricsSampler) counter(ctx context.Context, name string) (float64, bool) {
	if s == nil || !s.enabled || name == "" {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	samples, err := s.c.metrics(ctx, s.url)
	if err != nil {
		return 0, false
	}
	return prom.Sum(samples, name)
}

// serverCounter is the counter of generated tokens an engine keeps, read at
// a window's open and close for the server's count beside the client's.
type serverCounter struct {
	metric string
	// completedOnly: the counter grows when a request completes, by all its
	// tokens (llama-server), so it is set beside the tokens of the requests
	// that completed inside the window.
	completedOnly bool
}
