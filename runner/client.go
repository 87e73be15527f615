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

// client talks to one inference server: chat streams through go-openai, the
// engine's own endpoints (/tokenize, /metrics, /version) through net/http.
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

// newClient makes a client sized for a sweep: a connection per stream, no
// overall or response-header timeout (a 1M-token prefill takes minutes and
// some servers send headers only with the first token), per-request
// deadlines instead. dial is nil but in tests that connect in memory.
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
	c := &client{base: strings.TrimSuffix(baseURL, "/"), apiKey: apiKey, http: hc, jsonTimeout: defaultJSONTimeout, eng: genericEngine{}}
	hc.CheckRedirect = c.redirect
	return c
}

// redirect follows a redirect as net/http does, but the API key goes only
// to the server's own origin: net/http keeps the Authorization header on
// a redirect to the same host name on another port or scheme (https to
// http), where another program may listen.
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

// jsonTimeout bounds a request for a small answer (/v1/models, /tokenize,
// /metrics, /props): a server that sends one byte a second gets an error,
// not a run that hangs.
const defaultJSONTimeout = time.Minute

// send makes one request of the server and returns its 2xx answer, whose
// body the caller closes. url is a path on the server or a full URL (a
// metrics_url elsewhere); body, when not nil, is sent as JSON; the API key
// goes to the server's own origin and nowhere else. Any other status is a
// *serverError with the server's words and its Retry-After.
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

// call sends one request for a small JSON answer, within jsonTimeout: body
// (when not nil) marshalled, the answer (at most limit bytes) decoded into v.
func (c *client) call(ctx context.Context, method, path string, body any, v any, limit int64) error {
	ctx, cancel := context.WithTimeout(ctx, c.jsonTimeout)
	defer cancel()
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	resp, err := c.send(ctx, method, path, data, "")
	if err != nil {
		if se, ok := err.(*serverError); ok {
			se.What = method + " " + path
		}
		return err
	}
	defer resp.Body.Close()
	answer, err := readLimited(resp.Body, limit, method+" "+path)
	if err != nil {
		return err
	}
	return json.Unmarshal(answer, v)
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
// port: the API key goes there and nowhere else (a metrics_url on another
// host does not get it).
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

// keyHint adds to a probe refused for want of an API key (401, 403) what
// to do: set the variable that holds it, or name one.
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

// retryable reports whether the server asked to be tried again later.
func (e *serverError) retryable() bool { return e.Status == 429 || e.Status == 503 }

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
