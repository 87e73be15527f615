package runner

import (
	"context"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/prom"
)

// sglangEngine is SGLang: /server_info (or /get_server_info) with its KV
// capacity, /v1/tokenize for plain text, Prometheus metrics.
type sglangEngine struct{ engineDefaults }

func init() { registerEngine(placeOwnEndpoint, sglangEngine{}) }

func (sglangEngine) name() string { return "sglang" }

func (sglangEngine) recognise(ctx context.Context, c *client, p *matrixgen.Probe) bool {
	var info struct {
		Version           string `json:"version"`
		MaxTotalNumTokens int    `json:"max_total_num_tokens"`
	}
	for _, path := range []string{"/server_info", "/get_server_info"} {
		if c.getJSON(ctx, path, &info) == nil && info.MaxTotalNumTokens > 0 {
			p.EngineVersion = info.Version
			p.KVCacheTokens, p.KVSource = info.MaxTotalNumTokens, "/server_info max_total_num_tokens"
			return true
		}
	}
	return false
}

// counter: /v1/tokenize counts plain text; the chat template's own tokens
// are measured once on usage and added.
func (sglangEngine) counter(ctx context.Context, c *client, _ *matrixgen.Probe) (tokenizer, string, bool) {
	return templatedCounter(ctx, c, "/v1/tokenize", func(ctx context.Context, text string) (int, error) {
		var out struct {
			Count int `json:"count"`
		}
		err := c.postJSON(ctx, "/v1/tokenize", map[string]any{"model": c.model, "prompt": text}, &out)
		return out.Count, err
	})
}

func (sglangEngine) metrics() engineMetrics {
	return engineMetrics{
		running:     []string{"sglang:num_running_reqs"},
		waiting:     []string{"sglang:num_queue_reqs"},
		kvUsage:     []string{"sglang:token_usage"},
		preemptions: []string{"sglang:num_retracted_requests_total"},
		tokens:      serverCounter{metric: "sglang:generation_tokens_total"},
		// The scheduler's prefill forward pass of each request.
		promptTime: prom.Histogram{Name: "sglang:per_stage_req_latency_seconds", LabelKey: "stage", LabelValue: "prefill_forward"},
	}
}

// tooLong: "The input (N tokens) is longer than the model's context length
// (M tokens)."
func (sglangEngine) tooLong(status int, m string) bool {
	return status == 400 && containsAny(m, "context length")
}
