package sim

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Ollama's dialect, as Ollama 0.6.5 speaks it: /api/version, /api/show
// (the model's num_ctx among its parameters), /api/ps (no context length in
// that version), and the native /api/chat, a stream of one JSON line per
// token ending with the server's own counts. Beside the OpenAI-compatible
// endpoint it has no tokenizer, no metrics and no cache_salt; it cuts a
// prompt past num_ctx silently, and a request whose client left while its
// prompt was processed goes on to the end of its prompt, dropped only at
// its first token (FinishAbandonedPrompt is on for this flavour).

func ollamaError(w http.ResponseWriter, code int, msg string) {
	writeError(w, code, "application/json; charset=utf-8", map[string]string{"error": msg})
}

func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		ollamaError(w, http.StatusBadRequest, "invalid JSON")
		return
	}
	if m := cmp.Or(req.Model, req.Name); m != s.p.Model {
		ollamaError(w, http.StatusNotFound, "model '"+m+"' not found")
		return
	}
	writeJSON(w, map[string]any{
		"parameters": "num_ctx                        " + strconv.Itoa(s.p.MaxModelLen),
		"template":   "{{ .Prompt }}",
		"details":    map[string]any{"format": "gguf", "family": "llama", "parameter_size": "9.03M", "quantization_level": "F16"},
		"model_info": map[string]any{"general.architecture": "llama", "llama.context_length": 32768},
	})
}

func (s *Server) ollamaPs(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"models": []any{map[string]any{
		"name": s.p.Model, "model": s.p.Model, "size": 927597568, "size_vram": 0,
		"details": map[string]any{"format": "gguf", "family": "llama"},
	}}})
}

// ollamaChat takes Ollama's native request and answers it natively.
func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string    `json:"model"`
		Messages []message `json:"messages"`
		Stream   *bool     `json:"stream"`
		Options  struct {
			NumPredict *int    `json:"num_predict"`
			Seed       *int64  `json:"seed"`
			NumCtx     int     `json:"num_ctx"`
			Temp       float64 `json:"temperature"`
		} `json:"options"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		ollamaError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	if req.Model != s.p.Model {
		ollamaError(w, http.StatusNotFound, "model '"+req.Model+"' not found, try pulling it first")
		return
	}
	cr := chatRequest{Model: req.Model, Messages: req.Messages, Stream: req.Stream == nil || *req.Stream, MaxTokens: req.Options.NumPredict}
	if req.Options.Seed != nil {
		cr.Seed = new(uint64(*req.Options.Seed))
	}
	s.serveChat(w, r, cr, true)
}

// native writes the answer as Ollama's stream, one line per token, or as
// one object when the request did not stream.
func (st *streamState) native(ctx context.Context, stream bool) {
	st.w.Header().Set("Content-Type", "application/x-ndjson")
	st.w.WriteHeader(http.StatusOK)
	mb := st.req.out
	for {
		select {
		case <-ctx.Done():
			return
		case <-mb.signal:
		}
		snap := mb.read()
		for stream && st.sent < snap.produced {
			st.buf = st.ollamaLine(st.buf, st.text(st.sent, st.sent+1), nil)
			if st.flush() != nil {
				return
			}
			st.wrote(snap, st.sent+1)
		}
		if snap.done && (st.sent >= snap.produced || !stream) {
			st.finished(snap)
			content := ""
			if !stream {
				content = st.text(0, snap.produced)
			}
			st.w.Write(st.ollamaLine(st.buf, content, &snap)) // unflushed: one whole answer has a length
			return
		}
	}
}

// ollamaLine is one line of the stream; the final one (snap set) carries
// the server's own counts and durations in nanoseconds: prompt evaluation
// from admission to the first token, generation from there to the end.
func (st *streamState) ollamaLine(b []byte, content string, snap *snapshot) []byte {
	b = appendString(append(b, `{"model":`...), st.s.p.Model)
	b = appendString(append(b, `,"created_at":`...), time.Now().UTC().Format(time.RFC3339Nano))
	b = appendString(append(b, `,"message":{"role":"assistant","content":`...), content)
	b = append(b, `},"done":`...)
	if snap == nil {
		return append(b, "false}\n"...)
	}
	first, finished := st.rt.FirstToken, st.rt.Finished // this goroutine's own writes
	if first.IsZero() {
		first = finished
	}
	reason := snap.reason
	if reason == "abort" {
		reason = "stop"
	}
	b = appendString(append(b, `true,"done_reason":`...), reason)
	return fmt.Appendf(b, `,"total_duration":%d,"load_duration":1000000,"prompt_eval_count":%d,`+
		`"prompt_eval_duration":%d,"eval_count":%d,"eval_duration":%d}`+"\n",
		int64(finished.Sub(st.rt.Arrival)), st.rt.PromptTokens, int64(st.promptMs()*float64(time.Millisecond)),
		snap.produced, int64(max(finished.Sub(first), 0)))
}
