package runner

import (
	"context"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/prom"
)

// tgiEngine is Hugging Face's text-generation-inference: /info with its
// per-request limits, /chat_tokenize (or /tokenize), its router's metrics.
type tgiEngine struct{ engineDefaults }

func init() { registerEngine(placeOwnEndpoint, tgiEngine{}) }

func (tgiEngine) name() string { return "tgi" }

// recognise reads /info: max_total_tokens bounds a request's prompt and
// output; max_batch_total_tokens, the KV capacity, is in TGI 1 and 2 only.
func (tgiEngine) recognise(ctx context.Context, c *client, p *matrixgen.Probe) bool {
	var info struct {
		ModelID             string `json:"model_id"`
		Version             string `json:"version"`
		MaxTotalTokens      int    `json:"max_total_tokens"`
		MaxBatchTotalTokens int    `json:"max_batch_total_tokens"`
	}
	if c.getJSON(ctx, "/info", &info) != nil || info.ModelID == "" || info.MaxTotalTokens <= 0 {
		return false
	}
	p.EngineVersion = info.Version
	p.MaxModelLen = info.MaxTotalTokens
	if info.MaxBatchTotalTokens > 0 {
		p.KVCacheTokens, p.KVSource = info.MaxBatchTotalTokens, "/info max_batch_total_tokens"
	}
	return true
}

// counter: /chat_tokenize counts a chat request as the chat route does;
// before TGI 2.2, /tokenize plain text plus the template's tokens.
func (tgiEngine) counter(ctx context.Context, c *client, _ *matrixgen.Probe) (tokenizer, string, bool) {
	if n, err := (tgiChatTokenizer{c}).count(ctx, "hello"); err == nil && n > 0 {
		return tgiChatTokenizer{c}, "/chat_tokenize (chat form, template included)", true
	}
	return templatedCounter(ctx, c, "/tokenize", func(ctx context.Context, text string) (int, error) {
		var tokens []struct{}
		err := c.postJSON(ctx, "/tokenize", map[string]any{"inputs": text}, &tokens)
		return len(tokens), err
	})
}

// tgiChatTokenizer counts a user message with /chat_tokenize.
type tgiChatTokenizer struct{ c *client }

func (t tgiChatTokenizer) count(ctx context.Context, content string) (int, error) {
	var out struct {
		Tokens []struct{} `json:"tokenize_response"`
	}
	err := t.c.postJSON(ctx, "/chat_tokenize", map[string]any{
		"model": t.c.model, "messages": []map[string]string{{"role": "user", "content": content}},
	}, &out)
	return len(out.Tokens), err
}

func (tgiEngine) metrics() engineMetrics {
	return engineMetrics{
		running: []string{"tgi_batch_current_size"},
		waiting: []string{"tgi_queue_size"},
		// A histogram of each completed request's output: its sum grows
		// when a request ends, by all its tokens.
		tokens: serverCounter{metric: "tgi_request_generated_tokens_sum", completedOnly: true},
		// Each prefill call of the router, without the queue: it times a
		// batch, which around a lone prefill request is that request.
		promptTime: prom.Histogram{Name: "tgi_batch_inference_duration", LabelKey: "method", LabelValue: "prefill"},
	}
}

// tooLong: a 422, "`inputs` tokens + `max_new_tokens` must be <= 4096" or
// "`inputs` must have less than 4095 tokens".
func (tgiEngine) tooLong(status int, m string) bool {
	return status == 422 && containsAny(m, "`inputs` tokens + `max_new_tokens` must be <=", "`inputs` must have less than")
}
