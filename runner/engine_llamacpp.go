package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/prom"
)

// llamaCppEngine is llama.cpp's llama-server: /props with its slots and
// per-slot context, /apply-template then /tokenize, /slots for idleness,
// a token count on every chunk when asked (timings_per_token).
type llamaCppEngine struct{}

func init() { registerEngine(placeOwnEndpoint, llamaCppEngine{}) }

func (llamaCppEngine) name() string { return "llama.cpp" }

func (llamaCppEngine) recognise(ctx context.Context, c *client, p *matrixgen.Probe) bool {
	var props struct {
		TotalSlots int    `json:"total_slots"`
		BuildInfo  string `json:"build_info"`
		Settings   struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if c.getJSON(ctx, "/props", &props) != nil || props.TotalSlots == 0 {
		return false
	}
	p.EngineVersion = props.BuildInfo
	if n := props.Settings.NCtx; n > 0 {
		// Each slot holds one request of at most n_ctx tokens.
		p.MaxModelLen = n
		p.KVCacheTokens = props.TotalSlots * n
		p.KVSource = fmt.Sprintf("/props: %d slots × n_ctx %d", props.TotalSlots, n)
	}
	return true
}

// prepare: llama-server counts tokens per chunk only when asked.
func (llamaCppEngine) prepare(c *client) { c.chat.timingsPerToken = true }

func (llamaCppEngine) counter(_ context.Context, c *client) (tokenizer, string, bool) {
	return llamaTokenizer{c}, "/apply-template, then /tokenize", true
}

func (llamaCppEngine) metrics() engineMetrics {
	return engineMetrics{
		running: []string{"llamacpp:requests_processing"},
		waiting: []string{"llamacpp:requests_deferred"},
		// The counter grows when a request completes, by all its tokens.
		tokens: serverCounter{metric: "llamacpp:tokens_predicted_total", completedOnly: true},
	}
}

func (llamaCppEngine) kvFromMetrics(*matrixgen.Probe, []prom.Sample) {}
func (llamaCppEngine) hasSlots() bool                                { return true }

// tooLong: "request (20030 tokens) exceeds the available context size
// (16384 tokens), try increasing it", of type exceed_context_size_error.
func (llamaCppEngine) tooLong(status int, m string) bool {
	return status == 400 && containsAny(m, "exceeds the available context size", "exceed_context_size")
}

// llamaTokenizer is llama-server's way: render the chat template with
// /apply-template, then count the text with /tokenize.
type llamaTokenizer struct{ c *client }

func (t llamaTokenizer) count(ctx context.Context, content string) (int, error) {
	var tmpl struct {
		Prompt string `json:"prompt"`
	}
	if err := t.c.postJSON(ctx, "/apply-template", map[string]any{
		"messages": []map[string]string{{"role": "user", "content": content}},
	}, &tmpl); err != nil {
		return 0, err
	}
	var tok struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := t.c.postJSON(ctx, "/tokenize", map[string]any{"content": tmpl.Prompt}, &tok); err != nil {
		return 0, err
	}
	return len(tok.Tokens), nil
}
