package runner

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// maxResends bounds how often one request is sent again because the
// connection it went out on had been closed by the server.
const maxResends = 3

// resendUnanswered sends a request again, on another connection, when the
// server closed the connection it went out on before answering a byte.
//
// Servers close idle keep-alive connections (llama-server after 5 s idle
// and after 100 requests); a request that goes out on one just as it closes
// fails with "server closed idle connection" or EOF. Go's transport sends
// such a request again only when it is idempotent, which a POST is not. But
// a request the server never answered on a reused connection was never
// processed: the server closed the connection, it did not fail. Sending it
// again is not a retry of a failure, and is not counted as one.
type resendUnanswered struct{ next http.RoundTripper }

func (t resendUnanswered) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		// The transport calls these from its connection's goroutines, which
		// may still run when RoundTrip has returned its error.
		var reused, answered atomic.Bool
		trace := &httptrace.ClientTrace{
			GotConn:              func(info httptrace.GotConnInfo) { reused.Store(info.Reused) },
			GotFirstResponseByte: func() { answered.Store(true) },
		}
		r := req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		if attempt > 0 {
			if req.GetBody == nil {
				return nil, errors.New("cannot send the request again: its body cannot be read twice")
			}
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		resp, err := t.next.RoundTrip(r)
		if err == nil {
			return bounded(resp), nil
		}
		if !reused.Load() || answered.Load() || req.Context().Err() != nil || attempt >= maxResends {
			return resp, err
		}
		if req.Body != nil && req.GetBody == nil {
			return resp, err
		}
	}
}

// bounded limits what an error answer may make the client hold: its body
// is cut at maxErrorBody. An event stream is bounded where it is read
// (sse.go), answers read as JSON where they are read.
func bounded(resp *http.Response) *http.Response {
	if resp.StatusCode >= 300 {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, maxErrorBody), resp.Body}
	}
	return resp
}
