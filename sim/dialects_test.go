package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func llamaFixture(t *testing.T, name string) []event {
	return fixtureFile(t, filepath.Join("testdata", "llama-server", name))
}

// llamaKind names a llama-server chunk: role, content, finish, usage, done.
func llamaKind(t *testing.T, data string) string {
	if data == "[DONE]" {
		return "done"
	}
	var c struct {
		Choices []struct {
			Delta        map[string]any `json:"delta"`
			FinishReason *string        `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	switch {
	case len(c.Choices) == 0:
		return "usage"
	case c.Choices[0].FinishReason != nil:
		return "finish"
	case c.Choices[0].Delta["role"] != nil:
		return "role"
	}
	return "content"
}

// TestLlamaCppMatchesTheCapture compares the llamacpp flavour with traffic
// captured from a real llama-server: the same kinds of chunk in the same
// order, and no field the real server does not send.
func TestLlamaCppMatchesTheCapture(t *testing.T) {
	p := fastProfile()
	p.Flavour = FlavourLlamaCpp
	_, url := startSim(t, p)
	for _, tt := range []struct{ fixture, extra string }{
		{"chat-stream-include-usage.sse", `"stream":true,"max_tokens":12,"ignore_eos":true,"stream_options":{"include_usage":true}`},
		{"chat-stream-timings-per-token.sse", `"stream":true,"max_tokens":12,"ignore_eos":true,"timings_per_token":true,"stream_options":{"include_usage":true}`},
	} {
		want := llamaFixture(t, tt.fixture)
		got, err := streamChat(t, url, chatBody(10, tt.extra))
		if err != nil {
			t.Fatal(err)
		}
		shapes := map[string][]string{}
		var wantOrder, gotOrder []string
		for _, e := range want {
			k := llamaKind(t, e.data)
			wantOrder = appendNew(wantOrder, k)
			if k != "done" {
				shapes[k] = append(shapes[k], shape(t, []byte(e.data))...)
			}
		}
		for _, e := range got {
			if e.comment {
				continue
			}
			k := llamaKind(t, e.data)
			gotOrder = appendNew(gotOrder, k)
			if k == "done" {
				continue
			}
			for _, path := range shape(t, []byte(e.data)) {
				if !slices.Contains(shapes[k], path) {
					t.Errorf("%s: the sim's %s chunk has %s, llama-server's does not", tt.fixture, k, path)
				}
			}
		}
		if !slices.Equal(gotOrder, wantOrder) {
			t.Errorf("%s: chunk order %v, llama-server's %v", tt.fixture, gotOrder, wantOrder)
		}
	}
}

func TestLlamaCppEndpoints(t *testing.T) {
	p := fastProfile()
	p.Flavour = FlavourLlamaCpp
	p.KV = KVProfile{CapacityTokens: 1 << 22, BlockSize: 16, MaxRunning: 4}
	_, url := startSim(t, p)
	var props struct {
		TotalSlots int `json:"total_slots"`
		Settings   struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	json.Unmarshal(getJSON(t, url+"/props"), &props)
	if props.TotalSlots != 4 || props.Settings.NCtx != 1<<20 {
		t.Errorf("/props: %+v", props)
	}
	post := func(path, body string) string {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	var tmpl struct{ Prompt string }
	json.Unmarshal([]byte(post("/apply-template", `{"messages":[{"role":"user","content":"Hello there."}]}`)), &tmpl)
	var tok struct{ Tokens []int }
	json.Unmarshal([]byte(post("/tokenize", `{"content":`+string(mustJSON(tmpl.Prompt))+`}`)), &tok)
	events, _ := streamChat(t, url, `{"model":"sim","messages":[{"role":"user","content":"Hello there."}],"stream":true,"max_tokens":1,"stream_options":{"include_usage":true}}`)
	var u struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	json.Unmarshal([]byte(events[len(events)-2].data), &u)
	if len(tok.Tokens) != u.Usage.PromptTokens || u.Usage.PromptTokens != 5 {
		t.Errorf("apply-template + tokenize count %d, the completion's prompt_tokens %d (want 5)", len(tok.Tokens), u.Usage.PromptTokens)
	}
	metrics := string(getJSON(t, url+"/metrics"))
	for _, name := range []string{"llamacpp:requests_processing", "llamacpp:requests_deferred"} {
		if !strings.Contains(metrics, "\n"+name+" ") {
			t.Errorf("/metrics lacks %s:\n%s", name, metrics)
		}
	}
}

func TestLlamaCppPromptTooLong(t *testing.T) {
	p := fastProfile()
	p.Flavour = FlavourLlamaCpp
	p.MaxModelLen = 1 << 20
	p.KV = KVProfile{CapacityTokens: 4096, BlockSize: 16, MaxRunning: 4}
	p.MaxModelLen = 1024
	_, url := startSim(t, p)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(2000, `"max_tokens":4`)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	f, err := os.ReadFile(filepath.Join("testdata", "llama-server", "chat-prompt-too-long.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fixture := string(f)[:strings.LastIndex(string(f), "}")+1]
	if resp.StatusCode != 400 || !slices.Equal(shape(t, body), shape(t, []byte(fixture))) {
		t.Errorf("status %d, %s\nwant the shape of %s", resp.StatusCode, body, fixture)
	}
}

func TestSGLangDialect(t *testing.T) {
	p := fastProfile()
	p.Flavour = FlavourSGLang
	p.ReasoningTokens = 2
	_, url := startSim(t, p)
	events, err := streamChat(t, url, chatBody(5, `"stream":true,"max_tokens":6,"ignore_eos":true,"stream_options":{"continuous_usage_stats":true}`))
	if err != nil {
		t.Fatal(err)
	}
	usages, reasoning := 0, 0
	for _, e := range events {
		if e.comment || e.data == "[DONE]" {
			continue
		}
		var c map[string]any
		json.Unmarshal([]byte(e.data), &c)
		if c["usage"] != nil {
			usages++
		}
		if strings.Contains(e.data, `"reasoning_content":`) {
			reasoning++
		}
	}
	if usages < 3 || reasoning == 0 {
		t.Errorf("%d chunks with usage (continuous without include_usage), %d with reasoning_content", usages, reasoning)
	}
	var info struct {
		MaxTotalNumTokens int `json:"max_total_num_tokens"`
	}
	json.Unmarshal(getJSON(t, url+"/server_info"), &info)
	if info.MaxTotalNumTokens != 2_000_000 {
		t.Errorf("/server_info: %+v", info)
	}
	if !strings.Contains(string(getJSON(t, url+"/metrics")), "sglang:num_queue_reqs{") {
		t.Error("/metrics lacks sglang:num_queue_reqs")
	}
}
