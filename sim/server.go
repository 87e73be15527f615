// Package sim is a loopback inference server of known speed. It speaks
// vLLM's OpenAI-compatible wire format, behaves like an inference server
// under load (a batch scheduler, a KV cache that fills, a queue, prefix
// caching, speculative decoding, loops, faults), and records what it did, so
// every figure a client reports can be checked against the truth.
package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options are the server's settings beyond its profile.
type Options struct {
	// TraceLimit keeps the traces of this many most recent requests; 0 keeps
	// them all (tests), a negative value none.
	TraceLimit int
}

// Server is the simulated inference server.
type Server struct {
	p      Profile
	e      *engine
	tr     *tracer
	trace  bool
	phrase []string
	seq    atomic.Int64

	lostRequests atomic.Int64
	lostPosts    atomic.Int64

	faults atomic.Pointer[Faults]

	mux   *http.ServeMux
	once  sync.Once
	conns connections
}

// New starts a simulated server's engine. Close stops it.
func New(p Profile, opts Options) (*Server, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Flavour == FlavourLlamaCpp && p.Connections == (ConnectionProfile{}) {
		p.Connections = ConnectionProfile{IdleCloseSeconds: 5, MaxRequests: 100} // llama-server's HTTP library's
	}
	if p.Flavour == FlavourOllama && !p.FinishAbandoned {
		p.FinishAbandonedPrompt = true
	}
	s := &Server{
		p: p, e: newEngine(p), tr: &tracer{limit: max(opts.TraceLimit, 0)},
		trace: opts.TraceLimit >= 0, phrase: strings.Fields(p.Loop.Phrase),
		conns: connections{state: map[string]*connState{}},
	}
	s.faults.Store(&p.Faults)
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.HandleFunc("GET /health", s.health)
	s.mux.HandleFunc("GET /metrics", s.metrics)
	s.mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.routes()
	s.mux.HandleFunc("GET /sim/trace", s.traceJSON)
	s.mux.HandleFunc("GET /sim/power", s.power)
	s.mux.HandleFunc("GET /sim/timing", s.timingJSON)
	go s.e.run()
	return s, nil
}

// Close stops the engine; requests in flight end.
func (s *Server) Close() { s.once.Do(func() { close(s.e.stop) }) }

// ServeHTTP serves the server's endpoints, closing keep-alive connections
// as the profile's connections section says.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := s.p.Connections
	if c.IdleCloseSeconds == 0 && c.MaxRequests == 0 {
		s.mux.ServeHTTP(w, r)
		return
	}
	idle := time.Duration(c.IdleCloseSeconds * float64(time.Second))
	n, closed := s.conns.begin(r.RemoteAddr, idle)
	if closed {
		s.conns.forget(r.RemoteAddr)
		s.lostRequests.Add(1)
		if r.Method == http.MethodPost {
			s.lostPosts.Add(1)
		}
		panic(http.ErrAbortHandler) // close the connection without an answer
	}
	if c.MaxRequests > 0 && n >= c.MaxRequests {
		w.Header().Set("Connection", "close")
		defer s.conns.forget(r.RemoteAddr)
	}
	defer s.conns.end(r.RemoteAddr)
	s.mux.ServeHTTP(w, r)
}

// ConnState lets an http.Server tell the sim when connections open and
// close, so a new connection on a reused address starts afresh. Servers
// that do not hook it still work: connections are told apart by address.
func (s *Server) ConnState(c net.Conn, state http.ConnState) {
	if state == http.StateNew || state == http.StateClosed || state == http.StateHijacked {
		s.conns.forget(c.RemoteAddr().String())
	}
}

// LostRequests counts requests that arrived on a connection the server had
// already closed for idleness, and were never processed.
func (s *Server) LostRequests() int { return int(s.lostRequests.Load()) }

// LostPosts counts the lost requests that were POSTs, which a client's
// transport does not send again by itself.
func (s *Server) LostPosts() int { return int(s.lostPosts.Load()) }

// connections tracks keep-alive connections by their remote address.
type connections struct {
	mu    sync.Mutex
	state map[string]*connState
}

