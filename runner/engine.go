package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/prom"
)

// engine is what the runner knows of one kind of inference server. Each
// lives in a file of its own, engine_<name>.go, which registers it in its
// init; engine.go holds the generic OpenAI-compatible one.
type engine interface {
	// name is how a run records it ("vllm").
	name() string
	// recognise asks endpoints only this engine offers; when the server is
	// this engine it fills the probe and answers true.
	recognise(ctx context.Context, c *client, p *matrixgen.Probe) bool
	// prepare sets what every request to it must carry.
	prepare(c *client)
	// counter is the engine's own way to count a chat prompt's tokens
	// exactly, and how the run names it; false when it has none.
	counter(ctx context.Context, c *client, p *matrixgen.Probe) (tokenizer, string, bool)
	// metrics are the Prometheus metrics it keeps.
	metrics() engineMetrics
	// kvFromMetrics reads the KV capacity from its metrics, where they say.
	kvFromMetrics(p *matrixgen.Probe, s []prom.Sample)
	// ownIdle is its own sign of being idle besides its metrics
	// (llama.cpp's /slots); nil when it has none.
	ownIdle() *ownIdle
	// dropsCutAtNextToken: a request whose client left is dropped at its
	// next token, not run on to its end (Ollama).
	dropsCutAtNextToken() bool
	// tooLong reports whether an error answer (its HTTP status and message)
	// refuses a prompt longer than the request may be.
	tooLong(status int, message string) bool
}

// ownIdle is an engine's own sign that the server is idle: how the log
// names it, and asking it once.
type ownIdle struct {
	name string
	idle func(ctx context.Context, c *client) (bool, error)
}

// engineDefaults are what most engines lack, for each to embed and
// override.
type engineDefaults struct{}

func (engineDefaults) prepare(*client) {}
func (engineDefaults) counter(context.Context, *client, *matrixgen.Probe) (tokenizer, string, bool) {
	return nil, "", false
}
func (engineDefaults) kvFromMetrics(*matrixgen.Probe, []prom.Sample) {}
func (engineDefaults) ownIdle() *ownIdle                             { return nil }
func (engineDefaults) dropsCutAtNextToken() bool                     { return false }

// nativeStreamer is an engine measured through its own API rather than the
// OpenAI-compatible one.
type nativeStreamer interface {
	stream(ctx context.Context, c *client, req chatRequest, stall time.Duration, h hooks) *observation
}

// engineMetrics names an engine's Prometheus metrics.
type engineMetrics struct {
	running, waiting, kvUsage, preemptions []string
	// draft and accepted count speculative tokens proposed and accepted.
	draft, accepted string
	// tokens is its counter of generated tokens.
	tokens serverCounter
	// promptTime is its histogram of each request's prompt processing, the
	// server's own prefill clock (none where the stream times the prompt).
	promptTime prom.Histogram
}

// engines are tried in order; the first to recognise the server is it.
// Each engine's file registers it with its place in that order.
var engines []engine

// enginePlaces are the engines' places in the order, beside engines.
var enginePlaces []int

// Places in the order of recognition: engines known by an endpoint of their
// own, then vLLM (/version), then Ollama (which may answer /version too).
const (
	placeOwnEndpoint = 10
	placeVersion     = 20
	placeLast        = 30
)

// registerEngine adds e to the engines tried, at place (lower first; equal
// places keep the order they registered in).
func registerEngine(place int, e engine) {
	i, _ := slices.BinarySearch(enginePlaces, place+1) // after every equal place
	engines = slices.Insert(engines, i, e)
	enginePlaces = slices.Insert(enginePlaces, i, place)
}

// recogniseEngine finds the server's engine; a server none recognises is
// a generic OpenAI-compatible one.
func recogniseEngine(ctx context.Context, c *client, p *matrixgen.Probe) engine {
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
// knows: it takes whatever any known engine would, and vLLM's counter and
// KV capacity, the most often copied.
type genericEngine struct{ vllmEngine }

func (genericEngine) name() string                                              { return "openai-compatible" }
func (genericEngine) recognise(context.Context, *client, *matrixgen.Probe) bool { return true }
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
func (genericEngine) tooLong(status int, message string) bool {
	return slices.ContainsFunc(engines, func(e engine) bool { return e.tooLong(status, message) }) ||
		status == 400 && strings.Contains(strings.ToLower(message), "too long")
}

// contextTooLong reports whether err is the server refusing a prompt that
// does not fit the model's length, in its engine's words.
func (c *client) contextTooLong(err error) bool {
	var se *serverError
	return errors.As(err, &se) && c.eng.tooLong(se.Status, se.Message)
}

// containsAny reports whether s, lowered, holds any of the phrases.
func containsAny(s string, phrases ...string) bool {
	s = strings.ToLower(s)
	return slices.ContainsFunc(phrases, func(p string) bool { return strings.Contains(s, p) })
}
