// Package hostile attacks matrixgen from every source of outside bytes, for
// tests: Server, an inference server attacking its client (each answer
// ending by its deadline, its bytes counted, so a test sees its client stop
// reading); files.go's inputs for a build; and WriteTool's GPU tools.
package hostile

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// Attack names what the server does.
type Attack string

// The attacks.
const (
	// HugeTokenize answers /tokenize with an endless JSON array.
	HugeTokenize Attack = "huge-tokenize"
	// HugeError answers the chat endpoint with a 500 and an endless body.
	HugeError Attack = "huge-error"
	// LongSSELine streams one data line that never ends.
	LongSSELine Attack = "long-sse-line"
	// KeepAliveFlood streams ": keep-alive" comments and nothing else.
	KeepAliveFlood Attack = "keep-alive-flood"
	// EndlessMetrics answers /metrics with Prometheus text without end.
	EndlessMetrics Attack = "endless-metrics"
	// SlowModels answers /v1/models one byte a second.
	SlowModels Attack = "slow-models"
	// UsageJump streams usage whose completion_tokens jumps to 2^62.
	UsageJump Attack = "usage-jump"
	// UsageBackwards streams usage counts that fall, and a negative final count.
	UsageBackwards Attack = "usage-backwards"
	// HugeVersion answers /version with a 50 MB version string.
	HugeVersion Attack = "huge-version"
	// EscapeError answers chat, from its second request on, with an error
	// holding terminal escape sequences and a forged progress line.
	EscapeError Attack = "escape-error"
	// EchoKey answers chat, from its second request on, with a 401 whose
	// body repeats the API key: in its header, alone, again and again
	// around 4,000 bytes (where a run file cuts a reason), and split by
	// EchoCut, where a client stops reading an error.
	EchoKey Attack = "echo-key"
	// EchoKeyAtOnce is EchoKey from the first request: the probe's.
	EchoKeyAtOnce Attack = "echo-key-at-once"
	// TinyChunkFlood streams one-token chunks, usage growing by one each,
	// as fast as the client reads, past any max_tokens.
	TinyChunkFlood Attack = "tiny-chunk-flood"
	// LongEventLines streams before each chunk a line of EventLineBytes
	// that carries no data (event:, id:, retry: or an unknown field).
	LongEventLines Attack = "long-event-lines"
	// EndlessNativeLine answers Ollama's /api/chat with a token whose
	// content never ends.
	EndlessNativeLine Attack = "endless-native-line"
)

// EchoCut is the length of an EchoKey body a client reads; a key straddles it.
const EchoCut = 64 << 10

// EventLineBytes is the length of each LongEventLines line, newline included.
const EventLineBytes = 1<<20 - 64

// Server serves one attack; everything else it answers as a small, plain
// OpenAI-compatible server would.
type Server struct {
	Attack Attack
	// Deadline ends every attacking answer; 30 s when zero.
	Deadline time.Duration
	written  atomic.Int64
	chats    atomic.Int64
}

// Written is how many bytes the attacking answers wrote so far.
func (s *Server) Written() int64 { return s.written.Load() }

