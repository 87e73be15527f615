package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/term"
	openai "github.com/sashabaranov/go-openai"
)

// chatRequest is one request of a sweep.
type chatRequest struct {
	prompt    string
	maxTokens int
	salt      string // cache_salt, "" for none
	seed      uint64
}

// withOutputLimit caps the answer at n tokens in the field the served
// name allows: max_tokens, or max_completion_tokens for the names go-openai
// treats as reasoning models (o1…, o3…, o4…, gpt-5…), whose requests it
// refuses with max_tokens before they leave. A local model may well be
// served under such a name; vLLM and SGLang read either field.
func withOutputLimit(req openai.ChatCompletionRequest, n int) openai.ChatCompletionRequest {
	req.MaxTokens = n
	if errors.Is(openai.NewReasoningValidator().Validate(req), openai.ErrReasoningModelMaxTokensDeprecated) {
		req.MaxTokens, req.MaxCompletionTokens = 0, n
	}
	return req
}

// observation is what the client saw of one stream: when it sent, when
// each token-carrying chunk arrived and how many tokens it carried, how it
// ended. Arrival times are taken as each payload is read, before decoding.
type observation struct {
	sent         time.Time
	firstText    time.Time
	end          time.Time
	events       []tokenEvent
	finishReason string
	promptTokens int
	finalTokens  int // from the final usage chunk, 0 if none
	source       matrixgen.TokenSource
	tail         []byte  // the last output text, for loop detection
	outputBytes  int     // all output text, in bytes
	serverTokS   float64 // the server's own decode rate for the request (llama.cpp timings, vLLM metrics)
	// serverPromptMs and serverPromptTokens are the server's own timing of
	// the prompt's processing, as the stream told it (llama.cpp's
	// timings.prompt_ms and prompt_n, Ollama's prompt_eval_duration and
	// prompt_eval_count), and serverClock names it; 0 when it gives none.
	serverPromptMs     float64
	serverPromptTokens int
	serverClock        string
	// clientTokens is the client's own count of the stream's tokens before
	// any reconciling with a final count; serverTokens the server's count of
	// the whole request, when serverCounted (Ollama's eval_count).
	clientTokens  int
	serverTokens  int
	serverCounted bool
	// budget is the most tokens the request can yield: its max_tokens and
	// the slack servers take (matrixgen.TokenBudget). A stream past it is
	// an error, whatever the server says it is doing.
	budget int
	err    error
}

type tokenEvent struct {
	at     time.Time
	tokens int
}

// coalesceWithin is how close a stream's token events may arrive and stay
// apart: closer tokens join the event before, at its time, so a server
// flooding tiny chunks cannot make a stream keep more than an event a
// millisecond. A large model's decode step is several milliseconds, so
// nothing merges; a tiny model on a fast GPU may have a token counted up
// to a millisecond early, moving its figures by less than a millisecond's
// tokens at a window's edges.
const coalesceWithin = time.Millisecond

// newObservation starts what the client sees of req's stream.
func newObservation(req chatRequest, source matrixgen.TokenSource) *observation {
	return &observation{source: source, budget: matrixgen.TokenBudget(1, req.maxTokens)}
}

// addTokens records n tokens arriving at at, the one place a stream's
// token events are kept: past the request's budget they are an error, and
// events closer than coalesceWithin are one.
func (o *observation) addTokens(at time.Time, n int) error {
	if n > o.budget-o.clientTokens {
		return fmt.Errorf("the server sent more than %d tokens for a request of max_tokens %d (%d, then %d more)",
			o.budget, o.budget-matrixgen.RequestTokenSlack, o.clientTokens, n)
	}
	o.clientTokens += n
	if k := len(o.events); k > 0 && at.Sub(o.events[k-1].at) < coalesceWithin {
		o.events[k-1].tokens += n
		return nil
	}
	o.events = append(o.events, tokenEvent{at, n})
	return nil
}

// checkFinal refuses a server's final count of the request's tokens that
// no request of its budget could have.
func (o *observation) checkFinal(n int) error {
	if n > o.budget {
		return fmt.Errorf("impossible usage from the server: %d completion tokens for a request of max_tokens %d", n, o.budget-matrixgen.RequestTokenSlack)
	}
	return nil
}

// errCut is the cause a stream is cancelled with when its cell's window
// closes: what arrived counts, and the stream did not fail.
var errCut = errors.New("cut at the end of the window")

// complete reports whether the stream ended as the server meant it to.
func (o *observation) complete() bool { return o.err == nil && o.finishReason != "" }

// tokens is the stream's output token count as the client counted it.
func (o *observation) tokens() int {
	n := 0
	for _, e := range o.events {
		n += e.tokens
	}
	return n
}

