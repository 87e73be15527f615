package runner

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/sim"
)

// faultSweep runs 1K × {1, 2} for a second each against a sim with a
// fault switched on once the scout has been through; call it in a synctest
// bubble.
func faultSweep(t *testing.T, f sim.Faults, tweak func(*Settings)) *matrixgen.Run {
	t.Helper()
	s, url, dial := startMemSim(t, testProfile())
	settings := testSettings(url, []string{"1K"}, []int{1, 2}, time.Second)
	settings.Sweep.StallTimeout = 5 * time.Second
	if tweak != nil {
		tweak(&settings)
	}
	log := &cancelAfter{marker: "prefill 1K", cancel: func() { s.SetFaults(f) }}
	run, err := Run(context.Background(), Options{Settings: settings, File: filepath.Join(t.TempDir(), "r.json"), Log: log, dial: dial})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.buf.String())
	}
	return run
}

func TestFaultsMarkTheCell(t *testing.T) {
	tests := []struct {
		name   string
		fault  sim.Faults
		tweak  func(*Settings)
		reason string
	}{
		{"HTTP 500", sim.Faults{Every: 1, HTTPStatus: 500}, nil, "HTTP 500"},
		{"error event mid-stream", sim.Faults{Every: 1, ErrorEventAfterTokens: 5}, nil, "engine core died"},
		{"malformed chunk", sim.Faults{Every: 1, MalformedAfterTokens: 5}, nil, "malformed chunk"},
		{"connection cut mid-stream", sim.Faults{Every: 1, DropAfterTokens: 5}, func(s *Settings) { s.Sweep.ServerWait = 2 * time.Second }, ""},
		{"stall past the timeout", sim.Faults{Every: 1, StallAfterTokens: 5, StallSeconds: 3},
			func(s *Settings) { s.Sweep.StallTimeout = 500 * time.Millisecond }, "stalled: no data for 500ms"},
		{"prompt silently truncated", sim.Faults{Every: 1, TruncatePromptTo: 512}, nil, "the server cut the prompt: it reported 512 prompt tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				run := faultSweep(t, tt.fault, tt.tweak)
				if p := run.Prefill[0]; p.Status != matrixgen.StatusValid {
					t.Errorf("the scout, before the fault, is %s (%s)", p.Status, p.Reason)
				}
				for _, d := range run.Decode {
					if d.Status != matrixgen.StatusError || !strings.Contains(d.Reason, tt.reason) {
						t.Errorf("1K × %d: %s (%s), want error with %q", d.Concurrency, d.Status, d.Reason, tt.reason)
					}
				}
				if run.Incomplete {
					t.Error("the sweep stopped instead of going on past failed cells")
				}
			})
		})
	}
}

// TestRetryAfterIsHonoured: every third request gets a 429 asking for a
// second's patience; the runner waits and the cells are measured.
func TestRetryAfterIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		run := faultSweep(t, sim.Faults{Every: 3, HTTPStatus: 429, RetryAfterSeconds: 1}, nil)
		for _, d := range run.Decode {
			if d.Status != matrixgen.StatusValid && d.Status != matrixgen.StatusQueued {
				t.Errorf("1K × %d: %s (%s)", d.Concurrency, d.Status, d.Reason)
			}
		}
	})
}

func TestRetryDelay(t *testing.T) {
	retries := 0
	if wait, ok := retryDelay(&serverError{Status: 429, RetryAfter: 3 * time.Second}, &retries); !ok || wait != 3*time.Second {
		t.Errorf("429 with Retry-After 3: %v %v", wait, ok)
	}
	if wait, ok := retryDelay(&serverError{Status: 503}, &retries); !ok || wait != time.Second {
		t.Errorf("second 503 without Retry-After: %v %v, want the backoff's 1s", wait, ok)
	}
	if _, ok := retryDelay(&serverError{Status: 500}, &retries); ok {
		t.Error("a 500 was retried")
	}
	retries = maxRetries
	if _, ok := retryDelay(&serverError{Status: 429}, &retries); ok {
		t.Error("retried past the bound")
	}
	if parseRetryAfter("7") != 7*time.Second || parseRetryAfter("soon") != 0 {
		t.Error("parseRetryAfter")
	}
}

