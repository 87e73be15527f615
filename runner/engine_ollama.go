package runner

import (
	"context"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/prom"
)

// ollamaEngine is Ollama, measured through its native API (ollama.go): its
// final line of each stream is the server's own count and rates.
type ollamaEngine struct{}

func init() { registerEngine(placeLast, ollamaEngine{}) }

func (ollamaEngine) name() string { return "ollama" }

func (ollamaEngine) recognise(ctx context.Context, c *client, p *matrixgen.Probe) bool {
	var v struct {
		Version string `json:"version"`
	}
	if c.getJSON(ctx, "/api/version", &v) != nil || v.Version == "" {
		return false
	}
	p.EngineVersion = v.Version
	c.ollamaLimits(ctx, p)
	return true
}

func (ollamaEngine) prepare(*client) {}

func (ollamaEngine) counter(context.Context, *client) (tokenizer, string, bool) {
	return nil, "", false
}

// metrics: Ollama keeps none; its count comes with each request.
func (ollamaEngine) metrics() engineMetrics                        { return engineMetrics{} }
func (ollamaEngine) kvFromMetrics(*matrixgen.Probe, []prom.Sample) {}
func (ollamaEngine) hasSlots() bool                                { return false }

// tooLong: Ollama cuts a prompt past its context silently; it refuses none.
func (ollamaEngine) tooLong(int, string) bool { return false }

func (ollamaEngine) stream(ctx context.Context, c *client, req chatRequest, stall time.Duration, h hooks) *observation {
	return c.ollamaStream(ctx, req, stall, h)
}