// tailBytes is how much output text a stream keeps for loop detection.
const tailBytes = 16 << 10

// wireChunk is the part of a streamed chunk the runner reads: go-openai's
// choice (delta.content, delta.reasoning_content as SGLang and llama.cpp
// send it, finish_reason) and usage (cumulative on every chunk from vLLM
// and SGLang when asked), with what go-openai has no place for beside
// them: vLLM's delta.reasoning and the engines' own fields, each read by
// its engine's file. Declared in one type, a chunk is decoded once.
type wireChunk struct {
	Choices []wireChoice        `json:"choices"`
	Usage   *openai.Usage       `json:"usage"`
	Timings *llamaTimings       `json:"timings"`
	Metrics *vllmRequestMetrics `json:"metrics"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// chunkOptions decode a chunk as leniently as encoding/json did, with JSON
// v2's speed: bytes of a character split across tokens and a repeated
// name are a server's habits, not a broken chunk.
var chunkOptions = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true), jsonv2.MatchCaseInsensitiveNames(true))

// wireChoice is go-openai's streamed choice with vLLM's delta.reasoning:
// its Delta, less deep, is the one decoded into.
type wireChoice struct {
	openai.ChatCompletionStreamChoice
	Delta struct {
		openai.ChatCompletionStreamChoiceDelta
		Reasoning string `json:"reasoning"`
	} `json:"delta"`
}

// hooks let a cell follow its streams as they run.
type hooks struct {
	onFirst  func()      // the first text arrived
	onTokens func(n int) // n more tokens arrived
}

// stream sends req and reads its answer to the end, or until ctx ends (a
// cut at the window's close: the observation keeps what arrived).
func (c *client) stream(ctx context.Context, req chatRequest, stall time.Duration, h hooks) *observation {
	if native, ok := c.eng.(nativeStreamer); ok {
		return native.stream(ctx, c, req, stall, h)
	}
	obs := newObservation(req, matrixgen.TokensChunks)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, err := json.Marshal(c.chatBody(req))
	resp := obs.post(ctx, c, "/v1/chat/completions", "text/event-stream", body, err)
	if resp == nil {
		return obs
	}
	defer resp.Body.Close()
	s := newSSEReader(resp.Body)

	wd := startWatchdog(ctx, cancel, stall)
	cum := 0
	for {
		raw, err := s.next()
		at := time.Now()
		wd.progress()
		if err != nil {
			obs.end = at
			defer obs.reconcile()
			switch {
			case errors.Is(err, io.EOF) && obs.finishReason != "":
			case wd.stalled():
				obs.err = fmt.Errorf("stalled: no data for %v", stall)
			case ctx.Err() != nil:
				obs.err = context.Cause(ctx)
			case errors.Is(err, io.EOF):
				obs.err = errors.New("stream ended without a finish_reason")
			default:
				obs.err = err
			}
			return obs
		}
		if raw == nil {
			continue
		}
		var ch wireChunk
		if err := jsonv2.Unmarshal(raw, &ch, chunkOptions); err != nil {
			obs.err, obs.end = fmt.Errorf("malformed chunk: %v: %.120q", err, raw), at
			return obs
		}
		if ch.Error != nil {
			obs.err, obs.end = fmt.Errorf("server error mid-stream: %s", term.Line(ch.Error.Message)), at
			return obs
		}
		if err := obs.read(&ch, at, &cum, h); err != nil {
			obs.err, obs.end = err, at
			return obs
		}
	}
}

// post sends a stream's request, body unless marshalling it failed
// (err), and returns the server's answer; nil when it failed, the error
// in o. TTFT runs from the moment the request was on the wire: building a
// megabyte of JSON and dialling are the client's time, not the server's.
func (o *observation) post(ctx context.Context, c *client, path, accept string, body []byte, err error) *http.Response {
	if err == nil {
		o.sent = time.Now()
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { o.sent = time.Now() }}
		var resp *http.Response
		if resp, err = c.send(httptrace.WithClientTrace(ctx, trace), "POST", path, body, accept); err == nil {
			return resp
		}
	}
	o.err, o.end = err, time.Now()
	return nil
}

// watchdog cancels a stream that stalls: no data for the stall timeout.
type watchdog struct {
	beat chan struct{}
	hit  atomic.Bool
}

func startWatchdog(ctx context.Context, cancel context.CancelFunc, stall time.Duration) *watchdog {
	wd := &watchdog{beat: make(chan struct{}, 1)}
	go func() {
		timer := time.NewTimer(stall)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-wd.beat:
				timer.Reset(stall)
			case <-timer.C:
				wd.hit.Store(true)
				cancel()
				return
			}
		}
	}()
	return wd
}

// progress tells the watchdog data arrived.
func (wd *watchdog) progress() {
	select {
	case wd.beat <- struct{}{}:
	default:
	}
}

// stalled reports whether the watchdog cancelled the stream.
func (wd *watchdog) stalled() bool { return wd.hit.Load() }

// heldTokens is how many tokens a chunk may count beyond its bytes of text:
// a server holds back the pieces of a character split across tokens, and
// special tokens print nothing.
const heldTokens = 16

// read folds one chunk into the observation. Counts no server could mean
// are refused: a negative count, or a jump of more tokens than the chunk
// carries bytes of text, give or take heldTokens.
func (o *observation) read(ch *wireChunk, at time.Time, cum *int, h hooks) error {
	if ch.Usage != nil {
		if ch.Usage.PromptTokens < 0 || ch.Usage.CompletionTokens < 0 {
			return fmt.Errorf("impossible usage from the server: %d prompt and %d completion tokens", ch.Usage.PromptTokens, ch.Usage.CompletionTokens)
		}
		o.promptTokens = ch.Usage.PromptTokens
	}
	if ch.Timings != nil {
		if err := ch.Timings.read(o); err != nil {
			return err
		}
	}
	if ch.Metrics != nil {
		ch.Metrics.read(o)
	}
	if len(ch.Choices) == 0 {
		if ch.Usage != nil {
			o.finalTokens = ch.Usage.CompletionTokens
			if limit := o.outputBytes + o.clientTokens + heldTokens; o.finalTokens > limit {
				return fmt.Errorf("impossible usage from the server: %d completion tokens for %d bytes of text", o.finalTokens, o.outputBytes)
			}
			if err := o.checkFinal(o.finalTokens); err != nil {
				return err
			}
		}
		return nil
	}
	choice := ch.Choices[0]
	text := choice.Delta.Reasoning + choice.Delta.ReasoningContent + choice.Delta.Content
	tokens := 0
	switch {
	case ch.Usage != nil:
		o.source = matrixgen.TokensContinuousUsage
		before := *cum
		tokens = advance(cum, ch.Usage.CompletionTokens)
		if tokens > len(text)+heldTokens {
			return fmt.Errorf("impossible usage from the server: completion tokens jumped from %d to %d in a chunk of %d bytes of text", before, ch.Usage.CompletionTokens, len(text))
		}
	case ch.Timings != nil && ch.Timings.PredictedN > 0:
		o.source = matrixgen.TokensTimingsPerToken
		before := *cum
		tokens = advance(cum, ch.Timings.PredictedN)
		if tokens > len(text)+heldTokens {
			return fmt.Errorf("impossible timings from the server: predicted_n jumped from %d to %d in a chunk of %d bytes of text", before, ch.Timings.PredictedN, len(text))
		}
	case text != "":
		tokens = 1
	}
	if err := o.arrived(at, text, tokens, h); err != nil {
		return err
	}
	if choice.FinishReason != "" {
		o.finishReason = string(choice.FinishReason)
	}
	return nil
}

// arrived records a chunk's text and the tokens it carried, arriving at at,
// and tells the cell's hooks.
func (o *observation) arrived(at time.Time, text string, tokens int, h hooks) error {
	if text != "" && o.firstText.IsZero() {
		o.firstText = at
		if h.onFirst != nil {
			h.onFirst()
		}
	}
	if tokens > 0 {
		if err := o.addTokens(at, tokens); err != nil {
			return err
		}
		if h.onTokens != nil {
			h.onTokens(tokens)
		}
	}
	if text != "" {
		o.outputBytes += len(text)
		o.tail = append(o.tail, text...)
		if len(o.tail) > 2*tailBytes {
			o.tail = append(o.tail[:0], o.tail[len(o.tail)-tailBytes:]...)
		}
	}
	return nil
}

// reconcile spreads a final usage count over a stream's chunks when the
// server gave no per-chunk counts: the total is then the server's, not a
// chunk count, and each chunk carries its share.
func (o *observation) reconcile() {
	if o.source != matrixgen.TokensChunks || o.finalTokens <= 0 || len(o.events) == 0 {
		return
	}
	n := len(o.events)
	for i := range o.events {
		o.events[i].tokens = (i+1)*o.finalTokens/n - i*o.finalTokens/n
	}
	o.events = slices.DeleteFunc(o.events, func(e tokenEvent) bool { return e.tokens <= 0 })
	o.source = matrixgen.TokensFinalUsage
}

// advance moves a cumulative count forward and returns the step; a count
// going backwards is ignored, not subtracted.
func advance(cum *int, now int) int {
	if now <= *cum {
		return 0
	}
	step := now - *cum
	*cum = now
	return step
}
