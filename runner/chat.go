package runner

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// chatOptions are what every chat request carries beside the prompt, from
// the settings and the probe.
type chatOptions struct {
	temperature *float64
	ignoreEOS   bool
	kwargs      map[string]any // chat_template_kwargs
	// engine are the fields the engine asks of every request, which win
	// over extra, the settings' own; the request's own fields win over both.
	engine, extra map[string]any
}

// chatBody is a streaming chat request: go-openai's request type and the
// fields it has no place for, marshalled once.
type chatBody struct {
	openai.ChatCompletionRequest
	// StreamOptions asks for usage on every chunk, which go-openai's lacks.
	StreamOptions streamOptions `json:"stream_options"`
	// Seed is uint64 (go-openai's is an int pointer).
	Seed uint64 `json:"seed"`
	// Temperature is sent when set, 0 included: go-openai's omits a 0.
	Temperature   *float64 `json:"temperature,omitempty"`
	CacheSalt     string   `json:"cache_salt,omitempty"`
	IgnoreEOS     bool     `json:"ignore_eos,omitempty"`
	engine, extra map[string]any
}

type streamOptions struct {
	IncludeUsage         bool `json:"include_usage"`
	ContinuousUsageStats bool `json:"continuous_usage_stats"`
}

// chatBody is the request for req.
func (c *client) chatBody(req chatRequest) chatBody {
	o := c.chat
	return chatBody{
		ChatCompletionRequest: withOutputLimit(openai.ChatCompletionRequest{
			Model:              c.model,
			Messages:           []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: req.prompt}},
			Stream:             true,
			ChatTemplateKwargs: o.kwargs,
		}, req.maxTokens),
		StreamOptions: streamOptions{IncludeUsage: true, ContinuousUsageStats: true},
		Seed:          req.seed,
		Temperature:   o.temperature,
		CacheSalt:     req.salt,
		IgnoreEOS:     o.ignoreEOS,
		engine:        o.engine,
		extra:         o.extra,
	}
}

// MarshalJSON writes the request's own fields, the engine's, and then the
// settings' extra fields neither sets, encoding the prompt only once.
func (b chatBody) MarshalJSON() ([]byte, error) {
	type plain chatBody // without this method
	messages := b.Messages
	b.Messages = nil
	head, err := json.Marshal(plain(b))
	if err != nil {
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(head, &fields); err != nil {
		return nil, err
	}
	for _, added := range []map[string]any{b.engine, b.extra} { // the engine's fields win over the settings'
		for k, v := range added {
			if _, set := fields[k]; set {
				continue
			}
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("extra field %s: %w", k, err)
			}
			fields[k] = raw
		}
	}
	if fields["messages"], err = json.Marshal(messages); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}

// errorMessage is the message of an OpenAI-style error body
// ({"error": {"message": …}}, or {"error": "…"}, or {"message": …}), or the
// body itself.
func errorMessage(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case e.Message != "":
			return e.Message
		}
	}
	return strings.TrimSpace(string(body))
}
