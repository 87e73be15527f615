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
