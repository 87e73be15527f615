package runner

import (
	"errors"
	"net/http"
	"net/http/httptrace"
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
		var reused, answered bool
		trace := &httptrace.ClientTrace{
			GotConn:              func(info httptrace.GotConnInfo) { reused = info.Reused },
			GotFirstResponseByte: func() { answered = true },
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
		if err == nil || !reused || answered || req.Context().Err() != nil || attempt >= maxResends {
			return resp, err
		}
		if req.Body != nil && req.GetBody == nil {
			return resp, err
		}
	}
}
