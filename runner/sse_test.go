package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"
)

// bodyTransport answers every request with a fixed SSE body, so the whole
// stream path (the transport's bounds, the event reader and the runner's
// chunk reading) can be driven without a network.
type bodyTransport struct {
	body string
	gap  time.Duration // between events ("\n\n"); 0: all at once
	// open, when set, is the body instead (a body made as it is read).
	open func() io.Reader
}

func (b bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	var body io.Reader = strings.NewReader(b.body)
	switch {
	case b.open != nil:
		body = b.open()
	case b.gap > 0:
		body = &pacedReader{rest: b.body, gap: b.gap}
	}
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(body),
		Request: req,
	}, nil
}

// pacedReader gives an event stream one event at a time, gap apart.
type pacedReader struct {
	rest    string
	gap     time.Duration
	current string
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if p.current == "" {
		if p.rest == "" {
			return 0, io.EOF
		}
		time.Sleep(p.gap)
		i := strings.Index(p.rest, "\n\n")
		if i < 0 {
			i = len(p.rest) - 2
		}
		p.current, p.rest = p.rest[:i+2], p.rest[i+2:]
	}
	n := copy(b, p.current)
	p.current = p.current[n:]
	return n, nil
}

func streamBody(t testing.TB, body string) *observation {
	return streamThrough(bodyTransport{body: body}, 8)
}

// streamThrough reads one stream of at most maxTokens through transport.
func streamThrough(transport http.RoundTripper, maxTokens int) *observation {
	c := newClient("http://sse.invalid", "", 1, nil)
	c.model = "m"
	c.http.Transport = resendUnanswered{transport}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.stream(ctx, chatRequest{prompt: "hi", maxTokens: maxTokens}, 5*time.Second, hooks{})
}

// streamPaced reads body as a server sends it, one event every gap; call
// it inside a synctest bubble.
func streamPaced(t testing.TB, body string, gap time.Duration) *observation {
	return streamThrough(bodyTransport{body: body, gap: gap}, 8)
}

const goodSSE = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":0}}\n\n" +
	": keep-alive\n\n" +
	"data: {\"choices\":[{\"delta\":{\"content\":\"a b\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n" +
	"data: {\"choices\":[{\"delta\":{\"content\":\" c\"},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3}}\n\n" +
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3}}\n\n" +
	"data: [DONE]\n\n"

func TestStreamReading(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		complete bool
		tokens   int
		err      string
	}{
		{"vLLM with continuous usage", goodSSE, true, 3, ""},
		{"no [DONE] and no finish", strings.Split(goodSSE, "data: {\"choices\":[{\"delta\":{\"content\":\" c\"}")[0], false, 2, "without a finish_reason"},
		{"bad JSON", "data: {\"choices\":[{\"delta\":\n\n", false, 0, "malformed chunk"},
		{"error event", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"error\":{\"message\":\"boom\",\"code\":500}}\n\n", false, 1, "boom"},
		{"lines without data:", "event: x\nid: 3\nretry: 10\n\n" + goodSSE, true, 3, ""},
		// A chunk is a few tokens; a line of megabytes is no chunk, data or not.
		{"a 10 MB chunk", "data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("a", 10<<20) + "\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", false, 0, "longer than"},
		// A line without data is skipped, not held, however long; but a
		// megabyte of them without data is a server stalling.
		{"a 10 MB line that is not data", ": " + strings.Repeat("x", 10<<20) + "\n\n" + goodSSE, false, 0, "without data"},
		{"a long event line between chunks", "event: " + strings.Repeat("x", 900<<10) + "\n" + goodSSE, true, 3, ""},
		{"final usage only: spread over the chunks", "data: {\"choices\":[{\"delta\":{\"content\":\"ab\"}}]}\n\n" +
			"data: {\"choices\":[{\"delta\":{\"content\":\"cd\"}}]}\n\n" +
			"data: {\"choices\":[{\"delta\":{\"content\":\"e\"},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":7}}\n\ndata: [DONE]\n\n", true, 7, ""},
		{"usage going backwards", strings.Replace(goodSSE, "\"completion_tokens\":3}}\n\ndata: {\"choices\":[]", "\"completion_tokens\":1}}\n\ndata: {\"choices\":[]", 1), true, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := streamBody(t, tt.body)
			if obs.complete() != tt.complete || obs.tokens() != tt.tokens {
				t.Errorf("complete %v (err %v), %d tokens; want %v, %d", obs.complete(), obs.err, obs.tokens(), tt.complete, tt.tokens)
			}
			if tt.err != "" && (obs.err == nil || !strings.Contains(obs.err.Error(), tt.err)) {
				t.Errorf("error %v, want one with %q", obs.err, tt.err)
			}
		})
	}
}

