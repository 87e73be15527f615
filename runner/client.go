package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen/internal/term"
)

// client talks to one inference server.
type client struct {
	base   string
	apiKey string
	http   *http.Client
	model  string
	chat   chatOptions
	// eng is the engine the probe recognised: what to send it, how to read
	// it. Generic until the probe has run.
	eng engine
	// jsonTimeout bounds each request for a small answer.
	jsonTimeout time.Duration
}

// dialFunc opens a connection; tests pass one that connects in memory.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// newClient makes a client sized for a sweep: a connection per stream,
// per-request deadlines, no overall timeout (a 1M-token prefill takes
// minutes). dial is nil but in tests that connect in memory.
func newClient(baseURL, apiKey string, maxStreams int, dial dialFunc) *client {
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         dial,
		MaxIdleConns:        maxStreams + 16,
		MaxIdleConnsPerHost: maxStreams + 16,
		IdleConnTimeout:     90 * time.Second,
		ReadBufferSize:      64 << 10,
		WriteBufferSize:     256 << 10,
		DisableCompression:  true,
	}
	hc := &http.Client{Transport: resendUnanswered{transport}}
	// The server's root: OpenAI's clients are given .../v1, and its routes
	// are joined to the root (/v1/models, /metrics, /health).
	base := strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1")
	c := &client{base: base, apiKey: apiKey, http: hc, jsonTimeout: defaultJSONTimeout, eng: genericEngine{}}
	hc.CheckRedirect = c.redirect
	return c
}

// redirect follows a redirect as net/http does, but the API key goes only
// to the server's own origin, not the same host on another port or scheme.
func (c *client) redirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if !c.sameOrigin(req.URL) {
		req.Header.Del("Authorization")
	}
	return nil
}

// parseRetryAfter reads a Retry-After of seconds or an HTTP date.
func parseRetryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// defaultJSONTimeout bounds a request for a small answer: a server that
// sends one byte a second gets an error, not a run that hangs.
const defaultJSONTimeout = time.Minute

// send makes one request of the server and returns its 2xx answer, whose
// body the caller closes. url is a path on the server or a full URL; body,
// when not nil, is sent as JSON. Any other status is a *serverError.
func (c *client) send(ctx context.Context, method, url string, body []byte, accept string) (*http.Response, error) {
	if strings.HasPrefix(url, "/") {
		url = c.base + url
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if c.apiKey != "" && c.sameOrigin(req.URL) {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return nil, &serverError{Status: resp.StatusCode, Message: errorMessage(text),
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"))}
}

// call sends one request for a small JSON answer: body (when not nil)
// marshalled, the answer (at most limit bytes) decoded into v.
func (c *client) call(ctx context.Context, method, path string, body any, v any, limit int64) error {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	answer, err := c.fetch(ctx, method, path, data, limit)
	if se, ok := err.(*serverError); ok {
		se.What = method + " " + path
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(answer, v)
}

// fetch sends one request for a small answer, within jsonTimeout, and
// reads it whole: at most limit bytes.
func (c *client) fetch(ctx context.Context, method, path string, body []byte, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.jsonTimeout)
	defer cancel()
	resp, err := c.send(ctx, method, path, body, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readLimited(resp.Body, limit, method+" "+path)
}

// getJSON GETs path into v.
func (c *client) getJSON(ctx context.Context, path string, v any) error {
	return c.call(ctx, "GET", path, nil, v, maxJSONInfo)
}

// postJSON POSTs a JSON body to path and decodes the answer into v.
func (c *client) postJSON(ctx context.Context, path string, body, v any) error {
	return c.call(ctx, "POST", path, body, v, maxJSONAnswer)
}

// sameOrigin reports whether u is on the server's own scheme, host and
// port: the API key goes there and nowhere else.
func (c *client) sameOrigin(u *neturl.URL) bool {
	base, err := neturl.Parse(c.base)
	return err == nil && strings.EqualFold(base.Scheme, u.Scheme) && strings.EqualFold(base.Host, u.Host)
}

// Limits on what the runner reads from a server, each sized for its
// purpose: a server that sends gigabytes gets an error, not the memory.
const (
	maxJSONAnswer = 32 << 20 // /tokenize of a million-token prompt lists a million ids
	// maxJSONInfo bounds what a server says of itself (/v1/models, /props,
	// /slots, /version, …): decoded, a byte of JSON can cost forty (a
	// 32 MB list of empty models took 2 GB).
	maxJSONInfo  = 1 << 20
	maxErrorBody = 64 << 10 // an error's text, as much as anyone reads
	maxMetrics   = 4 << 20  // Prometheus text of a large server, with room to spare
)

// readLimited reads all of r, failing when it holds more than limit bytes.
func readLimited(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: the answer is longer than %s, more than any server sends; refused", what, byteSize(limit))
	}
	return data, nil
}

func byteSize(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d KB", n>>10)
}

// keyHint adds to a probe refused for want of an API key what to do.
func keyHint(err error, keyEnv string, keySent bool) error {
	if !wantsKey(err) {
		return err
	}
	switch {
	case keySent:
		return fmt.Errorf("%w: the server refused the API key in %s", err, keyEnv)
	case keyEnv != "":
		return fmt.Errorf("%w: the server wants an API key; set %s to it ([server] api_key_env names that variable)", err, keyEnv)
	}
	return fmt.Errorf("%w: the server wants an API key; put it in a variable and name that with -api-key-env or [server] api_key_env", err)
}

// wantsKey reports whether err is a server's refusal for want of a key.
func wantsKey(err error) bool {
	var se *serverError
	return errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden)
}

// serverError is an HTTP error the server answered with.
type serverError struct {
	What       string // "GET /v1/models", for a small request's error; "" for a stream's
	Status     int
	Message    string
	RetryAfter time.Duration // from a 429 or 503's Retry-After
}

// Error gives the server's words on one line, control characters escaped:
// a stream's as "HTTP 503: …", a small request's after what it asked
// ("GET /v1/models: 401 Unauthorized"), with the words when they add any.
func (e *serverError) Error() string {
	if e.What == "" {
		return fmt.Sprintf("HTTP %d: %s", e.Status, term.Line(e.Message))
	}
	s := fmt.Sprintf("%s: %d %s", e.What, e.Status, http.StatusText(e.Status))
	if e.Message != "" && !strings.EqualFold(e.Message, http.StatusText(e.Status)) {
		s += fmt.Sprintf(": %.4000s", term.Line(e.Message))
	}
	return s
}
