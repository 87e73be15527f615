package importer

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/redact"
)

// LLMInferenceBench converts llm-inference-bench's benchmark_results.json:
// metadata, prefill by context, and one result per cell.
func LLMInferenceBench(name string, data []byte) (Result, error) {
	doc, err := decodeObject(name, data)
	if err != nil {
		return Result{}, err
	}
	if err := doc.tooLarge(name, "results", "metadata", "prefill"); err != nil {
		return Result{}, err
	}
	results, ok := doc["results"].([]any)
	if !ok {
		return Result{}, fmt.Errorf("%s: no \"results\" array: not an llm-inference-bench benchmark_results.json", name)
	}
	meta := doc.obj("metadata")
	r := &matrixgen.Run{
		Schema:    matrixgen.SchemaVersion,
		StartedAt: parseTime(meta["timestamp"]),
		Tool:      matrixgen.Tool{Name: "llm-inference-bench", Version: meta.str("version")},
		Engine:    matrixgen.Engine{Name: meta.str("engine"), Version: meta.str("engine_version")},
		Model:     matrixgen.Model{Name: meta.str("model")},
		Sweep: matrixgen.Sweep{
			DecodeTest:  matrixgen.DecodeFixedDuration,
			PrefillMode: matrixgen.PrefillDecodeWarmup,
		},
	}
	res := Result{Run: r, Notes: []string{fmt.Sprintf("Imported from llm-inference-bench %s output `%s`; latencies converted from seconds to milliseconds.", r.Tool.Version, filepath.Base(name))}}
	if r.Engine.Name == "" {
		r.Engine.Name = "unknown"
		res.Notes = append(res.Notes, "The file does not name the engine.")
	}
	if r.Model.Name == "" {
		return Result{}, fmt.Errorf("%s: metadata.model is missing; a run needs its model", name)
	}
	if d, ok := meta.num("duration_per_test"); ok && d > 0 {
		r.Sweep.DurationSeconds = d
	}
	r.Sweep.MaxOutputTokens, _ = meta.intField("max_tokens")
	figures := map[jsontext.Pointer]object{"/prefill": doc.obj("prefill")}
	for i, raw := range results {
		if cell, ok := raw.(map[string]any); ok {
			figures[jsontext.Pointer("/results").AppendToken(strconv.Itoa(i))] = cell
		}
	}
	if err := negativeFigures(name, data, figures); err != nil {
		return Result{}, err
	}
	if odd := importPrefill(r, doc.obj("prefill")); odd > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s of prefill whose key is not a context length (a whole number above 0) or whose value is not an object %s left out.",
			plural.Count(odd, "entry", "entries"), plural.Noun(odd, "was", "were")))
	}
	skipped := 0
	for i, raw := range results {
		cell, ok := raw.(map[string]any)
		if !ok {
			return Result{}, fmt.Errorf("%s: results[%d]: want an object", name, i)
		}
		d, ok := llmBenchCell(object(cell))
		if !ok {
			skipped++
			continue
		}
		r.Decode = append(r.Decode, d)
	}
	if skipped > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s without a context length or concurrency (context 0 is the tool's short-prompt test) %s left out.",
			plural.Count(skipped, "result", "results"), plural.Noun(skipped, "was", "were")))
	}
	r.Sweep.Contexts, r.Sweep.Concurrency = r.Contexts(), r.ConcurrencyLevels()
	for _, p := range r.Prefill {
		r.Sweep.PrefillContexts = append(r.Sweep.PrefillContexts, p.ContextTokens)
	}
	return finish(name, res)
}

