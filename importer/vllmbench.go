package importer

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
)

// VLLMBenchServe converts `vllm bench serve --save-result` files, each one
// point of a matrix: its context is its mean input length, its concurrency
// max_concurrency; throughput, TTFT, TPOT, counts and duration carry over
// (a fixed number of requests, not a window). engine names the server
// where the files' backend ("vllm", "sglang") does not.
func VLLMBenchServe(names []string, datas [][]byte, engine string) (Result, error) {
	r := &matrixgen.Run{
		Schema: matrixgen.SchemaVersion,
		Tool:   matrixgen.Tool{Name: "vllm bench serve"},
		Sweep:  matrixgen.Sweep{DecodeTest: matrixgen.DecodeFixedCount},
	}
	res := Result{Run: r, Notes: []string{fmt.Sprintf("Imported from %s. Context is each file's mean input length; time between tokens is vLLM's TPOT (per token, first token excluded); per request tok/s is 1,000 / median TPOT.", plural.Count(len(names), "`vllm bench serve` result file", "`vllm bench serve` result files"))}}
	for i, name := range names {
		doc, err := decodeObject(name, datas[i])
		if err != nil {
			return Result{}, err
		}
		d, err := vllmPoint(name, doc)
		if err != nil {
			return Result{}, err
		}
		model := doc.str("model_id")
		switch {
		case r.Model.Name == "":
			r.Model.Name = model
		case model != r.Model.Name:
			return Result{}, fmt.Errorf("%s: model %q, but %s measured %q: one run is one model", name, model, names[0], r.Model.Name)
		}
		if backend := doc.str("backend"); engine == "" && (backend == "vllm" || backend == "sglang") {
			engine = backend
		}
		if t := parseTime(doc["date"]); !t.IsZero() && (r.StartedAt.IsZero() || t.Before(r.StartedAt)) {
			r.StartedAt = t
		}
		if slices.ContainsFunc(r.Decode, func(x matrixgen.Decode) bool {
			return x.ContextTokens == d.ContextTokens && x.Concurrency == d.Concurrency
		}) {
			return Result{}, fmt.Errorf("%s: a second file for %s × %d", name, matrixgen.ContextLabel(d.ContextTokens), d.Concurrency)
		}
		r.Decode = append(r.Decode, d)
	}
	if engine == "" {
		return Result{}, fmt.Errorf("the files do not say which engine served them (their backend is not vllm or sglang): name it with -engine")
	}
	r.Engine.Name = engine
	if r.Model.Name == "" {
		return Result{}, fmt.Errorf("%s: no model_id", names[0])
	}
	r.Model.Name = r.Model.Name[strings.LastIndexByte(r.Model.Name, '/')+1:]
	r.Sweep.Contexts, r.Sweep.Concurrency = r.Contexts(), r.ConcurrencyLevels()
	return finish(names[0], res)
}

func vllmPoint(name string, doc object) (matrixgen.Decode, error) {
	conc, ok := doc.intField("max_concurrency")
	if !ok || conc == 0 {
		return matrixgen.Decode{}, fmt.Errorf("%s: no max_concurrency: run vllm bench serve with --max-concurrency for a matrix point", name)
	}
	completed, ok1 := doc.intField("completed")
	input, ok2 := doc.num("total_input_tokens")
	if !ok1 || !ok2 || completed == 0 {
		return matrixgen.Decode{}, fmt.Errorf("%s: no completed requests or total_input_tokens: not a vllm bench serve result", name)
	}
	d := matrixgen.Decode{
		ContextTokens: int(math.Round(input / float64(completed))),
		Concurrency:   conc,
		Status:        matrixgen.StatusValid,
		Completed:     &completed,
	}
	d.TotalTokS = positive(doc.num("output_throughput"))
	if p50, ok := doc.num("median_ttft_ms"); ok {
		d.TTFTMs = &matrixgen.Percentiles{P50: p50, P99: positive(doc.num("p99_ttft_ms"))}
	}
	if tpot, ok := doc.num("median_tpot_ms"); ok && tpot > 0 {
		d.TBTMs = &matrixgen.Percentiles{P50: tpot, P99: positive(doc.num("p99_tpot_ms"))}
		d.PerRequestTokS = new(1000 / tpot)
	}
	d.OutputTokens = positive(doc.intField("total_output_tokens"))
	d.WindowSeconds = positive(doc.num("duration"))
	if d.TotalTokS == nil {
		d.Status, d.Reason = matrixgen.StatusError, "no output_throughput in the source"
	}
	if failed, ok := doc.intField("failed"); ok && failed > 0 {
		d.Status, d.Reason = matrixgen.StatusError, fmt.Sprintf("%d of %s failed", failed, plural.Count(failed+completed, "request", "requests"))
	}
	return d, nil
}
