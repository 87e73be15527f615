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
	return &client{base: strings.TrimSuffix(baseURL, "/"), apiKey: apiKey, http: hc, jsonTimeout: defaultJSONTimeout, eng: genericEngine{}}
}

// parseRetryAfter reads a Retry-After of seconds or an HTTP date.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func (c *client) get(ctx context.Context, path string) (*http.Response, error) {
	return c.getURL(ctx, c.base+path)
}

// jsonTimeout bounds a request for a small answer (/v1/models, /tokenize,
// /metrics, /props): a server that sends one byte a second gets an error,
// not a run that hangs.
const defaultJSONTimeout = time.Minute

// getURL GETs a path of the server, or a full URL (a metrics_url elsewhere).
// The answer's body must be read before cancel is called.
func (c *client) getURL(ctx context.Context, url string) (*http.Response, error) {
	if strings.HasPrefix(url, "/") {
		url = c.base + url
	}
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	if c.apiKey != "" && c.sameOrigin(req.URL) {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	return c.http.Do(req)
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

// errorText reads an error answer's body, at most maxErrorBody of it.
func errorText(r io.Reader) string {
	data, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	return term.Line(string(bytes.TrimSpace(data)))
}

// statusError is a server's answer with an HTTP error status.
type statusError struct {
	What   string // "GET /v1/models"
	Code   int
	Status string // "401 Unauthorized"
}

func (e *statusError) Error() string { return e.What + ": " + e.Status }

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
	var status *statusError
	return errors.As(err, &status) && (status.Code == http.StatusUnauthorized || status.Code == http.StatusForbidden)
}

// getJSON GETs path into v; an HTTP error status is an error.
func (c *client) getJSON(ctx context.Context, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, c.jsonTimeout)
	defer cancel()
	resp, err := c.get(ctx, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return &statusError{What: "GET " + path, Code: resp.StatusCode, Status: resp.Status}
	}
	data, err := readLimited(resp.Body, maxJSONInfo, "GET "+path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// postJSON POSTs a JSON body to path and decodes the answer into v.
func (c *client) postJSON(ctx context.Context, path string, body, v any) error {
	ctx, cancel := context.WithTimeout(ctx, c.jsonTimeout)
	defer cancel()
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("POST %s: %s: %.4000s", path, resp.Status, errorText(resp.Body))
	}
	answer, err := readLimited(resp.Body, maxJSONAnswer, "POST "+path)
	if err != nil {
		return err
	}
	return json.Unmarshal(answer, v)
}
