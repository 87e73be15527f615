package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The sim speaks several dialects of the same OpenAI-compatible API. vLLM's
// is in wire.go and server.go; here are where SGLang and llama.cpp's
// llama-server differ, as real llama-server traffic shows them. A dialect
// in a file of its own (dialect_<name>.go) registers itself instead.

// dialect is where a server's wire format differs from vLLM's, the sim's
// default: a dialect file fills in what its server does otherwise.
type dialect struct {
	// routes are the server's own endpoints, by pattern.
	routes map[string]handler
	// metrics writes its /metrics in its own names; nil: it has none.
	metrics func(s *Server, w io.Writer, c counters)
	// refuse answers a request whose prompt and output do not fit the
	// model's length; nil: vLLM's 400.
	refuse func(w http.ResponseWriter, s *Server, prompt, output int)
	// model edits the model's entry in /v1/models.
	model func(s *Server, entry map[string]any)
}

// dialects are the registered dialects, by flavour.
var dialects = map[string]dialect{}

// registerDialect adds a flavour the sim speaks, from the dialect's file.
func registerDialect(flavour string, d dialect) {
	dialects[flavour] = d
	Flavours = append(Flavours, flavour)
}

// handler is one of the server's endpoints.
type handler = func(*Server, http.ResponseWriter, *http.Request)

// routes adds the endpoints of the profile's dialect: a registered one's,
// or those of a dialect described here or in ollama.go.
func (s *Server) routes() {
	routes := map[string]map[string]handler{
		FlavourVLLM: {"GET /version": (*Server).version, "POST /tokenize": (*Server).tokenize},
		FlavourSGLang: {"GET /server_info": (*Server).sglangServerInfo,
			"GET /get_server_info": (*Server).sglangServerInfo, "POST /v1/tokenize": (*Server).sglangTokenize},
		FlavourLlamaCpp: {"GET /props": (*Server).llamaProps, "POST /tokenize": (*Server).llamaTokenize,
			"POST /apply-template": (*Server).llamaApplyTemplate, "GET /slots": (*Server).llamaSlots},
		FlavourOllama: {"GET /api/version": (*Server).version, "POST /api/show": (*Server).ollamaShow,
			"GET /api/ps": (*Server).ollamaPs, "POST /api/chat": (*Server).ollamaChat},
	}[s.p.Flavour] // FlavourOpenAI: the chat endpoint and /v1/models only
	if d, ok := dialects[s.p.Flavour]; ok {
		routes = d.routes
	}
	for pattern, h := range routes {
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { h(s, w, r) })
	}
}

func (s *Server) sglangServerInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{
		"max_total_num_tokens": s.p.blocks() * s.p.KV.BlockSize, "context_length": s.p.MaxModelLen,
		"max_running_requests": s.p.KV.MaxRunning, "version": s.p.Version, "model_path": s.p.Root,
	})
}

