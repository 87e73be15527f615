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
	cumulative   int // the highest cumulative count a chunk gave
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
	return c.follow(ctx, req, stall, h, c.chatBody(req), streamDialect{path: "/v1/chat/completions", accept: "text/event-stream",
		payloads: func(body io.Reader) func() ([]byte, error) { return newSSEReader(body).next },
		fold:     (*observation).readChunk, unfinished: "stream ended without a finish_reason", cleanEndWins: true})
}

// streamDialect is how an API streams an answer: the route a request goes
// to, how its body splits into payloads, and how each is read.
type streamDialect struct {
	path, accept string
	payloads     func(body io.Reader) func() ([]byte, error)
	fold         func(o *observation, raw []byte, at time.Time, h hooks) error
	// unfinished says a stream ended before the server's last word;
	// cleanEndWins, that one ending after it is clean, stalled or cut.
	unfinished   string
	cleanEndWins bool
}

// follow sends body by d and reads the answer to its end, or until ctx
// ends; a stream that sends nothing for stall is cancelled. TTFT runs from
// the moment the request was on the wire.
func (c *client) follow(ctx context.Context, req chatRequest, stall time.Duration, h hooks, body any,
	d streamDialect) *observation {
	obs := newObservation(req, matrixgen.TokensChunks)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	data, err := json.Marshal(body)
	var resp *http.Response
	if err == nil {
		obs.sent = time.Now()
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { obs.sent = time.Now() }}
		resp, err = c.send(httptrace.WithClientTrace(ctx, trace), "POST", d.path, data, d.accept)
	}
	if err != nil {
		obs.err, obs.end = err, time.Now()
		return obs
	}
	defer resp.Body.Close()
	next := d.payloads(resp.Body)
	var stalled atomic.Bool
	watchdog := time.AfterFunc(stall, func() { stalled.Store(true); cancel() })
	defer watchdog.Stop()
	for {
		raw, err := next()
		at := time.Now()
		watchdog.Reset(stall)
		if err != nil {
			obs.end = at
			eof, finished := errors.Is(err, io.EOF), obs.finishReason != ""
			switch {
			case eof && finished && d.cleanEndWins:
			case stalled.Load():
				obs.err = fmt.Errorf("stalled: no data for %v", stall)
			case ctx.Err() != nil:
				obs.err = context.Cause(ctx)
			case eof && finished:
			case eof:
				obs.err = errors.New(d.unfinished)
			default:
				obs.err = err
			}
			obs.reconcile()
			return obs
		}
		if err := d.fold(obs, raw, at, h); err != nil {
			obs.err, obs.end = err, at
			return obs
		}
	}
}

// heldTokens is how many tokens a chunk may count beyond its bytes of text
// (pieces of a character held back, special tokens that print nothing).
const heldTokens = 16

// readChunk decodes one payload of the event stream and folds it in.
func (o *observation) readChunk(raw []byte, at time.Time, h hooks) error {
	var ch wireChunk
	if err := jsonv2.Unmarshal(raw, &ch, chunkOptions); err != nil {
		return fmt.Errorf("malformed chunk: %v: %.120q", err, raw)
	}
	if ch.Error != nil {
		return fmt.Errorf("server error mid-stream: %s", term.Line(ch.Error.Message))
	}
	return o.read(&ch, at, h)
}

// read folds one chunk into the observation, refusing counts no server
// could mean (negative, or beyond the chunk's bytes of text).
func (o *observation) read(ch *wireChunk, at time.Time, h hooks) error {
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
		if tokens = max(count-o.cumulative, 0); tokens > len(text)+heldTokens {
			return fmt.Errorf("impossible %s jumped from %d to %d in a chunk of %d bytes of text",
				what, o.cumulative, count, len(text))
		}
		o.cumulative = max(o.cumulative, count)
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
