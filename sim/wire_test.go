package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
)

// shape lists a JSON value's paths with their types ("choices[].delta.content:string"),
// the part of a wire format that must match; values may differ.
func shape(t *testing.T, raw []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			out = append(out, prefix+":object")
			for k, e := range x {
				walk(prefix+"."+k, e)
			}
		case []any:
			out = append(out, prefix+":array")
			for _, e := range x {
				walk(prefix+"[]", e)
			}
		case string:
			out = append(out, prefix+":string")
		case float64:
			out = append(out, prefix+":number")
		case bool:
			out = append(out, prefix+":bool")
		case nil:
			out = append(out, prefix+":null")
		}
	}
	walk("", v)
	slices.Sort(out)
	return slices.Compact(out)
}

// kind names what a chunk of a chat stream is for.
func kind(t *testing.T, data string) string {
	if data == "[DONE]" {
		return "done"
	}
	c := decodeChunk(t, data)
	switch {
	case c.Error != nil:
		return "error"
	case len(c.Choices) == 0:
		return "usage"
	case c.Choices[0].FinishReason != nil:
		return "finish"
	case c.Choices[0].Delta.Role != nil:
		return "role"
	case c.Choices[0].Delta.Reasoning != nil:
		return "reasoning"
	}
	return "content"
}

func fixtureEvents(t *testing.T, name string) []event {
	return fixtureFile(t, filepath.Join("testdata", "vllm", name))
}

// fixtureFile reads the SSE events of a captured or constructed stream.
func fixtureFile(t *testing.T, path string) []event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := readEvents(f)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// TestStreamMatchesVLLM checks each kind of chunk the sim sends has exactly
// the fields, nesting and types of vLLM's, and that the stream has vLLM's
// order: role, reasoning, content, finish, usage, [DONE]. It runs in a synctest bubble: on the wall clock, a busy machine let
// tokens pile up, and the sim sent the last content tokens in the finish
// chunk (as vLLM does for a slow reader), so no content chunk came.
func TestStreamMatchesVLLM(t *testing.T) { synctest.Test(t, testStreamMatchesVLLM) }

