package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/prom"
	"github.com/matrixgen/matrixgen/sim"
)

// TestEachEngine puts every engine through the same cases, each against the
// sim speaking its dialect: the probe recognises it (and no other engine
// claims it), a prompt past its limit is refused in words it knows as too
// long (or, Ollama, cut silently), the metrics it names are in the server's
// /metrics, and its idle signal and token counter are there.
func TestEachEngine(t *testing.T) {
	for _, tt := range []struct {
		flavour, engine string
		refuses         bool // a prompt past the limit is a 400, not cut
	}{
		{sim.FlavourVLLM, "vllm", true},
		{sim.FlavourSGLang, "sglang", true},
		{sim.FlavourLlamaCpp, "llama.cpp", true},
		{sim.FlavourOllama, "ollama", false},
		{sim.FlavourOpenAI, "openai-compatible", true},
		{sim.FlavourTGI, "tgi", true},
	} {
		t.Run(tt.flavour, func(t *testing.T) {
			p := testProfile()
			p.Flavour, p.MaxModelLen = tt.flavour, 4096
			p.KV.CapacityTokens, p.KV.MaxRunning = 1<<20, 4
			p.Prefill.RequestOverheadMs = 1
			_, url := startSim(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := newClient(url, "", 2, nil)
			probe, err := c.probe(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if probe.Engine != tt.engine || c.eng.name() != tt.engine {
				t.Fatalf("recognised %q (%q), want %q", probe.Engine, c.eng.name(), tt.engine)
			}
			for _, other := range engines {
				if other.name() != tt.engine && other.recognise(ctx, c, &matrixgen.Probe{}) {
					t.Errorf("%s also claims to be %s", tt.engine, other.name())
				}
			}

			long := strings.Repeat("word ", 6000)
			obs := c.stream(ctx, chatRequest{prompt: long, maxTokens: 4}, time.Minute, hooks{})
			if got := c.contextTooLong(obs.err); got != tt.refuses {
				t.Errorf("a prompt past the limit: too long %v (err %v), want %v", got, obs.err, tt.refuses)
			}

			names := c.eng.metrics()
			samples, err := c.metrics(ctx, "")
			if probe.Metrics != (err == nil && len(samples) > 0) {
				t.Errorf("probe says metrics %v; /metrics: %d samples, %v", probe.Metrics, len(samples), err)
			}
			if probe.Metrics {
				if tt.engine != "openai-compatible" && (metric(samples, names.running...) == nil || metric(samples, names.waiting...) == nil) {
					t.Errorf("the running and waiting metrics %v, %v are not in /metrics", names.running, names.waiting)
				}
				if m := names.tokens.metric; m != "" {
					if _, ok := prom.Sum(samples, m); !ok {
						t.Errorf("the token counter %s is not in /metrics", m)
					}
				}
			}
			if own := c.eng.ownIdle(); own != nil {
				if idle, err := own.idle(ctx, c); err != nil || !idle {
					t.Errorf("%s: idle %v, %v; want an idle server", own.name, idle, err)
				}
			}
		})
	}
}

// TestTooLongInEachEnginesWords: the refusals real servers send, each
// known to its engine and to the generic one.
func TestTooLongInEachEnginesWords(t *testing.T) {
	for _, tt := range []struct {
		e   engine
		msg string
	}{
		{vllmEngine{}, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8996 in the messages, 4 in the completion)."},
		{sglangEngine{}, "The input (9000 tokens) is longer than the model's context length (8192 tokens)."},
		{llamaCppEngine{}, "request (20030 tokens) exceeds the available context size (16384 tokens), try increasing it"},
		{tgiEngine{}, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 5000 `inputs` tokens and 4 `max_new_tokens`"},
		{tgiEngine{}, "Input validation error: `inputs` must have less than 4095 tokens. Given: 5000"},
	} {
		status := 400
		if tt.e.name() == "tgi" {
			status = 422 // its validation errors
		}
		if !tt.e.tooLong(status, tt.msg) || !(genericEngine{}).tooLong(status, tt.msg) {
			t.Errorf("%s does not know %q", tt.e.name(), tt.msg)
		}
	}
	if (genericEngine{}).tooLong(400, "model not found") || (ollamaEngine{}).tooLong(400, "too long") ||
		(vllmEngine{}).tooLong(500, "maximum context length") {
		t.Error("too long where nothing was")
	}
}