// importPrefill reads the prefill object: context (as a string key) →
// tok_per_sec, ttft_seconds (or prefill_seconds), prompt_tokens. It
// counts the entries it cannot read, for a note.
func importPrefill(r *matrixgen.Run, prefill object) (odd int) {
	byNumber := func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return cmp.Compare(x, y) }
	for _, k := range slices.SortedFunc(maps.Keys(prefill), byNumber) {
		n, err := strconv.Atoi(k)
		p := prefill.obj(k)
		if err != nil || n <= 0 || p == nil {
			odd++
			continue
		}
		row := matrixgen.Prefill{ContextTokens: n, Status: matrixgen.StatusValid}
		row.PromptTokS = positive(p.num("tok_per_sec"))
		ttft, ok := p.num("ttft_seconds")
		if !ok {
			ttft, ok = p.num("prefill_seconds")
		}
		if ok {
			row.TTFTMs = new(ttft * 1000)
		}
		row.PromptTokens, _ = p.intField("prompt_tokens")
		if row.PromptTokS == nil {
			row.Status, row.Reason = matrixgen.StatusError, "no tok_per_sec in the source"
		} else {
			row.Completed = new(1)
		}
		r.Prefill = append(r.Prefill, row)
	}
	return odd
}

// llmBenchCell maps one result, its latencies in seconds, and the flags
// that say what went wrong.
func llmBenchCell(c object) (matrixgen.Decode, bool) {
	ctx, ok1 := c.intField("context_tokens")
	conc, ok2 := c.intField("concurrency")
	if !ok1 || !ok2 || ctx == 0 || conc == 0 {
		return matrixgen.Decode{}, false
	}
	d := matrixgen.Decode{ContextTokens: ctx, Concurrency: conc, Status: matrixgen.StatusValid}
	d.TotalTokS = positive(c.num("aggregate_tps"))
	d.PerRequestTokS = positive(c.num("per_request_avg_tps"))
	if p50, ok := c.num("ttft_p50"); ok {
		d.TTFTMs = &matrixgen.Percentiles{P50: p50 * 1000}
		if p99, ok := c.num("ttft_p99"); ok {
			d.TTFTMs.P99 = new(p99 * 1000)
		}
	}
	if itl, ok := c.num("inter_token_latency_p50"); ok {
		d.TBTMs = &matrixgen.Percentiles{P50: itl * 1000}
	}
	d.AvgActive = positive(c.num("avg_running_reqs"))
	if d.AvgActive != nil && *d.AvgActive > float64(conc)*1.05 {
		d.AvgActive = nil // the server's count includes others' requests; not this cell's
	}
	d.Completed = cmp.Or(positive(c.intField("completed_request_count")), positive(c.intField("num_completed")))
	d.OutputTokens = positive(c.intField("client_output_tokens"))
	d.WindowSeconds = positive(c.num("measurement_seconds"))
	switch c.str("aggregate_source") {
	case "openai_continuous_usage":
		d.TokenSource = matrixgen.TokensContinuousUsage
	case "":
	default:
		d.TokenSource = matrixgen.TokensChunks
	}
	switch {
	case c.str("failure_reason") != "":
		d.Status, d.Reason = matrixgen.StatusError, c.str("failure_reason")
	case c.boolField("loop_detected"):
		d.Status, d.Reason = matrixgen.StatusLooped, "the source tool detected a loop"
	case c.boolField("capacity_limited") || c.boolField("warmup_timed_out"):
		d.Status, d.Reason = matrixgen.StatusQueued, "the source tool flagged the cell capacity limited"
	case d.TotalTokS == nil:
		d.Status, d.Reason = matrixgen.StatusError, "no aggregate_tps in the source"
	}
	if n, ok := c.intField("num_errors"); ok && n > 0 && d.Status == matrixgen.StatusValid {
		d.Status, d.Reason = matrixgen.StatusError, plural.Count(n, "request", "requests")+" failed"
	}
	return d, true
}

// finish hides the secrets another tool's file may hold (a launch command,
// a reason echoing a key) in the run and its notes, as the runner does, and
// checks the run as a run file would be checked.
func finish(name string, res Result) (Result, error) {
	res.Run.MapText(redact.Text)
	for i := range res.Notes {
		res.Notes[i] = redact.Text(res.Notes[i])
	}
	if problems := res.Run.Validate(); len(problems) > 0 {
		return res, fmt.Errorf("%s: the import is not a valid run: %s: %s", name, problems[0].Field, problems[0].Msg)
	}
	return res, nil
}
