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
// name allows: max_completion_tokens for the names go-openai treats as
// reasoning models (o1…, gpt-5…), which it refuses with max_tokens.
func withOutputLimit(req openai.ChatCompletionRequest, n int) openai.ChatCompletionRequest {
	req.MaxTokens = n
	if errors.Is(openai.NewReasoningValidator().Validate(req), openai.ErrReasoningModelMaxTokensDeprecated) {
		req.MaxTokens, req.MaxCompletionTokens = 0, n
	}
	return req
}

// observation is what the client saw of one stream, each arrival timed as
// its payload is read, before decoding.
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
	// the prompt, as the stream told it, and serverClock names it.
	serverPromptMs     float64
	serverPromptTokens int
	serverClock        string
	// clientTokens is the client's own count, before any reconciling;
	// serverTokens the server's, when serverCounted (Ollama's eval_count).
	clientTokens  int
	serverTokens  int
	serverCounted bool
	// budget is the most tokens the request can yield
	// (matrixgen.TokenBudget): a stream past it is an error.
	budget int
	err    error
}

type tokenEvent struct {
	at     time.Time
	tokens int
}

// coalesceWithin is how close a stream's token events may arrive and stay
// apart: closer tokens join the event before, so a server flooding tiny
// chunks cannot make a stream keep more than an event a millisecond.
const coalesceWithin = time.Millisecond

// newObservation starts what the client sees of req's stream.
func newObservation(req chatRequest, source matrixgen.TokenSource) *observation {
	return &observation{source: source, budget: matrixgen.TokenBudget(1, req.maxTokens)}
}

// addTokens records n tokens arriving at at, the one place a stream's
// token events are kept: past the request's budget they are an error.
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
// choice and usage, beside what go-openai has no place for (vLLM's
// delta.reasoning, the engines' own fields, each read by its engine's
// file). Declared in one type, a chunk is decoded once.
type wireChunk struct {
	Choices []wireChoice        `json:"choices"`
	Usage   *openai.Usage       `json:"usage"`
	Timings *llamaTimings       `json:"timings"`
	Metrics *vllmRequestMetrics `json:"metrics"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// chunkOptions decode a chunk as leniently as encoding/json did: split
// characters and repeated names are a server's habits, not a broken chunk.
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

	wd := startWatchdog(cancel, stall)
	defer wd.timer.Stop()
	cum := 0
	for {
		raw, err := s.next()
		at := time.Now()
		wd.progress()
		if err != nil {
			obs.end = at
			if !errors.Is(err, io.EOF) || obs.finishReason == "" { // else a clean end, whatever else happened
				obs.err = wd.ended(ctx, err, false, "stream ended without a finish_reason")
			}
			obs.reconcile()
			return obs
		}
		if raw == nil {
			continue
		}
		var ch wireChunk
		if err := jsonv2.Unmarshal(raw, &ch, chunkOptions); err != nil {
			return obs.failed(fmt.Errorf("malformed chunk: %v: %.120q", err, raw), at)
		}
		if ch.Error != nil {
			return obs.failed(fmt.Errorf("server error mid-stream: %s", term.Line(ch.Error.Message)), at)
		}
		if err := obs.read(&ch, at, &cum, h); err != nil {
			return obs.failed(err, at)
		}
	}
}

// failed ends the stream at at with err.
func (o *observation) failed(err error, at time.Time) *observation {
	o.err, o.end = err, at
	return o
}

// post sends a stream's request, body unless marshalling it failed
// (err), and returns the server's answer; nil when it failed, the error in
// o. TTFT runs from the moment the request was on the wire.
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
	timer *time.Timer
	stall time.Duration
	hit   atomic.Bool
}

// startWatchdog starts a stream's watchdog; the stream stops it when it ends.
func startWatchdog(cancel context.CancelFunc, stall time.Duration) *watchdog {
	wd := &watchdog{stall: stall}
	wd.timer = time.AfterFunc(stall, func() { wd.hit.Store(true); cancel() })
	return wd
}

// progress tells the watchdog data arrived.
func (wd *watchdog) progress() { wd.timer.Reset(wd.stall) }

// ended is why a stream whose reader failed with err ended: stalled, cut,
// at its end (nil when finished, else unfinished), or broken.
func (wd *watchdog) ended(ctx context.Context, err error, finished bool, unfinished string) error {
	switch {
	case wd.hit.Load():
		return fmt.Errorf("stalled: no data for %v", wd.stall)
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, io.EOF) && finished:
		return nil
	case errors.Is(err, io.EOF):
		return errors.New(unfinished)
	}
	return err
}

// heldTokens is how many tokens a chunk may count beyond its bytes of text
// (pieces of a character held back, special tokens that print nothing).
const heldTokens = 16

// read folds one chunk into the observation, refusing counts no server
// could mean (negative, or beyond the chunk's bytes of text).
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
	tokens, count, what := 0, 0, ""
	switch {
	case ch.Usage != nil:
		o.source, count = matrixgen.TokensContinuousUsage, ch.Usage.CompletionTokens
		what = "usage from the server: completion tokens"
	case ch.Timings != nil && ch.Timings.PredictedN > 0:
		o.source, count = matrixgen.TokensTimingsPerToken, ch.Timings.PredictedN
		what = "timings from the server: predicted_n"
	case text != "":
		tokens = 1
	}
	// A cumulative count going backwards is ignored, not subtracted.
	if what != "" {
		if tokens = max(count-*cum, 0); tokens > len(text)+heldTokens {
			return fmt.Errorf("impossible %s jumped from %d to %d in a chunk of %d bytes of text",
				what, *cum, count, len(text))
		}
		*cum = max(*cum, count)
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
// server gave no per-chunk counts.
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
