package runner

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/term"
)

// ollamaEngine is Ollama, measured through its native API, /api/chat: only
// its stream ends with the server's own counts and durations.
type ollamaEngine struct{ engineDefaults }

func init() { registerEngine(placeLast, ollamaEngine{}) }

func (ollamaEngine) name() string { return "ollama" }

// recognise reads /api/version, then the per-request context Ollama gives
// the model, past which it cuts prompts.
func (ollamaEngine) recognise(ctx context.Context, c *client, p *matrixgen.Probe) bool {
	var v struct {
		Version string `json:"version"`
	}
	if c.getJSON(ctx, "/api/version", &v) != nil || v.Version == "" {
		return false
	}
	p.EngineVersion = v.Version
	var show struct {
		Parameters string `json:"parameters"`
	}
	if c.postJSON(ctx, "/api/show", map[string]string{"model": p.Model}, &show) == nil {
		if n := numCtx(show.Parameters); n > 0 {
			p.MaxModelLen = n
			p.KVSource = fmt.Sprintf("Ollama's num_ctx %d is each request's context; its slots (OLLAMA_NUM_PARALLEL) are not reported: set kv_cache_tokens to num_ctx × slots", n)
			return true
		}
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if c.getJSON(ctx, "/api/ps", &ps) == nil {
		for _, m := range ps.Models {
			if (m.Name == p.Model || m.Model == p.Model) && m.ContextLength > 0 {
				p.MaxModelLen = m.ContextLength
				p.KVSource = "Ollama reports its context length (/api/ps) but not OLLAMA_NUM_PARALLEL: set kv_cache_tokens to context length × parallelism"
				return true
			}
		}
	}
	p.KVSource = "Ollama reports no context length for this model (no num_ctx parameter): it is OLLAMA_CONTEXT_LENGTH, 2048 by default in older versions; prompts beyond it are cut"
	return true
}

// metrics: Ollama keeps none; its count comes with each request.
func (ollamaEngine) metrics() engineMetrics { return engineMetrics{} }

// dropsCutAtNextToken: Ollama (0.6.5) notices a client left only when it
// next has text to send.
func (ollamaEngine) dropsCutAtNextToken() bool { return true }

// tooLong: Ollama cuts a prompt past its context silently; it refuses none.
func (ollamaEngine) tooLong(int, string) bool { return false }

// numCtx finds "num_ctx N" in /api/show's parameters text, one parameter
// per line as a Modelfile writes them.
func numCtx(parameters string) int {
	for line := range strings.Lines(parameters) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// ollamaChunk is one line of /api/chat's stream.
type ollamaChunk struct {
	Message struct {
		Content  string `json:"content"`
		Thinking string `json:"thinking"`
	} `json:"message"`
	Done               bool   `json:"done"`
	DoneReason         string `json:"done_reason"`
	PromptEvalCount    int    `json:"prompt_eval_count"`
	PromptEvalDuration int64  `json:"prompt_eval_duration"` // nanoseconds
	EvalCount          int    `json:"eval_count"`
	EvalDuration       int64  `json:"eval_duration"` // nanoseconds
	Error              string `json:"error"`
}

// maxOllamaLine bounds one line of the stream: a token and its envelope,
// with room to spare.
const maxOllamaLine = 1 << 20

// stream sends req to /api/chat and reads its stream: a line per token,
// then a final line with the server's own counts.
func (ollamaEngine) stream(ctx context.Context, c *client, req chatRequest, stall time.Duration, h hooks) *observation {
	options := map[string]any{"num_predict": req.maxTokens, "seed": int64(req.seed >> 1)}
	if t := c.chat.temperature; t != nil {
		options["temperature"] = *t
	}
	return c.follow(ctx, req, stall, h, map[string]any{"model": c.model, "stream": true, "options": options,
		"messages": []map[string]string{{"role": "user", "content": req.prompt}}}, ollamaStream)
}

// ollamaStream is /api/chat's stream: a JSON object a line.
var ollamaStream = streamDialect{
	path: "/api/chat",
	payloads: func(body io.Reader) func() ([]byte, error) {
		r := bufio.NewReaderSize(body, 64<<10)
		return func() ([]byte, error) { return readLine(r, maxOllamaLine) }
	},
	fold: func(o *observation, line []byte, at time.Time, h hooks) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var ch ollamaChunk
		if err := jsonv2.Unmarshal(line, &ch, chunkOptions); err != nil {
			return fmt.Errorf("malformed line: %v: %.120q", err, line)
		}
		if ch.Error != "" {
			return fmt.Errorf("server error mid-stream: %s", term.Line(ch.Error))
		}
		return o.readOllama(&ch, at, h)
	},
	unfinished: "stream ended without its final line",
}

// readOllama folds one line into the observation. A stream past its
// budget, or a count no server could mean, is an error.
func (o *observation) readOllama(ch *ollamaChunk, at time.Time, h hooks) error {
	if text := ch.Message.Thinking + ch.Message.Content; text != "" {
		if err := o.arrived(at, text, 1, h); err != nil {
			return err
		}
	}
	if !ch.Done {
		return nil
	}
	if ch.PromptEvalCount < 0 || ch.EvalCount < 0 {
		return fmt.Errorf("impossible counts from the server: prompt_eval_count %d, eval_count %d", ch.PromptEvalCount, ch.EvalCount)
	}
	if err := o.checkFinal(ch.EvalCount); err != nil {
		return err
	}
	o.finishReason = cmp.Or(ch.DoneReason, "stop")
	o.promptTokens, o.finalTokens, o.serverTokens, o.serverCounted = ch.PromptEvalCount, ch.EvalCount, ch.EvalCount, true
	if ch.EvalDuration > 0 && ch.EvalCount > 0 {
		o.serverTokS = float64(ch.EvalCount) / (float64(ch.EvalDuration) / 1e9)
	}
	if ch.PromptEvalDuration > 0 && ch.PromptEvalCount > 0 {
		o.serverPromptMs = float64(ch.PromptEvalDuration) / 1e6
		o.serverPromptTokens, o.serverClock = ch.PromptEvalCount, "Ollama prompt_eval_duration"
	}
	return nil
}

// readLine reads one newline-ended line of at most limit bytes; a longer
// one is an error, not a reason to hold gigabytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		if line = append(line, part...); len(line) > limit {
			return nil, fmt.Errorf("a line of the stream is longer than %d bytes", limit)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				return line, nil
			}
			return line, err
		}
	}
}