func testStreamMatchesVLLM(t *testing.T) {
	p := fastProfile()
	p.ReasoningTokens = 3
	_, url := startMemSim(t, p)
	got, err := streamChat(t, url, chatBody(50, `"stream":true,"max_tokens":12,"ignore_eos":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := fixtureEvents(t, "chat-stream-continuous-usage.sse")
	shapes := map[string][]string{}
	var wantOrder []string
	for _, e := range want {
		if e.comment {
			continue
		}
		k := kind(t, e.data)
		wantOrder = appendNew(wantOrder, k)
		if k != "done" {
			shapes[k] = shape(t, []byte(e.data))
		}
	}
	var gotOrder []string
	for _, e := range got {
		if e.comment {
			continue
		}
		k := kind(t, e.data)
		gotOrder = appendNew(gotOrder, k)
		if k == "done" {
			continue
		}
		if g, w := shape(t, []byte(e.data)), shapes[k]; !slices.Equal(g, w) {
			t.Errorf("%s chunk shape differs from vLLM's:\n got  %v\n want %v", k, g, w)
		}
	}
	if !slices.Equal(gotOrder, wantOrder) {
		t.Errorf("chunk order %v, vLLM's %v", gotOrder, wantOrder)
	}
}

func appendNew(xs []string, x string) []string {
	if len(xs) > 0 && xs[len(xs)-1] == x {
		return xs
	}
	return append(xs, x)
}

func getJSON(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return b
}

func readFixture(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "vllm", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// subset checks every path of got is in want: the sim may leave out fields
// vLLM sends that no client reads (model permissions), but adds none.
func subset(t *testing.T, what string, got, want []string, required ...string) {
	t.Helper()
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("%s: the sim sends %s, vLLM does not", what, g)
		}
	}
	for _, r := range required {
		if !slices.Contains(got, r) {
			t.Errorf("%s: the sim lacks %s", what, r)
		}
	}
}

func TestEndpointsMatchVLLM(t *testing.T) {
	_, url := startSim(t, fastProfile())
	subset(t, "/v1/models", shape(t, getJSON(t, url+"/v1/models")), shape(t, readFixture(t, "v1-models.json")),
		".data[].id:string", ".data[].root:string", ".data[].max_model_len:number")
	if g, w := shape(t, getJSON(t, url+"/version")), shape(t, readFixture(t, "version.json")); !slices.Equal(g, w) {
		t.Errorf("/version: %v, want %v", g, w)
	}
	resp, err := http.Post(url+"/tokenize", "application/json", strings.NewReader(string(readFixture(t, "tokenize-request-chat.json"))))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if g, w := shape(t, body), shape(t, readFixture(t, "tokenize-response.json")); !slices.Equal(g, w) {
		t.Errorf("/tokenize: %v, want %v", g, w)
	}
	if resp, err := http.Get(url + "/health"); err != nil || resp.StatusCode != 200 {
		t.Errorf("/health: %v %v", resp, err)
	}
}

func TestPromptTooLongMatchesVLLM(t *testing.T) {
	p := fastProfile()
	p.MaxModelLen, p.KV.CapacityTokens = 1000, 100000
	_, url := startSim(t, p)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(990, `"max_tokens":100`)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
	if g, w := shape(t, body), shape(t, readFixture(t, "prompt-too-long.json")); !slices.Equal(g, w) {
		t.Errorf("shape %v, want %v", g, w)
	}
	// 990 words + <|user|> <|end|> <|assistant|> = 993 prompt tokens.
	want := "This model's maximum context length is 1000 tokens. However, you requested 1093 tokens (993 in the messages, 100 in the completion)."
	if !strings.Contains(string(body), want) {
		t.Errorf("message %s\nwant it to contain %q", body, want)
	}
}

func TestMetricsNames(t *testing.T) {
	p := fastProfile()
	p.Speculative = SpeculativeProfile{DraftTokens: 3, Acceptance: 0.5}
	_, url := startSim(t, p)
	text := string(getJSON(t, url+"/metrics"))
	for _, line := range strings.Split(string(readFixture(t, "metrics.txt")), "\n") {
		if !strings.HasPrefix(line, "# TYPE ") || strings.Contains(line, "histogram") {
			continue
		}
		name := strings.Fields(line)[2]
		if !strings.Contains(text, "\n"+name+"{") && !strings.HasPrefix(text, name+"{") {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	for _, label := range []string{`block_size="16"`, `num_gpu_blocks="125000"`, `kv_cache_size_tokens="2000000"`} {
		if !strings.Contains(text, label) {
			t.Errorf("cache_config_info lacks %s", label)
		}
	}
}

// FuzzChunkText: whatever text, model name, id or error message a chunk
// carries, it is one SSE event of valid JSON (no raw line break can split
// it) that reads back as that text, invalid UTF-8 as U+FFFD, one a byte.
func FuzzChunkText(f *testing.F) {
	for _, s := range []string{"", "plain", "line\nbreak\r\n\ndata: [DONE]", `"\`, "\x00\x1f\x7f\b\f", "\u2028\u2029", "<&>", "\xff\xfe", "é😀"} {
		f.Add(s, "model")
	}
	f.Fuzz(func(t *testing.T, text, model string) {
		want := string([]rune(text))
		u := usage{prompt: 1, completion: 2}
		for _, event := range [][]byte{
			appendDeltaChunk(nil, text, 1, model, deltaChunk{field: "content", text: text, finish: text, usage: &u}),
			appendErrorEvent(nil, text, text, 500),
		} {
			data, ok := bytes.CutPrefix(event, []byte("data: "))
			if !ok || !bytes.HasSuffix(data, []byte("\n\n")) || bytes.Count(event, []byte("\n")) != 2 {
				t.Fatalf("not one SSE event: %q", event)
			}
			c := decodeChunk(t, string(data))
			switch {
			case c.Error != nil:
				if c.Error.Message != want {
					t.Fatalf("%q read back as %q", text, c.Error.Message)
				}
			case len(c.Choices) != 1 || *c.Choices[0].Delta.Content != want:
				t.Fatalf("%q read back as %+v", text, c)
			case text == "" && c.Choices[0].FinishReason != nil, // "" is no finish: null
				text != "" && *c.Choices[0].FinishReason != want:
				t.Fatalf("finish %q read back as %v", text, c.Choices[0].FinishReason)
			}
		}
	})
}
