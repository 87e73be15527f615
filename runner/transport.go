package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
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

// bounded limits what a response may make the client hold: an error's body
// is cut at maxErrorBody, and an event stream passes through sseFilter.
// Answers read as JSON are limited where they are read.
func bounded(resp *http.Response) *http.Response {
	switch {
	case resp.StatusCode >= 300:
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, maxErrorBody), resp.Body}
	case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		resp.Body = newSSEFilter(resp.Body)
	}
	return resp
}

// maxSSELine bounds one line of an event stream: a chunk of a few tokens
// is a few hundred bytes; a megabyte is no chunk.
const maxSSELine = 1 << 20

// sseFilter passes an event stream on line by line. It drops comment lines
// (": keep-alive"), which go-openai would otherwise keep, every one, while
// it waits for data, and fails a line longer than maxSSELine instead of
// holding it: a server could send gigabytes of either.
type sseFilter struct {
	src      io.ReadCloser
	r        *bufio.Reader
	line     []byte // what is left of the line being passed on
	err      error
	comments int // bytes of comments since the last other line
}

// maxComments bounds the comments a stream may send in a row: a server
// sends a keep-alive every few seconds, not megabytes of them.
const maxComments = 1 << 20

func newSSEFilter(body io.ReadCloser) *sseFilter {
	return &sseFilter{src: body, r: bufio.NewReaderSize(body, 64<<10)}
}

func (f *sseFilter) Read(p []byte) (int, error) {
	for len(f.line) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := readLine(f.r, maxSSELine)
		if err != nil && !errors.Is(err, io.EOF) {
			f.err = fmt.Errorf("event stream: %w", err)
		} else if err != nil {
			f.err = err
		}
		comment := bytes.HasPrefix(line, []byte(":"))
		if comment || len(bytes.TrimSpace(line)) == 0 {
			// Comments and blank lines carry nothing; a flood of them is
			// a server stalling while it seems to talk.
			if f.comments += len(line); f.comments > maxComments && f.err == nil {
				f.err = fmt.Errorf("event stream: more than %s of comments and no data", byteSize(maxComments))
			}
		} else {
			f.comments = 0
		}
		if comment {
			continue // nothing for the reader
		}
		f.line = line
	}
	n := copy(p, f.line)
	f.line = f.line[n:]
	return n, nil
}

func (f *sseFilter) Close() error { return f.src.Close() }
