package runner

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/sim"
)

// BenchmarkClientAccuracy runs one decode cell of N streams against an
// in-process sim (both on this machine's two cores) and reports the total
// tok/s the client measured, the sim's truth for the same window, and the
// error between them ("error_%", the target is under 1%).
func BenchmarkClientAccuracy(b *testing.B) {
	for _, tt := range []struct {
		streams int
		stepMs  float64
	}{{128, 5}, {512, 5}, {1024, 10}, {1024, 5}} {
		b.Run(fmt.Sprintf("streams=%d/step=%gms", tt.streams, tt.stepMs), func(b *testing.B) {
			var measured, truth float64
			for b.Loop() {
				measured, truth = clientAccuracy(b, tt.streams, tt.stepMs)
			}
			b.ReportMetric(measured, "tok/s")
			b.ReportMetric(truth, "truth_tok/s")
			b.ReportMetric(100*math.Abs(measured-truth)/truth, "error_%")
		})
	}
}

func clientAccuracy(b *testing.B, streams int, stepMs float64) (measured, truth float64) {
	p := sim.DefaultProfile()
	p.Decode = sim.DecodeProfile{BaseMs: stepMs, MaxBatchedTokens: 1 << 20}
	p.Prefill = sim.PrefillProfile{PeakTokS: 1e7, HalfContext: 1e9}
	p.Speculative.DraftTokens = 0
	p.KV = sim.KVProfile{CapacityTokens: 1 << 26, BlockSize: 16, MaxRunning: streams}
	s, err := sim.New(p, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	defer func() { srv.Close(); s.Close() }()
	c := newClient("http://"+ln.Addr().String(), "", streams, nil)
	c.model = p.Model
	c.chat.ignoreEOS = true
	d, w, err := c.decodeCell(context.Background(), cellPlan{
		context: 1024, concurrency: streams, prompt: "Tell me a long story about a lighthouse.", attempt: 1,
		sweep: Sweep{Duration: 3 * time.Second, MaxOutput: 1 << 19, WarmupTimeout: time.Minute, StallTimeout: time.Minute},
	}, nil)
	if err != nil || d.TotalTokS == nil {
		b.Fatalf("cell: %v %+v", err, d)
	}
	return *d.TotalTokS, sim.WindowOf(s.Trace(), w.start, w.end).TotalTokS
}
