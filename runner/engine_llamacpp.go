package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/matrixgen/matrixgen"
)

// llamaCppEngine is llama.cpp's llama-server: /props, /apply-template then
// /tokenize, /slots for idleness, a token count on every chunk when asked.
type llamaCppEngine struct{ engineDefaults }

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

// prepare: llama-server counts tokens per chunk (timings) only when asked.
func (llamaCppEngine) prepare(c *client) { c.chat.engine = map[string]any{"timings_per_token": true} }

func (llamaCppEngine) counter(_ context.Context, c *client, _ *matrixgen.Probe) (tokenizer, string, bool) {
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

// ownIdle: llama-server started without --metrics still lists its slots.
func (llamaCppEngine) ownIdle() *ownIdle {
	return &ownIdle{name: "llama.cpp's /slots", idle: slotsIdle}
}

// slotsIdle reads llama.cpp's /slots: idle when no slot is processing.
func slotsIdle(ctx context.Context, c *client) (bool, error) {
	type slot struct {
		IsProcessing bool `json:"is_processing"`
	}
	var slots []slot
	if err := c.getJSON(ctx, "/slots", &slots); err != nil {
		return false, err
	}
	if len(slots) == 0 {
		return false, errors.New("/slots lists no slot")
	}
	return !slices.ContainsFunc(slots, func(s slot) bool { return s.IsProcessing }), nil
}

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

// llamaTimings is what llama-server adds to each chunk when asked
// (timings_per_token).
type llamaTimings struct {
	PredictedN         int     `json:"predicted_n"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
	PromptN            int     `json:"prompt_n"`
	PromptMs           float64 `json:"prompt_ms"`
}

// read takes the server's rate and prompt clock (observation.read takes
// the count); a count below zero is refused.
func (t *llamaTimings) read(o *observation) error {
	if t.PredictedN < 0 {
		return fmt.Errorf("impossible timings from the server: predicted_n %d", t.PredictedN)
	}
	if t.PredictedPerSecond > 0 {
		o.serverTokS = t.PredictedPerSecond // the latest is the whole request's
	}
	if t.PromptMs > 0 && t.PromptN > 0 && !math.IsInf(t.PromptMs, 0) {
		o.serverPromptMs, o.serverPromptTokens, o.serverClock = t.PromptMs, t.PromptN, "llama.cpp timings.prompt_ms"
	}
	return nil
}
