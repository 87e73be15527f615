// Package testrun makes synthetic runs for tests and benchmarks: the shape
// of a full sweep, with figures that vary by seed so no two pages are alike.
package testrun

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/stats"
)

// Contexts and Concurrency are the sample run's sweep: 8 × 8 cells.
var (
	Contexts        = []int{8192, 16384, 32768, 65536, 131072, 262144, 524288, 1043456}
	Concurrency     = []int{1, 2, 4, 8, 16, 32, 64, 128}
	PrefillContexts = []int{8192, 16384, 32768, 65536, 131072, 262144, 524288, 1043456, 1048576}
)

// Full returns a run of 9 prefill rows and an 8 × 8 decode matrix, every
// status represented, intervals stored, deterministic for a given seed.
func Full(seed uint64) *matrixgen.Run {
	rng := rand.New(rand.NewPCG(seed, 7))
	r := &matrixgen.Run{
		Schema:        matrixgen.SchemaVersion,
		StartedAt:     time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(seed) * time.Hour),
		Tool:          matrixgen.Tool{Name: "matrixgen", Version: "test"},
		Hardware:      matrixgen.Hardware{Type: "Discrete GPU", GPU: fmt.Sprintf("GPU model %d", seed%7), VRAMGB: 96, OS: "linux"},
		Engine:        matrixgen.Engine{Name: "vllm", Version: "0.30.1", Quantization: "FP8"},
		Model:         matrixgen.Model{Name: fmt.Sprintf("model-%d", seed%13), ServedName: "m"},
		LaunchCommand: "vllm serve model --max-model-len 1048576 --api-key <redacted>",
		Sweep: matrixgen.Sweep{
			DecodeTest: matrixgen.DecodeFixedDuration, PrefillMode: matrixgen.PrefillDecodeWarmup,
			DurationSeconds: 30, MaxOutputTokens: 4096,
			Contexts: Contexts, Concurrency: Concurrency, PrefillContexts: PrefillContexts,
		},
	}
	for _, c := range PrefillContexts {
		rate := 40000 / (1 + float64(c)/200000) * (0.9 + 0.2*rng.Float64())
		r.Prefill = append(r.Prefill, matrixgen.Prefill{
			ContextTokens: c, Status: matrixgen.StatusValid,
			PromptTokS: new(rate), TTFTMs: new(float64(c) / rate * 1000), Completed: new(1),
		})
	}
	for i, c := range Contexts {
		for j, n := range Concurrency {
			r.Decode = append(r.Decode, cell(rng, c, n, i+j))
		}
	}
	stats.SetInterval(r) // as the runner saves it
	return r
}

func cell(rng *rand.Rand, context, n, size int) matrixgen.Decode {
	d := matrixgen.Decode{ContextTokens: context, Concurrency: n, Status: matrixgen.StatusValid}
	switch {
	case size > 11:
		d.Status, d.Reason = matrixgen.StatusOverCapacity, "exceeds the KV cache"
		return d
	case rng.IntN(8) == 0:
		d.Status = matrixgen.StatusLooped
		d.Loop = &matrixgen.LoopEvidence{Unit: "the same words ", StartOffset: 1200, Excerpt: "the same words the same words"}
	case rng.IntN(16) == 0:
		d.Status = matrixgen.StatusQueued
	}
	perStream := 450 / (1 + float64(n)/12) * (0.9 + 0.2*rng.Float64())
	total := perStream * float64(n)
	window := 30.0
	d.TotalTokS = new(total)
	d.PerRequestTokS = new(perStream)
	d.TTFTMs = &matrixgen.Percentiles{P50: 250 + 40*float64(n), P90: new(300 + 60*float64(n)), P99: new(400 + 80*float64(n))}
	d.TBTMs = &matrixgen.Percentiles{P50: 1000 / perStream}
	d.AvgActive = new(float64(n) * 0.99)
	d.Completed = new(int(total * window / 4096))
	d.OutputTokens = new(int(total * window))
	d.WindowSeconds = new(window)
	d.TokenSource = matrixgen.TokensContinuousUsage
	for range 30 {
		d.PerSecondTokens = append(d.PerSecondTokens, int(total*(0.95+0.1*rng.Float64())))
	}
	return d
}