// FuzzStreamReading drives the SSE path with any bytes: it must end (no
// hang), never panic, never count negative tokens, and call a stream
// complete only when it saw a finish_reason.
func FuzzStreamReading(f *testing.F) {
	f.Add(goodSSE)
	f.Add("data: [DONE]\n\n")
	f.Add("data: {\"error\":{}}\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"x\"},\"finish_reason\":null}],\"usage\":{\"completion_tokens\":-5}}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		obs := streamBody(t, body)
		for _, e := range obs.events {
			if e.tokens <= 0 {
				t.Fatalf("an event of %d tokens", e.tokens)
			}
		}
		if obs.complete() && obs.finishReason == "" {
			t.Fatal("complete without a finish_reason")
		}
	})
}

// TestFinalUsageSource: a final usage count is spread over the chunks
// that came 10 ms apart, as a server sends them; chunks read in the same
// millisecond are one event (TestTokenEventsBounded).
func TestFinalUsageSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n"
		obs := streamPaced(t, body, 10*time.Millisecond)
		if obs.source != "final_usage" || obs.tokens() != 5 || len(obs.events) != 2 || obs.events[0].tokens != 2 {
			t.Errorf("source %q, %d tokens in %d events", obs.source, obs.tokens(), len(obs.events))
		}
	})
}

func TestServerRateFromVLLMMetrics(t *testing.T) {
	body := strings.Replace(goodSSE, "\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3}}",
		"\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3},\"metrics\":{\"time_to_first_token_ms\":12.5,\"tokens_per_second\":321.5}}", 1)
	if obs := streamBody(t, body); obs.serverTokS != 321.5 || !obs.complete() {
		t.Errorf("server rate %v, complete %v", obs.serverTokS, obs.complete())
	}
}

// FuzzSSEReader holds the event-stream reader to the plainest reading of
// the same bytes (split into lines, each trimmed; a data line's payload,
// or a JSON object's line) wherever no bound is passed, however the bytes
// come in reads: the bounds skip and refuse, they never change a payload.
func FuzzSSEReader(f *testing.F) {
	f.Add(goodSSE, uint8(7))
	f.Add("event: x\nid: 3\nretry: 10\n\n"+goodSSE, uint8(1))
	f.Add("data: a\r\n  data: b\n{\"error\":1}\ndata:[DONE]\ndata: after\n", uint8(3))
	f.Fuzz(func(t *testing.T, body string, cut uint8) {
		var want []string
		for _, line := range strings.Split(body, "\n") {
			line = strings.TrimSpace(line)
			payload, isData := strings.CutPrefix(line, "data:")
			if !isData && !strings.HasPrefix(line, "{") {
				continue
			}
			if payload = strings.TrimSpace(payload); payload == "[DONE]" {
				break
			} else if payload != "" {
				want = append(want, payload)
			}
		}
		r := newSSEReader(iotest.OneByteReader(strings.NewReader(body)))
		if cut%2 == 0 {
			r = newSSEReader(&chunkedReader{s: body, n: 1 + int(cut)})
		}
		var got []string
		for {
			payload, err := r.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					return // a bound passed: refused, and said
				}
				break
			}
			got = append(got, string(payload))
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("payloads %q, want %q", got, want)
		}
	})
}

// chunkedReader gives s n bytes a read.
type chunkedReader struct {
	s string
	n int
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}

// BenchmarkStreamReading reads a stream of 4,000 one-token chunks with
// continuous usage, and a lines-without-data line of 256 KB between
// every 100 of them, through the whole client path: ns and bytes per
// chunk.
func BenchmarkStreamReading(b *testing.B) {
	var body strings.Builder
	for i := 1; i <= 4000; i++ {
		if i%100 == 0 {
			body.WriteString("event: " + strings.Repeat("x", 256<<10) + "\n")
		}
		fmt.Fprintf(&body, "data: {\"choices\":[{\"delta\":{\"content\":\" w\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":%d}}\n\n", i)
	}
	body.WriteString("data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	text := body.String()
	c := newClient("http://sse.invalid", "", 1, nil)
	c.model = "m"
	c.http.Transport = resendUnanswered{bodyTransport{body: text}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		obs := c.stream(context.Background(), chatRequest{prompt: "hi", maxTokens: 4000}, time.Minute, hooks{})
		if !obs.complete() || obs.tokens() != 4000 {
			b.Fatalf("complete %v (%v), %d tokens", obs.complete(), obs.err, obs.tokens())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4000, "ns/chunk")
}
