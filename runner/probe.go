package runner

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
)

// probe asks the server what it is and what it offers, before any
// measurement, and records what it found in the run.
func (c *Client) probe(ctx context.Context, metricsURL string) (*matrixgen.Probe, error) {
	p := &matrixgen.Probe{}

	var models struct {
		Data []struct {
			ID          string `json:"id"`
			Root        string `json:"root"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := c.getJSON(ctx, "/v1/models", &models); err != nil {
		return nil, fmt.Errorf("probe: %w (is an OpenAI-compatible server at %s?)", err, RedactURL(c.base))
	}
	switch {
	case c.model == "" && len(models.Data) == 1:
		c.model = models.Data[0].ID
	case c.model == "":
		ids := make([]string, len(models.Data))
		for i, m := range models.Data {
			ids[i] = m.ID
		}
		return nil, fmt.Errorf("probe: the server serves %d models (%s); name the one to measure", len(ids), strings.Join(ids, ", "))
	}
	for _, m := range models.Data {
		if m.ID == c.model {
			p.Model, p.ModelRoot, p.MaxModelLen = m.ID, m.Root, m.MaxModelLen
		}
	}
	if p.Model == "" {
		return nil, fmt.Errorf("probe: the server does not serve model %q", c.model)
	}
	c.probeEngine(ctx, p)
	c.engine = p.Engine
	if p.Engine == "llama.cpp" {
		// llama-server counts tokens per chunk only when asked.
		c.chat.timingsPerToken = true
	}
	var tok struct {
		Count int `json:"count"`
	}
	if err := c.postJSON(ctx, "/tokenize", map[string]any{"model": c.model, "messages": []map[string]string{{"role": "user", "content": "hello"}}, "add_generation_prompt": true}, &tok); err == nil && tok.Count > 0 {
		p.Tokenize = true
	}
	if samples, err := c.metrics(ctx, metricsURL); err == nil && len(samples) > 0 {
		p.Metrics = true
		kvFromMetrics(p, samples)
	}
	// A deadline for the whole request too: a server that keeps sending
	// keep-alive comments and no token would pass the stall check for ever.
	helloCtx, cancel := context.WithTimeout(ctx, probeStreamTimeout)
	defer cancel()
	obs := c.stream(helloCtx, chatRequest{prompt: "Say hello.", maxTokens: 4, seed: 1}, time.Minute, hooks{})
	if obs.err != nil {
		return nil, fmt.Errorf("probe: a 4-token request failed: %w", obs.err)
	}
	p.ContinuousUsage = obs.source == matrixgen.TokensContinuousUsage
	p.TimingsPerToken = obs.source == matrixgen.TokensTimingsPerToken
	p.FinalUsage = obs.finalTokens > 0
	return p, nil
}

// tokenizerFor picks the most exact way this server offers to count a
// chat prompt's tokens, and records it in the probe.
func (c *Client) tokenizerFor(ctx context.Context, p *matrixgen.Probe) (tokenizer, error) {
	switch {
	case p.Tokenize:
		p.Tokenizer = "/tokenize (chat form, template included)"
		return serverTokenizer{c}, nil
	case p.Engine == "llama.cpp":
		p.Tokenizer = "/apply-template, then /tokenize"
		return llamaTokenizer{c}, nil
	case p.Engine == "sglang":
		t, err := newSGLangTokenizer(ctx, c)
		if err == nil {
			p.Tokenizer = fmt.Sprintf("/v1/tokenize plus the chat template's %d tokens (measured on usage)", t.overhead)
			return t, nil
		}
	}
	p.Tokenizer = "calibration on usage.prompt_tokens (one request per count)"
	return usageTokenizer{c}, nil
}

// probeEngine tells the engine and version from the endpoints each offers.
func (c *Client) probeEngine(ctx context.Context, p *matrixgen.Probe) {
	var v struct {
		Version string `json:"version"`
	}
	var sglang struct {
		Version           string `json:"version"`
		MaxTotalNumTokens int    `json:"max_total_num_tokens"`
	}
	var props struct {
		TotalSlots int    `json:"total_slots"`
		BuildInfo  string `json:"build_info"`
		Settings   struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	switch {
	case c.getJSON(ctx, "/server_info", &sglang) == nil && sglang.MaxTotalNumTokens > 0,
		c.getJSON(ctx, "/get_server_info", &sglang) == nil && sglang.MaxTotalNumTokens > 0:
		p.Engine, p.EngineVersion = "sglang", sglang.Version
		p.KVCacheTokens, p.KVSource = sglang.MaxTotalNumTokens, "/server_info max_total_num_tokens"
	case c.getJSON(ctx, "/props", &props) == nil && props.TotalSlots > 0:
		p.Engine, p.EngineVersion = "llama.cpp", props.BuildInfo
		if n := props.Settings.NCtx; n > 0 {
			// Each slot holds one request of at most n_ctx tokens.
			p.MaxModelLen = n
			p.KVCacheTokens = props.TotalSlots * n
			p.KVSource = fmt.Sprintf("/props: %d slots × n_ctx %d", props.TotalSlots, n)
		}
	case c.getJSON(ctx, "/version", &v) == nil && v.Version != "":
		p.Engine, p.EngineVersion = "vllm", v.Version
	case c.getJSON(ctx, "/api/version", &v) == nil && v.Version != "":
		p.Engine, p.EngineVersion = "ollama", v.Version
		c.ollamaLimits(ctx, p)
	default:
		p.Engine = "openai-compatible"
	}
}

// metrics reads the server's Prometheus text.
func (c *Client) metrics(ctx context.Context, url string) ([]sample, error) {
	path := "/metrics"
	if url != "" {
		path = url
	}
	ctx, cancel := context.WithTimeout(ctx, c.jsonTimeout)
	defer cancel()
	r, err := c.getURL(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	if r.StatusCode != 200 {
		return nil, errors.New(r.Status)
	}
	text, err := readLimited(r.Body, maxMetrics, "GET "+path)
	if err != nil {
		return nil, err
	}
	return parseProm(bytes.NewReader(text)), nil
}

// kvFromMetrics reads the KV capacity vLLM reports. kv_cache_size_tokens is
// right for every model; num_gpu_blocks × block_size only for plain
// full-attention ones (for hybrid models block_size is the smallest group's).
func kvFromMetrics(p *matrixgen.Probe, s []sample) {
	if p.KVCacheTokens > 0 {
		return
	}
	if v, ok := label(s, "vllm:cache_config_info", "kv_cache_size_tokens"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			p.KVCacheTokens, p.KVSource = n, "vllm:cache_config_info kv_cache_size_tokens"
			return
		}
	}
	blocks, _ := label(s, "vllm:cache_config_info", "num_gpu_blocks")
	size, _ := label(s, "vllm:cache_config_info", "block_size")
	b, err1 := strconv.Atoi(blocks)
	z, err2 := strconv.Atoi(size)
	if err1 == nil && err2 == nil && b > 0 && z > 0 {
		p.KVCacheTokens = b * z
		p.KVSource = "vllm:cache_config_info num_gpu_blocks × block_size (wrong for hybrid models: set kv_cache_tokens)"
	}
}

// ServedModel is the model a server serves when it serves exactly one, for
// naming a run before it starts; "" otherwise.
func ServedModel(ctx context.Context, baseURL, apiKey string) string {
	c := NewClient(baseURL, apiKey, 1)
	var models struct {
		Data []struct {
			ID   string `json:"id"`
			Root string `json:"root"`
		} `json:"data"`
	}
	if c.getJSON(ctx, "/v1/models", &models) != nil || len(models.Data) != 1 {
		return ""
	}
	return cmp.Or(lastSegment(models.Data[0].Root), models.Data[0].ID)
}

// healthy reports whether the server answers: /health with 200, or a model
// list for servers that have no /health.
func (c *Client) healthy(ctx context.Context) bool {
	if resp, err := c.get(ctx, "/health"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			return true
		}
	}
	var models struct{ Data []any }
	return c.getJSON(ctx, "/v1/models", &models) == nil && len(models.Data) > 0
}

// probeStreamTimeout bounds the probe's 4-token request, which may wait for
// the server to load the model.
const probeStreamTimeout = 5 * time.Minute
