package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/memnet"
)

// fastProfile steps every millisecond or so, so tests finish quickly.
func fastProfile() Profile {
	p := DefaultProfile()
	p.Decode = DecodeProfile{BaseMs: 2, PerSeqMs: 0.01, PerKTokenMs: 0, MaxBatchedTokens: 8192}
	p.Prefill = PrefillProfile{PeakTokS: 1e6, HalfContext: 1e6}
	p.Speculative.DraftTokens = 0
	return p
}

// startSim serves a sim on a loopback port for the test's duration.
func startSim(t testing.TB, p Profile) (*Server, string) {
	t.Helper()
	s, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts.URL
}

// memClients are the clients of the sims served in memory, by URL.
var (
	memClients sync.Map
	memSims    atomic.Int64
)

// startMemSim serves a sim in memory; call it inside synctest.Test, where
// the sim's clock is the bubble's: it keeps to its profile exactly,
// however busy the machine. The helpers below reach it by its URL.
func startMemSim(t *testing.T, p Profile) (*Server, string) {
	t.Helper()
	s, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln := memnet.Listen()
	srv := &http.Server{Handler: s, ConnState: s.ConnState}
	go srv.Serve(ln)
	url := "http://sim-" + strconv.FormatInt(memSims.Add(1), 10) + ".test"
	client := ln.Client()
	memClients.Store(url, client)
	t.Cleanup(func() {
		memClients.Delete(url)
		client.CloseIdleConnections()
		srv.Close()
		s.Close()
	})
	return s, url
}

// clientOf is the client that reaches the sim at url.
func clientOf(url string) *http.Client {
	if c, ok := memClients.Load(url); ok {
		return c.(*http.Client)
	}
	return http.DefaultClient
}

// event is one SSE event as received: a data payload or a comment.
type event struct {
	data    string
	comment bool
	at      time.Time
}

// chatBody builds a chat request with a prompt of the given number of words.
func chatBody(words int, extra string) string {
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words2[i%len(words2)])
	}
	body := `{"model":"sim","messages":[{"role":"user","content":` + string(mustJSON(b.String())) + `}]`
	if extra != "" {
		body += "," + extra
	}
	return body + "}"
}

var words2 = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike")

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// post sends a chat request and returns the response.
func post(t testing.TB, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(body))
	resp, err := clientOf(url).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readEvents reads a stream's events until it ends; err is how it ended
// (nil for a clean end of body).
func readEvents(r io.Reader) (events []event, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data: "):
			events = append(events, event{data: strings.TrimPrefix(line, "data: "), at: time.Now()})
		case strings.HasPrefix(line, ":"):
			events = append(events, event{comment: true, at: time.Now()})
		}
	}
	return events, sc.Err()
}

// streamChat posts a streaming request and reads all of it.
func streamChat(t testing.TB, url, body string) ([]event, error) {
	t.Helper()
	resp := post(t, context.Background(), url, body)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return readEvents(resp.Body)
}

// chunk is the part of a chunk the tests read.
type chunk struct {
	Choices []struct {
		Delta struct {
			Role      *string `json:"role"`
			Content   *string `json:"content"`
			Reasoning *string `json:"reasoning"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func decodeChunk(t testing.TB, data string) chunk {
	t.Helper()
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("chunk %q: %v", data, err)
	}
	return c
}

// getMetric reads one vLLM metric's value from /metrics.
func getMetric(t testing.TB, url, name string) float64 {
	t.Helper()
	resp, err := clientOf(url).Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+"{") {
			var v float64
			fields := strings.Fields(line)
			if err := json.Unmarshal([]byte(fields[len(fields)-1]), &v); err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no metric %s in:\n%s", name, b)
	return 0
}

func listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return ln
}