type connState struct {
	requests int       // requests the connection carried
	busy     int       // requests in progress
	idleFrom time.Time // when the last request ended
}

// begin starts a request on the connection at addr: its number on the
// connection, and whether the connection had been idle past idle (and so,
// on a real server, was closed before the request arrived).
func (cs *connections) begin(addr string, idle time.Duration) (n int, closed bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	st := cs.state[addr]
	if st == nil {
		st = &connState{}
		cs.state[addr] = st
	}
	if idle > 0 && st.requests > 0 && st.busy == 0 && time.Since(st.idleFrom) >= idle {
		return st.requests, true
	}
	st.requests++
	st.busy++
	return st.requests, false
}

func (cs *connections) end(addr string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if st := cs.state[addr]; st != nil {
		st.busy--
		st.idleFrom = time.Now()
	}
}

func (cs *connections) forget(addr string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.state, addr)
}

// Trace returns what the server did with each request so far.
func (s *Server) Trace() []RequestTrace { return s.tr.snapshot() }

// Timing reports how well the engine kept to the profile's schedule.
func (s *Server) Timing() Timing {
	_, t := s.e.snapshot()
	return t
}

// SetFaults changes the injected faults for requests from now on.
func (s *Server) SetFaults(f Faults) { s.faults.Store(&f) }

// apiError writes vLLM's error body.
func apiError(w http.ResponseWriter, code int, typ, msg string) {
	writeError(w, code, "application/json", map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

// writeError writes an error body as the server's dialect does: its own
// content type, and no trailing newline, unlike writeJSON.
func writeError(w http.ResponseWriter, code int, contentType string, body any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	b, _ := json.Marshal(body)
	w.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	entry := map[string]any{
		"id": s.p.Model, "object": "model", "created": 1796230000, "owned_by": "vllm",
		"root": s.p.Root, "parent": nil, "max_model_len": s.p.MaxModelLen,
	}
	if d := dialects[s.p.Flavour]; d.model != nil {
		d.model(s, entry)
	}
	writeJSON(w, map[string]any{"object": "list", "data": []any{entry}})
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	if s.p.Flavour == FlavourLlamaCpp {
		writeJSON(w, map[string]string{"status": "ok"})
	}
}

func (s *Server) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]string{"version": s.p.Version})
}

// maxBody bounds a request body: a 1M-token prompt is a few megabytes.
const maxBody = 64 << 20

