package runner

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// maxResends bounds how often one request is sent again because the
// connection it went out on had been closed by the server.
const maxResends = 3

// resendUnanswered sends a request again, on another connection, when the
// server closed the reused connection it went out on before answering a
// byte (llama-server closes one idle 5 s): Go's transport resends only
// idempotent requests, which a POST is not, but such a request was never
// processed, so this is no retry of a failure, and is not counted as one.
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
		if attempt > 0 && req.GetBody != nil { // a body-less request (a GET) is sent as it is
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
		if !reused.Load() || answered.Load() || req.Context().Err() != nil || attempt >= maxResends ||
			req.Body != nil && req.GetBody == nil {
			return resp, err
		}
	}
}

// bounded cuts an error answer's body at maxErrorBody.
func bounded(resp *http.Response) *http.Response {
	if resp.StatusCode >= 300 {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, maxErrorBody), resp.Body}
	}
	return resp
}