func (s *Server) sglangTokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt *string `json:"prompt"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil || req.Prompt == nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", "prompt is required")
		return
	}
	tokens := tokenIDs(*req.Prompt)
	writeJSON(w, map[string]any{"tokens": tokens, "count": len(tokens), "max_model_len": s.p.MaxModelLen})
}

// llamaSlotContext is each llama-server slot's context: the cache divided
// among the slots, capped by the model's length.
func (s *Server) llamaSlotContext() int {
	return min(s.p.KV.CapacityTokens/s.p.KV.MaxRunning, s.p.MaxModelLen)
}

func (s *Server) llamaProps(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{
		"default_generation_settings": map[string]any{"n_ctx": s.llamaSlotContext()},
		"total_slots":                 s.p.KV.MaxRunning,
		"model_path":                  s.p.Root,
		"build_info":                  s.p.Version,
	})
}

// llamaSlots lists llama-server's slots, as many processing as run.
func (s *Server) llamaSlots(w http.ResponseWriter, _ *http.Request) {
	c, _ := s.e.snapshot()
	slots := make([]map[string]any, s.p.KV.MaxRunning)
	for i := range slots {
		slots[i] = map[string]any{"id": i, "n_ctx": s.llamaSlotContext(), "is_processing": i < c.running}
	}
	writeJSON(w, slots)
}

func (s *Server) llamaTokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content *string `json:"content"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil || req.Content == nil {
		http.Error(w, `{"error":{"code":500,"message":"\"content\" must be provided","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	writeJSON(w, map[string]any{"tokens": tokenIDs(*req.Content)})
}

// llamaApplyTemplate renders the chat template as text whose words are the
// same tokens the completion counts: markers and words, space-separated.
func (s *Server) llamaApplyTemplate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []message `json:"messages"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"code":500,"message":"invalid JSON","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	var tokens []string
	forEachToken(req.Messages, true, func(tok string) { tokens = append(tokens, tok) })
	writeJSON(w, map[string]any{"prompt": strings.Join(tokens, " ")})
}

// llamaTooLong is llama-server's 400 for a prompt beyond a slot's context.
func llamaTooLong(w http.ResponseWriter, prompt, nCtx int) {
	writeError(w, http.StatusBadRequest, "application/json", map[string]any{"error": map[string]any{
		"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": nCtx,
		"message": "request (" + strconv.Itoa(prompt) + " tokens) exceeds the available context size (" + strconv.Itoa(nCtx) + " tokens), try increasing it",
	}})
}

// llamaChunk is a llama-server chunk after n tokens, its fields in its
// order: a choice of delta, then its timings when timings is set. The usage
// chunk has no delta, and its usage and timings.
func (st *streamState) llamaChunk(b []byte, delta, finish string, n int, timings bool) []byte {
	b = append(b, `data: {"choices":[`...)
	if delta != "" {
		b = appendOrNull(append(b, `{"finish_reason":`...), finish)
		b = append(append(b, `,"index":0,"delta":`...), delta...)
		b = append(b, '}')
	}
	b = strconv.AppendInt(append(b, `],"created":`...), st.created, 10)
	b = appendString(append(b, `,"id":`...), st.rt.ID)
	b = appendString(append(b, `,"model":`...), st.s.p.Model)
	b = append(b, `,"system_fingerprint":"b0-matrixgen-sim","object":"chat.completion.chunk"`...)
	prompt, cached := st.rt.PromptTokens, st.req.cachedTokens
	if delta == "" {
		b = fmt.Appendf(b, `,"usage":{"completion_tokens":%d,"prompt_tokens":%d,"total_tokens":%d,`+
			`"prompt_tokens_details":{"cached_tokens":%d}}`, n, prompt, prompt+n, cached)
	}
	if delta == "" || timings {
		b = st.appendTimings(b, prompt, cached, n)
	}
	return append(b, "}\n\n"...)
}

// appendTimings is llama-server's timings object, cumulative: its own
// view of the request, which a client can check its figures against: its
// prompt processing of the uncached tokens, and its generation from the
// first token, as llama-server times generation.
func (st *streamState) appendTimings(b []byte, prompt, cached, predicted int) []byte {
	promptMs, predictedMs := st.promptMs(), 0.0
	if first := st.rt.FirstToken; !first.IsZero() {
		predictedMs = float64(time.Since(first)) / float64(time.Millisecond)
	}
	b = fmt.Appendf(b, `,"timings":{"cache_n":%d,"prompt_n":%d,"prompt_ms":%.3f`, cached, prompt-cached, promptMs)
	if promptMs > 0 {
		b = fmt.Appendf(b, `,"prompt_per_second":%.3f`, float64(prompt-cached)/(promptMs/1000))
	}
	b = fmt.Appendf(b, `,"predicted_n":%d,"predicted_ms":%.3f`, predicted, predictedMs)
	if predictedMs > 0 && predicted > 1 {
		b = fmt.Appendf(b, `,"predicted_per_second":%.3f`, float64(predicted-1)/(predictedMs/1000))
	}
	return append(b, '}')
}