// ForgedLine is the progress line EscapeError tries to forge on a terminal.
const ForgedLine = "matrixgen run: 9 of 9 cells and prefill rows done, in runs/r.json (complete)"

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), cmp.Or(s.Deadline, 30*time.Second))
	defer cancel()
	path := r.URL.Path
	switch {
	case path == "/v1/models" && s.Attack == SlowModels:
		s.trickle(ctx, w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	case path == "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","max_model_len":65536}]}`)
	case path == "/version" && s.Attack == HugeVersion:
		w.Write([]byte(`{"version":"`))
		s.flood(ctx, w, "0.1.2-", 50<<20)
		w.Write([]byte(`"}`))
	case path == "/version":
		fmt.Fprint(w, `{"version":"0.0.1"}`)
	case path == "/tokenize" && s.Attack == HugeTokenize:
		w.Write([]byte(`{"count":1,"tokens":[`))
		s.flood(ctx, w, "1,", -1)
	case path == "/metrics" && s.Attack == EndlessMetrics:
		s.flood(ctx, w, "vllm:num_requests_running{engine=\"0\"} 0\n", -1)
	case path == "/tokenize" && s.Attack == EchoKey:
		// A tokenizer of one token a word, so that the second chat request
		// is a measurement's, not one counting a prompt.
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req)
		words := 0
		for _, m := range req.Messages {
			words += len(strings.Fields(m.Content))
		}
		fmt.Fprintf(w, `{"count":%d}`, words)
	case path == "/v1/chat/completions" && (s.Attack == EchoKeyAtOnce || s.Attack == EchoKey && s.chats.Add(1) > 1):
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(echoKey(r.Header.Get("Authorization")))
	case path == "/api/chat" && s.Attack == EndlessNativeLine:
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Write([]byte(`{"model":"m","message":{"role":"assistant","content":"`))
		s.flood(ctx, w, "token ", -1)
	case path == "/v1/chat/completions":
		s.chat(ctx, w, maxTokens(r))
	default:
		http.NotFound(w, r)
	}
}

// answerTokens is how many tokens an ordinary answer streams, at most.
const answerTokens = 40

// maxTokens is how many tokens a chat request asks for at most, or
// answerTokens when it does not say.
func maxTokens(r *http.Request) int {
	var req struct {
		MaxTokens           int `json:"max_tokens"`
		MaxCompletionTokens int `json:"max_completion_tokens"`
	}
	_ = json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req)
	return cmp.Or(req.MaxTokens, req.MaxCompletionTokens, answerTokens)
}

// chat answers a chat request that asks for at most asked tokens.
func (s *Server) chat(ctx context.Context, w http.ResponseWriter, asked int) {
	switch s.Attack {
	case HugeError:
		w.WriteHeader(http.StatusInternalServerError)
		s.flood(ctx, w, "internal error ", -1)
		return
	case EscapeError:
		if s.chats.Add(1) == 1 {
			break // the probe's request passes, so the sweep reaches the attack
		}
		w.WriteHeader(http.StatusBadRequest)
		msg := "bad\x1b]0;pwned\x07\x1b[2J\r\n" + ForgedLine + "\x1b[0m"
		body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "BadRequestError", "code": 400}})
		w.Write(body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	switch {
	case s.Attack == LongSSELine:
		w.Write([]byte(`data: {"choices":[{"delta":{"content":"`))
		s.flood(ctx, w, "aaaaaaaaaaaaaaaa", -1)
	case s.Attack == KeepAliveFlood:
		s.flood(ctx, w, ": keep-alive\n\n", -1)
	case s.Attack == TinyChunkFlood && asked > answerTokens: // a decode request: the probe's pass
		s.tinyChunks(ctx, w)
	default:
		s.counts(ctx, w, asked)
	}
}

// echoKey is the body of an EchoKey answer.
func echoKey(auth string) []byte {
	key := strings.TrimPrefix(auth, "Bearer ")
	body := []byte("invalid API key; the request carried Authorization: " + auth + "; the key " + key + " is unknown.\n")
	for len(body) < 4000-4*len(key) {
		body = append(body, "padding "...)
	}
	for len(body) < 4000+4*len(key) {
		body = append(body, key+" "...)
	}
	cut := EchoCut - len(key)/2
	body = append(body, strings.Repeat(" ", max(0, cut-len(body)))...)
	return append(append(body[:cut], key...), " is what you sent"...)
}

