package runner

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
)

// closedOnce answers as a server that had closed the reused connection
// the first try went out on, then answers on a fresh one.
type closedOnce struct{ tries int }

func (c *closedOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	c.tries++
	httptrace.ContextClientTrace(req.Context()).GotConn(httptrace.GotConnInfo{Reused: c.tries == 1})
	if c.tries == 1 {
		return nil, io.ErrUnexpectedEOF
	}
	if req.Body != nil {
		if b, _ := io.ReadAll(req.Body); string(b) != "{}" {
			return nil, io.ErrShortBuffer
		}
	}
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: req}, nil
}

// TestResendBodyless: a request the server never answered, because it
// had closed the reused connection, goes again, body and all; a GET (no
// body) was refused as one whose body could not be read twice.
func TestResendBodyless(t *testing.T) {
	get, _ := http.NewRequest("GET", "http://server.invalid/metrics", nil)
	post, _ := http.NewRequest("POST", "http://server.invalid/v1/chat/completions", strings.NewReader("{}"))
	for _, req := range []*http.Request{get, post} {
		next := &closedOnce{}
		resp, err := resendUnanswered{next}.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 || next.tries != 2 {
			t.Errorf("%s: %v after %d tries, want an answer after 2", req.Method, err, next.tries)
		}
	}
	// A body that cannot be read again is not sent again.
	once, _ := http.NewRequest("POST", "http://server.invalid/v1/chat/completions", io.NopCloser(strings.NewReader("{}")))
	next := &closedOnce{}
	if _, err := (resendUnanswered{next}).RoundTrip(once); err == nil || next.tries != 1 {
		t.Errorf("a body read once: %v after %d tries, want the first error", err, next.tries)
	}
}
