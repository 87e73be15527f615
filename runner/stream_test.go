package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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
