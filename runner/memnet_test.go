package runner

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/matrixgen/matrixgen/sim"
)

// memListener is a net.Listener whose connections are in-memory pipes, so
// the sim and the client can run inside a testing/synctest bubble, where
// time is virtual: a sweep of minutes takes milliseconds, and what the
// client measures agrees with what the sim did exactly, whatever else the
// machine is doing.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	next   int
	mu     sync.Mutex
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr("sim.test:80") }

// dial connects a client to the listener through a pipe. Each connection
// gets an address of its own, as the sim tells connections apart by them.
func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	l.mu.Lock()
	l.next++
	n := l.next
	l.mu.Unlock()
	client, server := net.Pipe()
	addr := memAddr("client-" + strconv.Itoa(n) + ":1")
	select {
	case l.conns <- &memConn{Conn: server, remote: addr}:
		return client, nil
	case <-l.closed:
		return nil, errors.New("the in-memory server is closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type memAddr string

func (a memAddr) Network() string { return "mem" }
func (a memAddr) String() string  { return string(a) }

// memConn is the server's end of a pipe, with the client's address.
type memConn struct {
	net.Conn
	remote net.Addr
}

func (c *memConn) RemoteAddr() net.Addr { return c.remote }

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
