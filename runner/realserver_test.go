package runner

import (
	"context"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/runner/sim"
)

// The tests in this file each reproduce, with the sim, something a real
// server did that the sim at first did not: each fails without the fix it
// names.

// TestClosedIdleConnections: llama-server closes keep-alive connections
// idle for 5 s; a request sent on one as it closes is lost unanswered, and
// Go's transport does not resend a POST. The runner resends a request the
// server never answered on a reused connection.
func TestClosedIdleConnections(t *testing.T) {
	p := testProfile()
	p.Flavour = sim.FlavourLlamaCpp
	p.KV.MaxRunning = 4
	p.KV.CapacityTokens = 1 << 22
	// Closed sooner than llama-server does, so a one-second sweep meets it:
	// the metrics sampler's connection idles a second between reads.
	p.Connections = sim.ConnectionProfile{IdleCloseSeconds: 0.2, MaxRequests: 100}
	s, url := startSim(t, p)
	run, _ := sweep(t, testSettings(url, []string{"1K"}, []int{1, 2, 4}, time.Second))
	if s.LostRequests() == 0 {
		t.Fatal("no request met a closed connection: the test proves nothing")
	}
	t.Logf("%d requests met a closed connection", s.LostRequests())
	for _, d := range run.Decode {
		if d.Status != matrixgen.StatusValid {
			t.Errorf("1K × %d: %s (%s)", d.Concurrency, d.Status, d.Reason)
		}
	}
}

// TestResendUnanswered sends two requests on one keep-alive connection with
// a pause between them longer than the server keeps idle connections.
func TestResendUnanswered(t *testing.T) {
	p := testProfile()
	p.Connections = sim.ConnectionProfile{IdleCloseSeconds: 0.05}
	s, url := startSim(t, p)
	c := NewClient(url, "", 1)
	var models struct{ Data []any }
	for i := range 2 {
		if err := c.getJSON(context.Background(), "/v1/models", &models); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.postJSON(context.Background(), "/tokenize", map[string]any{"prompt": "hello"}, &struct{}{}); err != nil {
		t.Fatalf("POST after an idle pause: %v", err)
	}
	if s.LostRequests() != 2 {
		t.Errorf("%d requests met a closed connection, want 2", s.LostRequests())
	}
}
