package sim

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/measure"
)

// sustain runs streams closed-loop streams against a sim whose steps take
// stepMs, for a window after a warm-up, and returns the tokens per second
// written inside the window, what the profile's schedule promised, and the
// engine's timing.
func sustain(tb testing.TB, streams int, stepMs float64, window time.Duration) (written, promised float64, timing Timing, delay time.Duration, perChunk float64) {
	p := fastProfile()
	p.Decode = DecodeProfile{BaseMs: stepMs, MaxBatchedTokens: 1 << 20}
	p.KV.MaxRunning = streams
	p.KV.CapacityTokens = 1 << 24
	s, err := New(p, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	ln := listen(tb)
	go srv.Serve(ln)
	defer func() { srv.Close(); s.Close() }()
	url := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, MaxConnsPerHost: 0}}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	body := chatBody(8, `"stream":true,"max_tokens":1000000,"ignore_eos":true`)
	for range streams {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(body))
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 64<<10)
			for {
				if _, err := r.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
					return
				}
			}
		})
	}
	warm := time.Now().Add(5 * time.Second)
	for running(s) < streams {
		if time.Now().After(warm) {
			tb.Fatalf("only %d of %d streams started", running(s), streams)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	before := s.Timing()
	start := time.Now()
	time.Sleep(window)
	end := time.Now()
	after := s.Timing()
	cancel()
	wg.Wait()
	traces := s.Trace()
	w := WindowOf(traces, start, end)
	var delays []float64
	chunks := 0
	for _, rt := range traces {
		for _, c := range rt.Chunks {
			if !c.At.Before(start) && c.At.Before(end) {
				delays = append(delays, float64(c.At.Sub(c.Scheduled)))
				chunks++
			}
		}
	}
	delay = time.Duration(measure.Quantile(delays, 0.99))
	if chunks > 0 {
		perChunk = float64(w.OutputTokens) / float64(chunks)
	}
	promised = float64(streams) / (stepMs / 1000)
	timing = Timing{
		Steps: after.Steps - before.Steps, LateSteps: after.LateSteps - before.LateSteps,
		Scheduled: after.Scheduled - before.Scheduled, Lost: after.Lost - before.Lost, MaxLag: after.MaxLag,
	}
	return w.TotalTokS, promised, timing, delay, perChunk
}

func running(s *Server) int {
	c, _ := s.e.snapshot()
	return c.running
}

// BenchmarkSustain reports, for each stream count, the tokens per second the
// sim wrote, how far that fell short of its schedule ("drift_%"; the sim
// keeps its timing where it stays under 1%), the 99th percentile of the time
// from a token's scheduled production to its chunk's write, and tokens per
// chunk (above 1 without speculation: writers fell behind and merged steps). One stream makes 1,000 tok/s
// here (1 ms steps) at 64 streams, and 100 tok/s (10 ms steps) beyond.
func BenchmarkSustain(b *testing.B) {
	for _, tt := range []struct {
		streams int
		stepMs  float64
	}{{64, 1}, {256, 5}, {512, 5}, {1024, 10}, {1024, 5}} {
		b.Run(fmt.Sprintf("streams=%d/step=%gms", tt.streams, tt.stepMs), func(b *testing.B) {
			var written, promised float64
			var timing Timing
			var delay time.Duration
			var perChunk float64
			for b.Loop() {
				written, promised, timing, delay, perChunk = sustain(b, tt.streams, tt.stepMs, 3*time.Second)
			}
			b.ReportMetric(float64(delay.Microseconds())/1000, "p99_write_delay_ms")
			b.ReportMetric(perChunk, "tokens/chunk")
			b.ReportMetric(written, "tok/s")
			b.ReportMetric(100*(1-written/promised), "drift_%")
			b.ReportMetric(float64(timing.LateSteps), "late_steps")
		})
	}
}

// BenchmarkTokenizePrompt: counting and hashing a 128K-word prompt, what
// the sim does for every request before its prefill.
func BenchmarkTokenizePrompt(b *testing.B) {
	text := strings.Repeat("alpha bravo\tcharlie  delta\necho ", 128<<10/5)
	msgs := []message{{Role: "user", Content: text}}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tokenizePrompt(msgs, "", 16, 1)
	}
}
