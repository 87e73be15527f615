package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// TestReasoningModelNames: go-openai refuses max_tokens for served names it
// takes for reasoning models (o1…, o3…, o4…, gpt-5…) before a request
// leaves; under such a name the cap goes as max_completion_tokens, and
// under any other as max_tokens.
func TestReasoningModelNames(t *testing.T) {
	for _, tt := range []struct {
		model, field string
	}{{"o3-mini", "max_completion_tokens"}, {"gpt-5-local", "max_completion_tokens"}, {"o1", "max_completion_tokens"},
		{"nemotron", "max_tokens"}, {"qwen3-o1", "max_tokens"}} {
		t.Run(tt.model, func(t *testing.T) {
			var body map[string]any
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				json.NewDecoder(r.Body).Decode(&body)
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			}))
			defer srv.Close()
			c := newClient(srv.URL, "", 1, nil)
			c.model = tt.model
			obs := c.stream(context.Background(), chatRequest{prompt: "hello", maxTokens: 77}, 5*time.Second, hooks{})
			if obs.err != nil {
				t.Fatalf("the request failed: %v", obs.err)
			}
			other := map[string]string{"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}[tt.field]
			if body[tt.field] != 77.0 || body[other] != nil {
				t.Errorf("%s = %v, %s = %v; want the cap in %s only", tt.field, body[tt.field], other, body[other], tt.field)
			}
		})
	}
}

// TestChatBody: go-openai's request with the fields it lacks — usage on
// every chunk, a temperature of 0 (which go-openai would omit), the cache
// salt, ignore_eos — the engine's own fields over the settings' extra
// ones, and those where neither the request nor the engine sets the same
// field.
func TestChatBody(t *testing.T) {
	zero := 0.0
	c := newClient("http://x", "", 1, nil)
	c.model = "m"
	c.chat = chatOptions{temperature: &zero, ignoreEOS: true, kwargs: map[string]any{"enable_thinking": false},
		engine: map[string]any{"timings_per_token": true, "model": "nor the engine's"},
		extra:  map[string]any{"top_k": 5, "model": "not this", "stream_options": "nor this", "timings_per_token": false}}
	raw, err := json.Marshal(c.chatBody(chatRequest{prompt: "<hi>", maxTokens: 9, salt: "s1", seed: 1 << 63}))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	so, _ := body["stream_options"].(map[string]any)
	msgs, _ := body["messages"].([]any)
	if body["model"] != "m" || body["temperature"] != 0.0 || body["top_k"] != 5.0 || body["ignore_eos"] != true ||
		body["cache_salt"] != "s1" || body["max_tokens"] != 9.0 || body["stream"] != true ||
		so["continuous_usage_stats"] != true || so["include_usage"] != true || len(msgs) != 1 || body["timings_per_token"] != true {
		t.Errorf("body %s", raw)
	}
	if !strings.Contains(string(raw), `"seed":9223372036854775808`) || !strings.Contains(string(raw), `"chat_template_kwargs":{"enable_thinking":false}`) {
		t.Errorf("seed or kwargs lost: %s", raw)
	}
	c.chat = chatOptions{}
	raw, _ = json.Marshal(c.chatBody(chatRequest{prompt: "x", maxTokens: 9}))
	if strings.Contains(string(raw), "temperature") || strings.Contains(string(raw), "cache_salt") || strings.Contains(string(raw), "ignore_eos") {
		t.Errorf("unset fields sent: %s", raw)
	}
}

// TestServerErrorWords: a refusal keeps the server's words from the
// error shapes servers use, and a 429's Retry-After.
func TestServerErrorWords(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"error":{"message":"This model's maximum context length is 8192 tokens","code":400}}`, "This model's maximum context length is 8192 tokens"},
		{`{"error":"the request exceeds the available context size"}`, "the request exceeds the available context size"},
		{`{"object":"error","message":"too long"}`, "too long"},
		{"plain words\n", "plain words"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			fmt.Fprint(w, tt.body)
		}))
		c := newClient(srv.URL, "", 1, nil)
		obs := c.stream(context.Background(), chatRequest{prompt: "p", maxTokens: 1}, time.Second, hooks{})
		srv.Close()
		var se *serverError
		if !errors.As(obs.err, &se) || se.Status != 429 || se.Message != tt.want || se.RetryAfter != 7*time.Second {
			t.Errorf("%s: %#v", tt.body, obs.err)
		}
	}
}

// TestChunkFieldsAreRead: every field the runner reads from a chunk, in
// each engine's shape, arrives through one decode (go-openai's choice and
// usage, vLLM's delta.reasoning, the engines' own fields), and the
// servers' habits (bytes of a split character, a repeated name, a null
// finish_reason) do not make a chunk malformed.
func TestChunkFieldsAreRead(t *testing.T) {
	decode := func(raw string) wireChunk {
		t.Helper()
		var ch wireChunk
		if err := jsonv2.Unmarshal([]byte(raw), &ch, chunkOptions); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return ch
	}
	ch := decode(`{"id":"x","created":1.5e9,"choices":[{"index":0,"delta":{"reasoning":"r","content":"c"},"finish_reason":null}],"usage":{"prompt_tokens":7,"completion_tokens":3},"metrics":{"tokens_per_second":41.5}}`)
	if d := ch.Choices[0].Delta; d.Reasoning != "r" || d.Content != "c" || ch.Choices[0].FinishReason != "" {
		t.Errorf("vLLM chunk: delta %+v, finish %q", d, ch.Choices[0].FinishReason)
	}
	if ch.Usage == nil || ch.Usage.PromptTokens != 7 || ch.Usage.CompletionTokens != 3 || ch.Metrics == nil || ch.Metrics.TokensPerSecond != 41.5 {
		t.Errorf("vLLM chunk: usage %+v, metrics %+v", ch.Usage, ch.Metrics)
	}
	ch = decode(`{"choices":[{"delta":{"reasoning_content":"rc"},"finish_reason":"length"}],"timings":{"predicted_n":9,"predicted_per_second":12.5,"prompt_n":100,"prompt_ms":20}}`)
	if ch.Choices[0].Delta.ReasoningContent != "rc" || ch.Choices[0].FinishReason != "length" {
		t.Errorf("llama.cpp chunk: %+v", ch.Choices[0])
	}
	if tm := ch.Timings; tm == nil || *tm != (llamaTimings{PredictedN: 9, PredictedPerSecond: 12.5, PromptN: 100, PromptMs: 20}) {
		t.Errorf("llama.cpp timings: %+v", tm)
	}
	if ch = decode(`{"error":{"message":"boom"}}`); ch.Error == nil || ch.Error.Message != "boom" {
		t.Errorf("error event: %+v", ch.Error)
	}
	ch = decode("{\"choices\":[{\"delta\":{\"content\":\"\xe2\x82\"}}],\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}")
	if ch.Choices[0].Delta.Content != "ok" {
		t.Errorf("repeated name: the last should win, got %+v", ch.Choices)
	}
	for _, bad := range []string{`{"choices":[{"delta":{"content":5}}]}`, `{"usage":{"completion_tokens":"3"}}`, `{"choices":`} {
		var ch wireChunk
		if jsonv2.Unmarshal([]byte(bad), &ch, chunkOptions) == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
