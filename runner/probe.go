package runner

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/prom"
	"github.com/matrixgen/matrixgen/internal/redact"
)

// probe asks the server what it is and what it offers, before any
// measurement, and records what it found in the run.
func (c *client) probe(ctx context.Context, metricsURL string) (*matrixgen.Probe, error) {
	p := &matrixgen.Probe{}
	var models modelList
	if err := c.getJSON(ctx, "/v1/models", &models); err != nil {
		if wantsKey(err) {
			return nil, fmt.Errorf("probe: %w", err) // a server, asking for a key: Run says which
		}
		return nil, fmt.Errorf("probe: %w (is an OpenAI-compatible server at %s?)", err, redact.Text(c.base))
	}
	ids := make([]string, 0, min(len(models.Data), maxModelsListed))
	for _, m := range models.Data[:min(len(models.Data), maxModelsListed)] {
		ids = append(ids, strconv.Quote(capText(m.ID, maxNameText)))
	}
	if more := len(models.Data) - len(ids); more > 0 {
		ids = append(ids, fmt.Sprintf("and %d more", more))
	}
	switch {
	case c.model == "" && len(models.Data) == 1:
		c.model = models.Data[0].ID
	case c.model == "" && len(models.Data) == 0:
		return nil, errors.New("probe: the server lists no models at /v1/models")
	case c.model == "":
		return nil, fmt.Errorf("probe: the server serves %s: %s; name the one to measure (-model or [server] model)",
			plural.Count(len(models.Data), "model", "models"), strings.Join(ids, ", "))
	}
	for _, m := range models.Data {
		if m.ID == c.model {
			p.Model, p.ModelRoot, p.MaxModelLen = m.ID, m.Root, m.MaxModelLen
		}
	}
	if p.Model == "" {
		return nil, fmt.Errorf("probe: the server does not serve model %q; it serves %s (name one with -model or [server] model, or leave both out when it serves one)",
			c.model, cmp.Or(strings.Join(ids, ", "), "none"))
	}
	c.eng = recogniseEngine(ctx, c, p)
	c.eng.prepare(c)
	if samples, err := c.metrics(ctx, metricsURL); err == nil && len(samples) > 0 {
		p.Metrics = true
		c.eng.kvFromMetrics(p, samples)
	}
	// A deadline for the whole request too: a server that keeps sending
	// keep-alive comments and no token would pass the stall check for ever.
	helloCtx, cancel := context.WithTimeout(ctx, probeStreamTimeout)
	defer cancel()
	obs := c.stream(helloCtx, chatRequest{prompt: "Say hello.", maxTokens: 4, seed: 1}, time.Minute, hooks{})
	if obs.err != nil {
		return nil, fmt.Errorf("probe: a 4-token request failed: %w", obs.err)
	}
	p.ContinuousUsage = obs.source == matrixgen.TokensContinuousUsage
	p.TimingsPerToken = obs.source == matrixgen.TokensTimingsPerToken
	p.FinalUsage = obs.finalTokens > 0
	return p, nil
}

// tokenizerFor picks the most exact way this server offers to count a
// chat prompt's tokens, and records it in the probe.
func (c *client) tokenizerFor(ctx context.Context, p *matrixgen.Probe) tokenizer {
	if t, how, ok := c.eng.counter(ctx, c, p); ok {
		p.Tokenizer = how
		return t
	}
	p.Tokenizer = "calibration on usage.prompt_tokens (one request per count)"
	return usageTokenizer{c}
}

// metrics reads the server's Prometheus text.
func (c *client) metrics(ctx context.Context, url string) ([]prom.Sample, error) {
	text, err := c.fetch(ctx, "GET", cmp.Or(url, "/metrics"), nil, maxMetrics)
	if err != nil {
		return nil, err
	}
	return prom.Parse(bytes.NewReader(text)), nil
}

// ServedModel is the model a server serves when it serves exactly one, for
// naming a run before it starts; "" otherwise.
func ServedModel(ctx context.Context, baseURL, apiKey string) string {
	var models modelList
	if newClient(baseURL, apiKey, 1, nil).getJSON(ctx, "/v1/models", &models) != nil || len(models.Data) != 1 {
		return ""
	}
	return cmp.Or(lastSegment(models.Data[0].Root), models.Data[0].ID)
}

// healthy reports whether the server answers: /health with 200, or a model
// list for servers that have no /health.
func (c *client) healthy(ctx context.Context) bool {
	if resp, err := c.send(ctx, "GET", "/health", nil, ""); err == nil {
		resp.Body.Close()
		return true
	}
	var models struct{ Data []any }
	return c.getJSON(ctx, "/v1/models", &models) == nil && len(models.Data) > 0
}

// modelList is a server's answer to /v1/models.
type modelList struct {
	Data []struct {
		ID          string `json:"id"`
		Root        string `json:"root"`
		MaxModelLen int    `json:"max_model_len"`
	} `json:"data"`
}

// maxModelsListed bounds the served models an error lists.
const maxModelsListed = 20

// probeStreamTimeout bounds the probe's 4-token request, which may wait for
// the server to load the model.
const probeStreamTimeout = 5 * time.Minute