func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model               string    `json:"model"`
		Prompt              *string   `json:"prompt"`
		Messages            []message `json:"messages"`
		AddGenerationPrompt *bool     `json:"add_generation_prompt"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", "invalid JSON: "+err.Error())
		return
	}
	tokens := []int{}
	switch {
	case req.Messages != nil:
		forEachToken(req.Messages, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt, func(tok string) { tokens = append(tokens, tokenID(tok)) })
	case req.Prompt != nil:
		tokens = tokenIDs(*req.Prompt)
	default:
		apiError(w, http.StatusBadRequest, "BadRequestError", "either prompt or messages is required")
		return
	}
	writeJSON(w, map[string]any{"count": len(tokens), "max_model_len": s.p.MaxModelLen, "tokens": tokens, "token_strs": nil})
}

type chatRequest struct {
	Model         string    `json:"model"`
	Messages      []message `json:"messages"`
	Stream        bool      `json:"stream"`
	StreamOptions struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	MaxTokens           *int    `json:"max_tokens"`
	NPredict            *int    `json:"n_predict"`
	TimingsPerToken     bool    `json:"timings_per_token"`
	MaxCompletionTokens *int    `json:"max_completion_tokens"`
	MinTokens           int     `json:"min_tokens"`
	IgnoreEOS           bool    `json:"ignore_eos"`
	Seed                *uint64 `json:"seed"`
	CacheSalt           string  `json:"cache_salt"`
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", "invalid JSON: "+err.Error())
		return
	}
	s.serveChat(w, r, req, false)
}

// serveChat answers a chat request in the OpenAI-compatible format, or in
// Ollama's native one when native is set.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, req chatRequest, native bool) {
	arrival := time.Now()
	n := s.seq.Add(1)
	if req.Model != s.p.Model {
		apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	if len(req.Messages) == 0 {
		apiError(w, http.StatusBadRequest, "BadRequestError", "messages: at least one message is required")
		return
	}
	fault := *s.faults.Load()
	if fault.Every <= 0 || n%int64(fault.Every) != 0 {
		fault = Faults{} // not this request's turn
	}
	if fault.HTTPStatus != 0 {
		if fault.RetryAfterSeconds > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(fault.RetryAfterSeconds))
		}
		apiError(w, fault.HTTPStatus, http.StatusText(fault.HTTPStatus), "injected fault")
		s.record(&RequestTrace{ID: requestID(n), Arrival: arrival, Fault: "http " + strconv.Itoa(fault.HTTPStatus)})
		return
	}
	// cache_salt is vLLM's; other servers ignore the field, so their prompt
	// caches are shared by every request.
	if s.p.Flavour != FlavourVLLM {
		req.CacheSalt = ""
	}
	p := tokenizePrompt(req.Messages, req.CacheSalt, s.p.KV.BlockSize, s.p.WordTokens)
	truncated := false
	if t := fault.TruncatePromptTo; t > 0 && p.tokens > t {
		p.tokens, p.blocks, truncated = t, p.blocks[:t/s.p.KV.BlockSize], true
	}
	if s.p.Flavour == FlavourLlamaCpp { // llama-server reads n_predict, not max_completion_tokens
		req.MaxCompletionTokens = req.NPredict
	}
	maxTokens := s.p.MaxModelLen - p.tokens
	for _, m := range []*int{req.MaxTokens, req.MaxCompletionTokens} {
		if m != nil {
			maxTokens = *m
		}
	}
	if s.p.Flavour == FlavourLlamaCpp {
		// A slot holds prompt and output; a longer prompt is refused, and
		// the output stops where the slot is full.
		nCtx := s.llamaSlotContext()
		if p.tokens >= nCtx {
			llamaTooLong(w, p.tokens, nCtx)
			return
		}
		maxTokens = max(min(maxTokens, nCtx-p.tokens), 1)
	}
	if s.p.Flavour == FlavourOllama {
		// Ollama cuts a prompt past its context silently, keeping its end,
		// and shifts the context to make room for the output.
		if p.tokens > s.p.MaxModelLen {
			p.tokens, p.blocks, truncated = s.p.MaxModelLen, nil, true
		}
		maxTokens = max(maxTokens, 1)
	} else if maxTokens < 1 || p.tokens+maxTokens > s.p.MaxModelLen {
		if d := dialects[s.p.Flavour]; d.refuse != nil {
			d.refuse(w, s, p.tokens, maxTokens)
			return
		}
		apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			s.p.MaxModelLen, p.tokens+maxTokens, p.tokens, maxTokens))
		return
	}
	seed := uint64(n)
	if req.Seed != nil {
		seed = *req.Seed
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	er := &request{
		prompt: p, maxTokens: maxTokens, minTokens: req.MinTokens, ignoreEOS: req.IgnoreEOS,
		rng: rng, loopStart: -1, out: &mailbox{signal: make(chan struct{}, 1)},
	}
	if (s.p.Loop.AboveContext > 0 && p.tokens > s.p.Loop.AboveContext) || rng.Float64() < s.p.Loop.Probability {
		er.loopStart = s.p.Loop.AfterTokens
	}
	rt := &RequestTrace{ID: requestID(n), Arrival: arrival, PromptTokens: p.tokens, Looped: er.loopStart >= 0, LoopStart: er.loopStart}
	if truncated {
		rt.Fault = "truncated prompt"
	}
	s.record(rt)
	o := req.StreamOptions
	st := &streamState{s: s, req: er, rt: rt, seed: seed, created: arrival.Unix(), fault: fault,
		w: w, rc: http.NewResponseController(w), includeUsage: o.IncludeUsage,
		// vLLM honours continuous usage with include_usage, SGLang on its own.
		continuous: o.ContinuousUsageStats &&
			(s.p.Flavour == FlavourVLLM && o.IncludeUsage || s.p.Flavour == FlavourSGLang),
		timings: req.TimingsPerToken && s.p.Flavour == FlavourLlamaCpp}
	s.e.submit(er)
	switch {
	case s.p.FinishAbandoned:
	case s.p.FinishAbandonedPrompt:
		defer s.e.abandon(er) // a no-op once finished
	default:
		defer s.e.abort(er) // a no-op once finished; frees the cache if the client left
	}
	switch {
	case native:
		st.native(r.Context(), req.Stream)
	case req.Stream:
		st.stream(r.Context())
	default:
		st.whole(r.Context())
	}
}

func requestID(n int64) string { return fmt.Sprintf("chatcmpl-%016x", splitmix(uint64(n))) }

func (s *Server) record(rt *RequestTrace) {
	if s.trace {
		s.tr.add(rt)
	}
}

// streamState writes one request's answer.
type streamState struct {
	s                        *Server
	req                      *request
	rt                       *RequestTrace
	seed                     uint64
	created                  int64
	fault                    Faults
	w                        http.ResponseWriter
	rc                       *http.ResponseController
	includeUsage, continuous bool
	timings                  bool // llama-server's timings_per_token

	sent       int // tokens written
	finishSent bool
	buf        []byte
}

// flush writes the chunks built so far.
func (st *streamState) flush() error {
	if _, err := st.w.Write(st.buf); err != nil {
		return err
	}
	st.buf = st.buf[:0]
	st.rc.Flush()
	return nil
}

// text is the output text of tokens [from, to).
func (st *streamState) text(from, to int) string {
	var b strings.Builder
	reasoning := st.s.p.ReasoningTokens
	for i := from; i < to; i++ {
		t := tokenText(st.seed, i, st.req.loopStart, st.s.phrase)
		if i == reasoning && i > 0 {
			t = t[1:] // content starts a new text
		}
		b.WriteString(t)
	}
	return b.String()
}

// errStreamEnded stops a stream the fault plan ended on purpose.
var errStreamEnded = errors.New("stream ended by an injected fault")

func (st *streamState) stream(ctx context.Context) {
	st.w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	st.w.WriteHeader(http.StatusOK)
	st.flush()
	keepAlive := time.NewTicker(time.Duration(st.s.p.KeepAliveSeconds * float64(time.Second)))
	defer keepAlive.Stop()
	mb := st.req.out
	for {
		select {
		case <-ctx.Done():
			return
		case <-keepAlive.C:
			if mb.read().produced == 0 {
				st.buf = append(st.buf, ": keep-alive\n\n"...)
				if st.flush() != nil {
					return
				}
			}
			continue
		case <-mb.signal:
		}
		snap := mb.read()
		if st.sent == 0 && snap.produced > 0 {
			st.buf = st.roleChunk(st.buf)
		}
		// The tokens produced since the last chunk, split where the
		// reasoning ends and where a fault is due.
		for st.sent < snap.produced {
			to := snap.produced
			for _, cut := range []int{st.s.p.ReasoningTokens, st.fault.DropAfterTokens,
				st.fault.StallAfterTokens, st.fault.MalformedAfterTokens, st.fault.ErrorEventAfterTokens} {
				if cut > st.sent && cut < to {
					to = cut
				}
			}
			field := "content"
			if st.sent < st.s.p.ReasoningTokens {
				field = "reasoning"
			}
			finish := ""
			if snap.done && to == snap.produced {
				finish, st.finishSent = snap.reason, true
			}
			st.buf = st.tokenChunk(st.buf, field, st.text(st.sent, to), finish, to)
			if st.flush() != nil {
				return
			}
			st.wrote(snap, to)
			if st.injectAt(ctx, to) != nil {
				return
			}
		}
		if snap.done {
			st.finish(snap)
			return
		}
	}
}

// injectAt carries out the faults due after token n.
func (st *streamState) injectAt(ctx context.Context, n int) error {
	f := st.fault
	switch n { // n > 0: a zero offset means no fault
	case f.DropAfterTokens:
		st.note("dropped connection")
		panic(http.ErrAbortHandler) // cut the connection without a clean end
	case f.ErrorEventAfterTokens:
		st.note("error event")
		st.buf = appendErrorEvent(st.buf, "engine core died unexpectedly (injected fault)", "InternalServerError", 500)
		st.buf = append(st.buf, "data: [DONE]\n\n"...)
		st.flush()
		return errStreamEnded
	case f.MalformedAfterTokens:
		st.note("malformed chunk")
		st.buf = append(st.buf, "data: {\"id\":\"chatcmpl-broken\",\"choices\":[{\"delta\":\n\n"...)
		return st.flush()
	case f.StallAfterTokens:
		st.note("stall")
		select {
		case <-time.After(time.Duration(f.StallSeconds * float64(time.Second))):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// wrote traces a chunk just written, which took the stream to n tokens.
func (st *streamState) wrote(snap snapshot, n int) {
	at := time.Now()
	st.s.tr.update(func() {
		if st.rt.FirstToken.IsZero() {
			st.rt.FirstToken = at
		}
		if st.s.trace {
			st.rt.Chunks = append(st.rt.Chunks, Chunk{At: at, Scheduled: snap.scheduled, Tokens: n - st.sent})
		}
		st.rt.OutputTokens = n
	})
	st.sent = n
}

func (st *streamState) note(fault string) {
	st.s.tr.update(func() { st.rt.Fault = fault })
}

// roleChunk is the first chunk, the assistant's role.
func (st *streamState) roleChunk(b []byte) []byte {
	if st.s.p.Flavour == FlavourLlamaCpp {
		return st.llamaChunk(b, `{"role":"assistant","content":null}`, "", 0, false)
	}
	return appendDeltaChunk(b, st.rt.ID, st.created, st.s.p.Model, deltaChunk{role: "assistant", usage: st.usageAt(0)})
}

// tokenChunk carries output tokens up to n (and the finish reason, if the
// dialect puts it there). llama-server sends its finish in a chunk of its own.
func (st *streamState) tokenChunk(b []byte, field, text, finish string, n int) []byte {
	if field == "reasoning" && (st.s.p.Flavour == FlavourSGLang || st.s.p.Flavour == FlavourLlamaCpp) {
		field = "reasoning_content"
	}
	if st.s.p.Flavour != FlavourLlamaCpp {
		return appendDeltaChunk(b, st.rt.ID, st.created, st.s.p.Model,
			deltaChunk{field: field, text: text, finish: finish, usage: st.usageAt(n)})
	}
	if text != "" {
		b = st.llamaChunk(b, fmt.Sprintf(`{"%s":%s}`, field, appendString(nil, text)), "", n, st.timings)
	}
	if finish != "" {
		b = st.llamaChunk(b, "{}", finish, n, false)
	}
	return b
}

// usageAt is the continuous usage after n output tokens, or nil when the
// request did not ask for it.
func (st *streamState) usageAt(n int) *usage {
	if !st.continuous {
		return nil
	}
	return &usage{prompt: st.rt.PromptTokens, completion: n}
}

// finish ends a completed stream: the usage chunk if asked for, then [DONE].
func (st *streamState) finish(snap snapshot) {
	n := snap.produced
	if !st.finishSent {
		st.buf = st.tokenChunk(st.buf, "content", "", snap.reason, n)
	}
	switch {
	case !st.includeUsage:
	case st.s.p.Flavour == FlavourLlamaCpp:
		st.buf = st.llamaChunk(st.buf, "", "", n, true)
	default:
		st.buf = appendUsageChunk(st.buf, st.rt.ID, st.created, st.s.p.Model,
			usage{prompt: st.rt.PromptTokens, completion: n, reasoning: min(n, st.s.p.ReasoningTokens)})
	}
	st.buf = append(st.buf, "data: [DONE]\n\n"...)
	st.flush()
	st.finished(snap)
}

func (st *streamState) finished(snap snapshot) {
	at := time.Now()
	st.s.e.mu.Lock()
	r := *st.req
	st.s.e.mu.Unlock()
	st.s.tr.update(func() {
		st.rt.Finished, st.rt.FinishReason, st.rt.OutputTokens = at, snap.reason, snap.produced
		st.rt.Waited, st.rt.Preemptions, st.rt.CachedTokens = r.waited, r.preemptions, r.cachedTokens
		st.rt.Admitted, st.rt.PrefillEnd, st.rt.ColdMs = r.admittedAt, r.prefillEnd, r.coldMs
	})
}

// promptMs is the engine's own time for the request's prompt, from its
// admission to its first token, as servers time their prompt processing;
// 0 before the prompt is done.
func (st *streamState) promptMs() float64 {
	st.s.e.mu.Lock()
	defer st.s.e.mu.Unlock()
	if st.req.prefillEnd.IsZero() {
		return 0
	}
	return float64(st.req.prefillEnd.Sub(st.req.admittedAt)) / float64(time.Millisecond)
}

// whole answers a request that did not ask to stream, once it is done.
func (st *streamState) whole(ctx context.Context) {
	mb := st.req.out
	var snap snapshot
	for !snap.done {
		select {
		case <-ctx.Done():
			return
		case <-mb.signal:
			snap = mb.read()
		}
	}
	st.finished(snap)
	reasoning := min(snap.produced, st.s.p.ReasoningTokens)
	msg := map[string]any{"role": "assistant", "content": st.text(reasoning, snap.produced), "tool_calls": []any{}}
	if reasoning > 0 {
		msg["reasoning"] = st.text(0, reasoning)
	}
	type choice struct {
		Index        int            `json:"index"`
		Message      map[string]any `json:"message"`
		Logprobs     any            `json:"logprobs"`
		FinishReason string         `json:"finish_reason"`
		StopReason   any            `json:"stop_reason"`
	}
	writeJSON(st.w, struct {
		ID      string         `json:"id"`
		Object  string         `json:"object"`
		Created int64          `json:"created"`
		Model   string         `json:"model"`
		Choices []choice       `json:"choices"`
		Usage   map[string]int `json:"usage"`
	}{st.rt.ID, "chat.completion", st.created, st.s.p.Model,
		[]choice{{Message: msg, FinishReason: snap.reason}},
		map[string]int{"prompt_tokens": st.rt.PromptTokens, "total_tokens": st.rt.PromptTokens + snap.produced, "completion_tokens": snap.produced}})
}

// TimingReport is how far the sim kept to its profile's schedule, as GET
// /sim/timing answers it: a client measuring the sim (matrixgen run) warns
// when the machine could not keep up, since the figures then run slow.
type TimingReport struct {
	Steps            int     `json:"steps"`
	LateSteps        int     `json:"late_steps"`
	ScheduledSeconds float64 `json:"scheduled_seconds"`
	LostSeconds      float64 `json:"lost_seconds"`
	KeepingUp        bool    `json:"keeping_up"`
}

func (s *Server) timingJSON(w http.ResponseWriter, _ *http.Request) {
	t := s.Timing()
	writeJSON(w, TimingReport{Steps: t.Steps, LateSteps: t.LateSteps, ScheduledSeconds: t.Scheduled.Seconds(),
		LostSeconds: t.Lost.Seconds(), KeepingUp: t.KeepingUp()})
}

func (s *Server) traceJSON(w http.ResponseWriter, _ *http.Request) {
	if !s.trace {
		apiError(w, http.StatusNotFound, "NotFoundError", "tracing is off")
		return
	}
	writeJSON(w, s.Trace())
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	d, registered := dialects[s.p.Flavour]
	if s.p.Flavour == FlavourOpenAI || s.p.Flavour == FlavourOllama || registered && d.metrics == nil {
		http.NotFound(w, r)
		return
	}
	c, _ := s.e.snapshot()
	c.generationTokens *= 1 + s.p.CounterSkew
	c.completedTokens *= 1 + s.p.CounterSkew
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if registered {
		d.metrics(s, w, c)
		return
	}
	labels := `{engine="0",model_name="` + s.p.Model + `"}`
	metric := func(name, kind, help string, v float64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s%s %v\n", name, help, name, kind, name, labels, v)
	}
	switch s.p.Flavour {
	case FlavourSGLang:
		labels = `{model_name="` + s.p.Model + `"}`
		metric("sglang:num_running_reqs", "gauge", "The number of running requests.", float64(c.running))
		metric("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", float64(c.waiting))
		metric("sglang:token_usage", "gauge", "The token usage.", c.kvUsed)
		metric("sglang:max_total_num_tokens", "gauge", "Maximum total number of tokens in the KV cache pool.", float64(s.p.blocks()*s.p.KV.BlockSize))
		metric("sglang:num_retracted_requests_total", "counter", "Number of retracted requests.", c.preemptions)
		metric("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", c.promptTokens)
		metric("sglang:generation_tokens_total", "counter", "Number of generation tokens processed.", c.generationTokens)
		writeHistogram(w, "sglang:per_stage_req_latency_seconds", "The latency of each stage of requests.",
			`model_name="`+s.p.Model+`",stage="prefill_forward"`, c.prefillSeconds)
		return
	case FlavourLlamaCpp:
		labels = ""
		metric("llamacpp:requests_processing", "gauge", "Number of requests processing.", float64(c.running))
		metric("llamacpp:requests_deferred", "gauge", "Number of requests deferred.", float64(c.waiting))
		metric("llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed.", c.promptTokens)
		metric("llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed.", c.completedTokens)
		return
	}
	metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", float64(c.running))
	metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", float64(c.waiting))
	metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", c.kvUsed)
	fmt.Fprintf(w, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n")
	fmt.Fprintf(w, "vllm:cache_config_info{block_size=\"%d\",enable_prefix_caching=\"True\",engine=\"0\",kv_cache_size_tokens=\"%d\",num_gpu_blocks=\"%d\"} 1.0\n",
		s.p.KV.BlockSize, s.p.blocks()*s.p.KV.BlockSize, s.p.blocks())
	metric("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", c.preemptions)
	metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", c.promptTokens)
	metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", c.generationTokens)
	metric("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", c.prefixQueries)
	metric("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", c.prefixHits)
	writeHistogram(w, "vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
		`engine="0",model_name="`+s.p.Model+`"`, c.prefillSeconds)
	if s.p.Speculative.DraftTokens > 0 {
		metric("vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.", c.specDrafts)
		metric("vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.", c.specDraftTokens)
		metric("vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.", c.specAccepted)
	}
}

// writeHistogram writes a histogram in Prometheus text: a bucket a bound,
// +Inf, its sum and its count, each with the labels given.
func writeHistogram(w io.Writer, name, help, labels string, h histogram) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	for i, b := range histogramBounds {
		fmt.Fprintf(w, "%s_bucket{%s,le=\"%v\"} %v\n", name, labels, b, h.buckets[i])
	}
	fmt.Fprintf(w, "%[1]s_bucket{%[2]s,le=\"+Inf\"} %[3]v\n%[1]s_sum{%[2]s} %[4]v\n%[1]s_count{%[2]s} %[3]v\n",
		name, labels, h.count, h.sum)
}

// power answers with one line per GPU in the format of nvidia-smi's
// telemetry query (index, power.draw, clocks.sm, clocks.mem,
// utilization.gpu, memory.used, temperature.gpu,
// clocks_throttle_reasons.active): the profile's power at the current load.
func (s *Server) power(w http.ResponseWriter, r *http.Request) {
	p := s.p.Power
	if p.GPUs == 0 {
		http.NotFound(w, r)
		return
	}
	c, _ := s.e.snapshot()
	watts := (p.IdleW + p.PerRequestW*float64(c.running)) / float64(p.GPUs)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	for i := range p.GPUs {
		fmt.Fprintf(w, "%d, %.2f, 2400, 12000, %d, 40000, 60, 0x0000000000000000\n", i, watts, min(100, 25*c.running))
	}
}
