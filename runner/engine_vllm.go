package runner

import (
	"context"
	"strconv"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/prom"
)

// vllmEngine is vLLM: /version, /tokenize in chat form, Prometheus metrics
// with its KV capacity, per-request rates in its final chunk.
type vllmEngine struct{ engineDefaults }

func init() { registerEngine(placeVersion, vllmEngine{}) }

func (vllmEngine) name() string { return "vllm" }

func (vllmEngine) recognise(ctx context.Context, c *client, p *matrixgen.Probe) bool {
	var v struct {
		Version string `json:"version"`
	}
	if c.getJSON(ctx, "/version", &v) != nil || v.Version == "" {
		return false
	}
	p.EngineVersion = v.Version
	return true
}

// counter: vLLM's /tokenize takes the chat form and applies the template,
// so it counts a prompt exactly as the chat route will.
func (vllmEngine) counter(ctx context.Context, c *client, p *matrixgen.Probe) (tokenizer, string, bool) {
	if n, err := (vllmTokenizer{c}).count(ctx, "hello"); err != nil || n <= 0 {
		return nil, "", false
	}
	p.Tokenize = true
	return vllmTokenizer{c}, "/tokenize (chat form, template included)", true
}

// vllmTokenizer is vLLM's /tokenize in its chat form (template included).
type vllmTokenizer struct{ c *client }

func (t vllmTokenizer) count(ctx context.Context, content string) (int, error) {
	var out struct {
		Count int `json:"count"`
	}
	err := t.c.postJSON(ctx, "/tokenize", map[string]any{
		"model": t.c.model, "add_generation_prompt": true,
		"messages": []map[string]string{{"role": "user", "content": content}},
	}, &out)
	return out.Count, err
}

func (vllmEngine) metrics() engineMetrics {
	return engineMetrics{
		running:     []string{"vllm:num_requests_running"},
		waiting:     []string{"vllm:num_requests_waiting"},
		kvUsage:     []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
		preemptions: []string{"vllm:num_preemptions_total"},
		draft:       "vllm:spec_decode_num_draft_tokens_total",
		accepted:    "vllm:spec_decode_num_accepted_tokens_total",
		tokens:      serverCounter{metric: "vllm:generation_tokens_total"},
		// From the request's first scheduling to its first token: the
		// prompt's processing, not the queue or the HTTP front end.
		promptTime: prom.Histogram{Name: "vllm:request_prefill_time_seconds"},
	}
}

// kvFromMetrics reads the KV capacity vLLM reports: kv_cache_size_tokens,
// else num_gpu_blocks × block_size (right for full-attention models only).
func (vllmEngine) kvFromMetrics(p *matrixgen.Probe, s []prom.Sample) {
	label := func(key string) int { // 0 where absent or not a number
		v, _ := prom.Label(s, "vllm:cache_config_info", key)
		n, _ := strconv.Atoi(v)
		return n
	}
	switch n, b, z := label("kv_cache_size_tokens"), label("num_gpu_blocks"), label("block_size"); {
	case p.KVCacheTokens > 0:
	case n > 0:
		p.KVCacheTokens, p.KVSource = n, "vllm:cache_config_info kv_cache_size_tokens"
	case b > 0 && z > 0:
		p.KVCacheTokens = b * z
		p.KVSource = "vllm:cache_config_info num_gpu_blocks × block_size (wrong for hybrid models: set kv_cache_tokens)"
	}
}

// tooLong: "This model's maximum context length is 8192 tokens. However, …".
func (vllmEngine) tooLong(status int, m string) bool {
	return status == 400 && containsAny(m, "maximum context length")
}

// vllmRequestMetrics is vLLM's per-request report on a stream's last chunk
// (--enable-per-request-metrics): the server's own decode rate.
type vllmRequestMetrics struct {
	TokensPerSecond float64 `json:"tokens_per_second"`
}

func (m *vllmRequestMetrics) read(o *observation) {
	if m.TokensPerSecond > 0 {
		o.serverTokS = m.TokensPerSecond
	}
}
