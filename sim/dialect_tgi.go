package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// FlavourTGI is Hugging Face's text-generation-inference (TGI 3): /info
// with its limits, /tokenize and /chat_tokenize answering token lists, its
// own Prometheus names, and a 422 for a prompt that does not fit. Its
// /v1/models says nothing of the model's length, and it ignores
// continuous_usage_stats and cache_salt.
const FlavourTGI = "tgi"

func init() {
	registerDialect(FlavourTGI, dialect{
		routes: map[string]handler{"GET /info": (*Server).tgiInfo, "POST /tokenize": (*Server).tgiTokenize,
			"POST /chat_tokenize": (*Server).tgiChatTokenize},
		metrics: tgiMetrics,
		refuse:  tgiRefuse,
		model: func(s *Server, entry map[string]any) {
			delete(entry, "max_model_len")
			delete(entry, "root")
			delete(entry, "parent")
			entry["created"], entry["owned_by"] = 0, s.p.Model
		},
	})
}

// tgiInfo is TGI's /info: the model, its per-request limits (prompt, and
// prompt with output) and the router's version. TGI 3 no longer lists
// max_batch_total_tokens, its KV capacity.
func (s *Server) tgiInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{
		"model_id": s.p.Model, "model_sha": nil, "model_pipeline_tag": "text-generation",
		"max_concurrent_requests": s.p.KV.MaxRunning, "max_best_of": 2, "max_stop_sequences": 4,
		"max_input_tokens": s.p.MaxModelLen - 1, "max_total_tokens": s.p.MaxModelLen,
		"validation_workers": 2, "max_client_batch_size": 4,
		"router": "text-generation-router", "version": s.p.Version, "sha": nil, "docker_label": nil,
	})
}

// tgiToken is one entry of TGI's token lists.
type tgiToken struct {
	ID    int    `json:"id"`
	Text  string `json:"text"`
	Start int    `json:"start"`
	Stop  int    `json:"stop"`
}

// tgiTokens lists the tokens of text, each with its place in it.
func tgiTokens(tokens []string) []tgiToken {
	out := make([]tgiToken, 0, len(tokens))
	at := 0
	for _, t := range tokens {
		out = append(out, tgiToken{ID: tokenID(t), Text: t, Start: at, Stop: at + len(t)})
		at += len(t) + 1
	}
	return out
}

// tgiTokenize is TGI's /tokenize: {"inputs"} as plain text.
func (s *Server) tgiTokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Inputs *string `json:"inputs"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil || req.Inputs == nil {
		tgiError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: missing field `inputs`", "validation")
		return
	}
	writeJSON(w, tgiTokens(strings.Fields(*req.Inputs)))
}

// tgiChatTokenize is TGI's /chat_tokenize: a chat request templated, then
// tokenized, as the chat route counts it.
func (s *Server) tgiChatTokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []message `json:"messages"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil || len(req.Messages) == 0 {
		tgiError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: missing field `messages`", "validation")
		return
	}
	var tokens []string
	forEachToken(req.Messages, true, func(tok string) { tokens = append(tokens, tok) })
	writeJSON(w, map[string]any{"tokenize_response": tgiTokens(tokens), "templated_text": strings.Join(tokens, " ")})
}

// tgiError is TGI's error body.
func tgiError(w http.ResponseWriter, code int, msg, typ string) {
	writeError(w, code, "application/json", map[string]string{"error": msg, "error_type": typ})
}

// tgiRefuse is TGI's validation error for a prompt and output past
// max_total_tokens.
func tgiRefuse(w http.ResponseWriter, s *Server, prompt, output int) {
	tgiError(w, http.StatusUnprocessableEntity, fmt.Sprintf(
		"Input validation error: `inputs` tokens + `max_new_tokens` must be <= %d. Given: %d `inputs` tokens and %d `max_new_tokens`",
		s.p.MaxModelLen, prompt, output), "validation")
}

// tgiMetrics writes TGI's /metrics: its router's names, without labels but
// the batch histograms' method.
func tgiMetrics(s *Server, w io.Writer, c counters) {
	metric := func(name, kind string, v float64) {
		fmt.Fprintf(w, "# TYPE %s %s\n%s %v\n", name, kind, name, v)
	}
	metric("tgi_request_count", "counter", float64(s.seq.Load()))
	metric("tgi_request_success", "counter", c.completed)
	metric("tgi_queue_size", "gauge", float64(c.waiting))
	metric("tgi_batch_current_size", "gauge", float64(c.running))
	// A histogram of each completed request's output: its sum counts the
	// tokens of the requests that ended.
	fmt.Fprintf(w, "# TYPE tgi_request_generated_tokens histogram\n"+
		"tgi_request_generated_tokens_bucket{le=\"+Inf\"} %[1]v\ntgi_request_generated_tokens_sum %[2]v\n"+
		"tgi_request_generated_tokens_count %[1]v\n", c.completed, c.completedTokens)
	// The prefill call of each batch, from its start to its first token
	// handed on; the sim's prefills are each a batch of their own.
	writeHistogram(w, "tgi_batch_inference_duration", "Batch inference duration", `method="prefill"`, c.prefillSeconds)
}
