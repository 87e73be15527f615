package runner

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOwnFieldsAreTheRequests holds ownFields, the fields server.extra may
// not set, to the fields a chat request carries with every option on (and
// llama.cpp's), and checks an extra field of another name is sent while
// one of these is refused by Check with the setting to use.
func TestOwnFieldsAreTheRequests(t *testing.T) {
	temp := 0.5
	c := &client{model: "m", chat: chatOptions{temperature: &temp, ignoreEOS: true, kwargs: map[string]any{"enable_thinking": false},
		engine: map[string]any{"timings_per_token": true}, extra: map[string]any{"top_k": 20}}}
	for _, model := range []string{"m", "o1-mini"} { // max_tokens, and max_completion_tokens for a reasoning model
		c.model = model
		body, err := json.Marshal(c.chatBody(chatRequest{prompt: "p", maxTokens: 8, seed: 1, salt: "s"}))
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(body, &fields); err != nil {
			t.Fatal(err)
		}
		if string(fields["top_k"]) != "20" {
			t.Errorf("an extra field of its own name was not sent: %s", body)
		}
		for k := range fields {
			if _, own := ownFields[k]; !own && k != "top_k" {
				t.Errorf("the request sets %q, which ownFields lacks: an extra %q would be dropped unchecked", k, k)
			}
		}
	}
	s := Settings{}
	s.Server.Extra = map[string]any{"max_tokens": 5, "messages": nil, "top_k": 20}
	err := s.Check()
	for _, want := range []string{`"max_tokens" is a field matrixgen sets itself, from sweep.max_output: set that instead`, `"messages" is a field matrixgen sets itself`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v; want %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "top_k") {
		t.Errorf("Check refused an extra field the request does not set: %v", err)
	}
}