// TestContextTooLongIsOverCapacity: the server's 400 for a prompt that does
// not fit makes the cell Over capacity, in the server's words.
func TestContextTooLongIsOverCapacity(t *testing.T) {
	p := testProfile()
	p.MaxModelLen, p.KV.CapacityTokens = 2048, 100000
	_, url := startSim(t, p)
	c := newClient(url, "", 1, nil)
	c.model = "sim"
	d, _, err := c.decodeCell(context.Background(), cellPlan{
		context: 2000, concurrency: 1, prompt: strings.Repeat("word ", 2000), attempt: 1,
		sweep: Sweep{Duration: time.Second, MaxOutput: 512, WarmupTimeout: 5 * time.Second, StallTimeout: time.Minute},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != matrixgen.StatusOverCapacity || !strings.Contains(d.Reason, "maximum context length is 2048 tokens") {
		t.Errorf("%s: %s", d.Status, d.Reason)
	}
}

// restartableSim serves a sim in memory (call it inside a synctest
// bubble) that a test can take down and bring back: while it is down, a
// dial is refused as a closed port's is.
type restartableSim struct {
	s   *sim.Server
	mu  sync.Mutex
	ln  memListener
	srv *http.Server
}

func (r *restartableSim) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ln, r.srv = newMemListener(), &http.Server{Handler: r.s}
	go r.srv.Serve(r.ln)
}

func (r *restartableSim) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.srv.Close()
}

func (r *restartableSim) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	ln := r.ln
	r.mu.Unlock()
	conn, err := ln.dial(ctx, network, addr)
	if err != nil && ctx.Err() == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}
	return conn, err
}

func TestServerDiesAndComesBack(t *testing.T) { synctest.Test(t, testServerDiesAndComesBack) }

func testServerDiesAndComesBack(t *testing.T) {
	s, err := sim.New(testProfile(), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs := &restartableSim{s: s}
	rs.start()
	defer rs.kill()
	settings := testSettings("http://sim.test", []string{"1K"}, []int{1, 2}, 2*time.Second)
	settings.Sweep.ServerWait = 20 * time.Second
	log := &cancelAfter{marker: "prefill 1K", cancel: func() {
		go func() { // mid-cell: down for a second and a half, then back
			time.Sleep(1500 * time.Millisecond)
			rs.kill()
			time.Sleep(1500 * time.Millisecond)
			rs.start()
		}()
	}}
	run, err := Run(context.Background(), Options{Settings: settings, File: filepath.Join(t.TempDir(), "r.json"), Log: log, dial: rs.dial})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.buf.String())
	}
	if !strings.Contains(log.buf.String(), "the server is back") {
		t.Errorf("the runner did not wait for the server:\n%s", log.buf.String())
	}
	for _, d := range run.Decode {
		if d.Status != matrixgen.StatusValid {
			t.Errorf("1K × %d: %s (%s)", d.Concurrency, d.Status, d.Reason)
		}
	}
}

func TestServerDiesForGood(t *testing.T) { synctest.Test(t, testServerDiesForGood) }

func testServerDiesForGood(t *testing.T) {
	s, err := sim.New(testProfile(), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs := &restartableSim{s: s}
	rs.start()
	settings := testSettings("http://sim.test", []string{"1K"}, []int{1, 2}, 2*time.Second)
	settings.Sweep.ServerWait = 2 * time.Second
	file := filepath.Join(t.TempDir(), "r.json")
	log := &cancelAfter{marker: "prefill 1K", cancel: func() {
		go func() { time.Sleep(1500 * time.Millisecond); rs.kill() }()
	}}
	_, err = Run(context.Background(), Options{Settings: settings, File: file, Log: log, dial: rs.dial})
	if err == nil || !strings.Contains(err.Error(), "did not come back within 2s") {
		t.Fatalf("error %v", err)
	}
	e, lerr := runfile.Load(file)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if !e.Run.Incomplete || e.Run.Prefill[0].Status != matrixgen.StatusValid {
		t.Errorf("incomplete %v, prefill %s: the file must keep what was measured and say it is incomplete", e.Run.Incomplete, e.Run.Prefill[0].Status)
	}
}
