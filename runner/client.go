package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen/internal/term"
	openai "github.com/sashabaranov/go-openai"
)

// Client talks to one inference server: chat streams through go-openai, the
// engine's own endpoints (/tokenize, /metrics, /version) through net/http.
type Client struct {
	base   string
	apiKey string
	http   *http.Client
	oa     *openai.Client
	model  string
	extras map[string]any
	// engine is what the probe found; it picks the dialect of some requests.
	engine string
	// jsonTimeout bounds each request for a small answer.
	jsonTimeout time.Duration
}

// NewClient makes a client sized for a sweep: a connection per stream, no
// overall or response-header timeout (a 1M-token prefill takes minutes and
// some servers send headers only with the first token), per-request
// deadlines instead.
func NewClient(baseURL, apiKey string, maxStreams int) *Client {
	return newClient(baseURL, apiKey, maxStreams, nil)
}

// dialFunc opens a connection; tests pass one that connects in memory.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func newClient(baseURL, apiKey string, maxStreams int, dial dialFunc) *Client {
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
	base := strings.TrimSuffix(baseURL, "/")
	cfg := openai.DefaultConfig(apiKey)
	cfg.BaseURL = base + "/v1"
	cfg.HTTPClient = extraFields{hc}
	// Keep-alive comments during a long prefill are not "empty messages".
	cfg.EmptyMessagesLimit = 1 << 30
	return &Client{base: base, apiKey: apiKey, http: hc, oa: openai.NewClientWithConfig(cfg), jsonTimeout: defaultJSONTimeout}
}

// extraFields is the http client go-openai sends through. go-openai has no
// way to add fields to a request body (ignore_eos, min_tokens, cache_salt,
// stream_options.continuous_usage_stats, temperature 0), so this splices the
// ones the request's context carries into the JSON before it leaves.
type extraFields struct{ *http.Client }

type extrasKey struct{}

// requestNotes carries what a request needs besides go-openai's fields, and
// brings back what go-openai drops: the Retry-After of a 429 or 503.
type requestNotes struct {
	fields     map[string]any
	retryAfter time.Duration
}

// withExtras attaches fields for extraFields to merge into the request body.
func withExtras(ctx context.Context, notes *requestNotes) context.Context {
	return context.WithValue(ctx, extrasKey{}, notes)
}

func (c extraFields) Do(req *http.Request) (*http.Response, error) {
	notes, _ := req.Context().Value(extrasKey{}).(*requestNotes)
	if notes == nil || len(notes.fields) == 0 || req.Body == nil {
		return c.Client.Do(req)
	}
	resp, err := c.send(req, notes.fields)
	if err == nil && (resp.StatusCode == 429 || resp.StatusCode == 503) {
		notes.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	}
	return resp, err
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

func (c extraFields) send(req *http.Request, fields map[string]any) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	body, err = spliceFields(body, fields)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return c.Client.Do(req)
}

// spliceFields adds top-level fields to a JSON object without decoding it:
// a prompt of a million tokens is megabytes of body, copied once here. Keys
// the body already has are left as they are.
func spliceFields(body []byte, fields map[string]any) ([]byte, error) {
	body = bytes.TrimRight(body, " \n\r\t")
	if len(body) < 2 || body[len(body)-1] != '}' {
		return nil, errors.New("request body is not a JSON object")
	}
	var tail bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if bytes.Contains(body, []byte(`"`+k+`":`)) && topLevelKey(body, k) {
			continue
		}
		v, err := json.Marshal(fields[k])
		if err != nil {
			return nil, fmt.Errorf("extra field %s: %w", k, err)
		}
		tail.WriteString(`,"`)
		tail.WriteString(k)
		tail.WriteString(`":`)
		tail.Write(v)
	}
	out := make([]byte, 0, len(body)+tail.Len())
	out = append(out, body[:len(body)-1]...)
	if len(out) == 1 { // "{" alone: no comma before the first field
		out = append(out, bytes.TrimPrefix(tail.Bytes(), []byte(","))...)
	} else {
		out = append(out, tail.Bytes()...)
	}
	return append(out, '}'), nil
}

// topLevelKey reports whether key is a top-level member of the object body.
func topLevelKey(body []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

func (c *Client) get(ctx context.Context, path string) (*http.Response, error) {
	return c.getURL(ctx, c.base+path)
}

// jsonTimeout bounds a request for a small answer (/v1/models, /tokenize,
// /metrics, /props): a server that sends one byte a second gets an error,
// not a run that hangs.
const defaultJSONTimeout = time.Minute

// getURL GETs a path of the server, or a full URL (a metrics_url elsewhere).
// The answer's body must be read before cancel is called.
func (c *Client) getURL(ctx context.Context, url string) (*http.Response, error) {
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
func (c *Client) sameOrigin(u *neturl.URL) bool {
	base, err := neturl.Parse(c.base)
	return err == nil && strings.EqualFold(base.Scheme, u.Scheme) && strings.EqualFold(base.Host, u.Host)
}

// Limits on what the runner reads from a server, each sized for its
// purpose: a server that sends gigabytes gets an error, not the memory.
const (
	maxJSONAnswer = 32 << 20 // /tokenize of a million-token prompt lists a million ids
	maxErrorBody  = 64 << 10 // an error's text, as much as anyone reads
	maxMetrics    = 16 << 20 // Prometheus text of a large server
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

// getJSON GETs path into v; an HTTP error status is an error.
func (c *Client) getJSON(ctx context.Context, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, c.jsonTimeout)
	defer cancel()
	resp, err := c.get(ctx, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	data, err := readLimited(resp.Body, maxJSONAnswer, "GET "+path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// postJSON POSTs a JSON body to path and decodes the answer into v.
func (c *Client) postJSON(ctx context.Context, path string, body, v any) error {
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