// counts streams a short answer, as many tokens as asked up to
// answerTokens, whose usage does what the attack says.
func (s *Server) counts(ctx context.Context, w http.ResponseWriter, asked int) {
	fields := []string{"event", "id", "retry", "x-unknown"}
	tokens := min(asked, answerTokens)
	for i := 1; i <= tokens && ctx.Err() == nil; i++ {
		if s.Attack == LongEventLines { // a line of EventLineBytes that carries no data
			f := fields[i%len(fields)]
			s.write(w, []byte(f+": "+strings.Repeat("x", EventLineBytes-len(f)-3)+"\n"))
		}
		n := int64(i) // past int on 32-bit machines at UsageJump
		switch {
		case s.Attack == UsageJump && i == 20:
			n = 1 << 62
		case s.Attack == UsageBackwards && i > 20:
			n = int64(answerTokens - 2*i) // falls, then goes negative
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w%d\"},\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}\n\n", i, n)
		http.NewResponseController(w).Flush()
		time.Sleep(5 * time.Millisecond)
	}
	final := tokens
	if s.Attack == UsageBackwards && tokens > 20 {
		final = -4
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}\n\n", final)
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", final)
}

// write writes b and counts the bytes written.
func (s *Server) write(w io.Writer, b []byte) error {
	n, err := w.Write(b)
	s.written.Add(int64(n))
	return err
}

// tinyChunks streams one-token chunks until the deadline or the client leaves.
func (s *Server) tinyChunks(ctx context.Context, w http.ResponseWriter) {
	var batch []byte
	for i := 1; ctx.Err() == nil; i++ {
		batch = fmt.Appendf(batch, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}\n\n", i)
		if len(batch) < 16<<10 {
			continue
		}
		if s.write(w, batch) != nil {
			return
		}
		http.NewResponseController(w).Flush()
		batch = batch[:0]
	}
}

// flood writes unit until limit bytes (-1: none), the deadline or the client leaves.
func (s *Server) flood(ctx context.Context, w http.ResponseWriter, unit string, limit int64) {
	chunk := []byte(strings.Repeat(unit, max(1, (64<<10)/len(unit))))
	for sent := int64(0); ctx.Err() == nil && (limit < 0 || sent < limit); sent += int64(len(chunk)) {
		if s.write(w, chunk) != nil {
			return
		}
	}
}

// trickle writes text a byte a second.
func (s *Server) trickle(ctx context.Context, w http.ResponseWriter, text string) {
	for i := range len(text) {
		if s.write(w, []byte{text[i]}) != nil {
			return
		}
		http.NewResponseController(w).Flush()
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// ToolAttack names what a stand-in GPU tool does.
type ToolAttack string

// The tools' attacks.
const (
	// EndlessTool answers every question with lines without end, as fast
	// as it can: well-formed telemetry lines for nvidia-smi, JSON objects
	// for rocm-smi.
	EndlessTool ToolAttack = "endless-tool"
	// HungTool starts a child that holds its output open, and waits for
	// it: it never answers, and killing the tool alone does not close its
	// output.
	HungTool ToolAttack = "hung-tool"
)

// WriteTool writes into dir a shell script (Unix only) standing in for the
// GPU tool name ("nvidia-smi" or "rocm-smi") that does attack; its path.
func WriteTool(dir, name string, attack ToolAttack) (string, error) {
	var script string
	switch attack {
	case EndlessTool:
		line := "0, 300.00, 2400, 12000, 95, 80213, 61, 0x0000000000000000"
		if strings.HasPrefix(name, "rocm-smi") {
			line = `{"card0": {"Current Socket Graphics Package Power (W)": "300.0"}}`
		}
		script = "exec yes '" + line + "'\n"
	case HungTool:
		script = "sleep 3600 &\nwait\n"
	default:
		return "", fmt.Errorf("unknown tool attack %q", attack)
	}
	path := filepath.Join(dir, name)
	return path, WriteExecutable(path, "#!/bin/sh\n"+script)
}

// WriteExecutable writes a program at path through a child shell, never
// through a descriptor of this process: while a test writes a script it
// will run, every process another test starts in that moment holds the
// open descriptor until its exec, and running the script then fails with
// "text file busy" (ETXTBSY). A shell's descriptor is its own.
func WriteExecutable(path, text string) error {
	cmd := exec.Command("/bin/sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", path)
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("writing %s: %w: %s", path, err, out)
	}
	return nil
}
