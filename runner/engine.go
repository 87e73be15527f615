package runner

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
)

// engine is what the runner knows of one kind of inference server. Each
// lives in a file of its own (engine_vllm.go, engine_sglang.go,
// engine_llamacpp.go, engine_ollama.go; engine.go holds the generic
// OpenAI-compatible one), and the sim speaks the same list of dialects.
// Adding an engine is a file and a line in engines.
type engine interface {
	// name is how a run records it ("vllm").
	name() string
	// recognise asks endpoints only this engine offers; when the server is
	// this engine it fills the probe (version, KV capacity, per-request
	// limit) and answers true.
	recognise(ctx context.Context, c *Client, p *matrixgen.Probe) bool
	// prepare sets what every request to it must carry.
	prepare(c *Client)
	// counter is the engine's own way to count a chat prompt's tokens
	// exactly when /tokenize does not take the chat form, and how the run
	// names it; false when it has none (usage calibration then).
	counter(ctx context.Context, c *Client) (tokenizer, string, bool)
	// metrics are the Prometheus metrics it keeps.
	metrics() engineMetrics
	// kvFromMetrics reads the KV capacity from its metrics, where they say.
	kvFromMetrics(p *matrixgen.Probe, s []sample)
	// hasSlots: it lists its slots at /slots, an idle signal without metrics.
	hasSlots() bool
	// tooLong reports whether a 400's message refuses a prompt longer than
	// the request may be.
	tooLong(message string) bool
}

// nativeStreamer is an engine measured through its own API rather than the
// OpenAI-compatible one.
type nativeStreamer interface {
	stream(ctx context.Context, c *Client, req chatRequest, stall time.Duration, h hooks) *observation
}

// engineMetrics names an engine's Prometheus metrics.
type engineMetrics struct {
	running, waiting, kvUsage, preemptions []string
	// draft and accepted count speculative tokens proposed and accepted.
	draft, accepted string
	// tokens is its counter of generated tokens.
	tokens serverCounter
	// promptTime is its histogram of each request's prompt processing, the
	// server's own prefill clock, read around a single prefill request.
	// Engines that time the prompt in the stream itself (llama.cpp's
	// timings, Ollama's prompt_eval_duration) keep none here.
	promptTime promHistogram
}

// promHistogram names a Prometheus histogram and, where one metric holds
// several (SGLang's stages), the label that picks the series.
type promHistogram struct{ name, labelKey, labelValue string }

// String is how a run names the clock: the metric and its series.
func (h promHistogram) String() string {
	if h.labelKey == "" {
		return h.name
	}
	return h.name + "{" + h.labelKey + "=\"" + h.labelValue + "\"}"
}

// engines are tried in order; the first to recognise the server is it.
// SGLang and llama.cpp answer on endpoints vLLM lacks, and Ollama answers
// /version too on some versions, so the order matters.
var engines = []engine{sglangEngine{}, llamaCppEngine{}, vllmEngine{}, ollamaEngine{}}

// recogniseEngine finds the server's engine; a server none recognises is
// a generic OpenAI-compatible one.
func recogniseEngine(ctx context.Context, c *Client, p *matrixgen.Probe) engine {
	for _, e := range engines {
		if e.recognise(ctx, c, p) {
			p.Engine = e.name()
			return e
		}
	}
	p.Engine = genericEngine{}.name()
	return genericEngine{}
}

// genericEngine is an OpenAI-compatible server of no engine the runner
// knows. It reads whichever known metrics it finds and takes any known way
// of saying a prompt is too long.
type genericEngine struct{}

func (genericEngine) name() string { return "openai-compatible" }
func (genericEngine) recognise(context.Context, *Client, *matrixgen.Probe) bool {
	return true
}
func (genericEngine) prepare(*Client) {}
func (genericEngine) counter(context.Context, *Client) (tokenizer, string, bool) {
	return nil, "", false
}
func (genericEngine) metrics() engineMetrics {
	var m engineMetrics
	for _, e := range engines {
		k := e.metrics()
		m.running = append(m.running, k.running...)
		m.waiting = append(m.waiting, k.waiting...)
		m.kvUsage = append(m.kvUsage, k.kvUsage...)
		m.preemptions = append(m.preemptions, k.preemptions...)
		if m.draft == "" {
			m.draft, m.accepted = k.draft, k.accepted
		}
	}
	return m // and no token counter: which engine's would it be?
}
func (genericEngine) kvFromMetrics(p *matrixgen.Probe, s []sample) { vllmEngine{}.kvFromMetrics(p, s) }
func (genericEngine) hasSlots() bool                               { return false }
func (genericEngine) tooLong(message string) bool {
	for _, e := range engines {
		if e.tooLong(message) {
			return true
		}
	}
	return strings.Contains(strings.ToLower(message), "too long")
}

// contextTooLong reports whether err is the server refusing a prompt that
// does not fit the model's length, in its engine's words.
func (c *Client) contextTooLong(err error) bool {
	var se *ServerError
	if !errors.As(err, &se) || se.Status != 400 {
		return false
	}
	return c.eng.tooLong(se.Message)
}

// containsAny reports whether s, lowered, holds any of the phrases.
func containsAny(s string, phrases ...string) bool {
	s = strings.ToLower(s)
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
