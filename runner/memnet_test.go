package runner

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/matrixgen/matrixgen/internal/memnet"
	"github.com/matrixgen/matrixgen/sim"
)

// memListener is an in-memory listener (internal/memnet), so the sim and
// the client can run inside a testing/synctest bubble, where time is
// virtual: a sweep of minutes takes milliseconds, and what the client
// measures agrees with what the sim did exactly, whatever else the machine
// is doing.
type memListener struct{ *memnet.Listener }

func newMemListener() memListener { return memListener{memnet.Listen()} }

// dial connects a client to the listener, each connection from an address
// of its own, as the sim tells connections apart by them.
func (l memListener) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return l.Dial(ctx, network, addr)
}

// startMemSim serves a sim in memory; call it inside synctest.Test. The
// server and engine stop when the test ends.
func startMemSim(t *testing.T, p sim.Profile) (*sim.Server, string, dialFunc) {
	t.Helper()
	s, err := sim.New(p, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln := newMemListener()
	srv := &http.Server{Handler: s, ConnState: s.ConnState}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); s.Close() })
	return s, "http://sim.test", ln.dial
}
