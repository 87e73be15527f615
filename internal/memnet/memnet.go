// Package memnet is a network in memory for tests, a listener whose
// connections are net.Pipe pairs, so a server and its client run inside a
// testing/synctest bubble, on virtual time, whatever the machine is doing.
package memnet

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// Listener hands each Dial's server end to Accept.
type Listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	dials  atomic.Int64
}

// Listen is a new listener, open until Close.
func Listen() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for the next connection a client dials.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and refuses later dials.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is the listener's made-up address.
func (l *Listener) Addr() net.Addr { return addr("mem.test:80") }

// Dial connects a client to the listener through a pipe, whatever the
// address (an http.Transport's DialContext), with a remote address its own.
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- &conn{Conn: server, remote: addr("client-" + strconv.FormatInt(l.dials.Add(1), 10) + ":1")}:
		return client, nil
	case <-l.closed:
		return nil, errors.New("memnet: the listener is closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Client is an HTTP client whose every request goes to the listener.
func (l *Listener) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: l.Dial}}
}

type addr string

func (a addr) Network() string { return "mem" }
func (a addr) String() string  { return string(a) }

// conn is the server's end of a pipe, with the client's address.
type conn struct {
	net.Conn
	remote net.Addr
}

func (c *conn) RemoteAddr() net.Addr { return c.remote }
