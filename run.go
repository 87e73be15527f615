// Package matrixgen holds the domain of a speed test matrix: the run file
// model that `matrixgen run` writes and `matrixgen build` publishes, and its
// validation (Run.Validate). Reading and writing the files is package
// runfile's. It is the middle of server → runner → runs/*.json → render →
// public/, and imports nothing heavier than the standard library.
package matrixgen

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// SchemaVersion is the run file format this build writes and reads. A change
// that old readers would misread bumps it.
const SchemaVersion = 1

// Run is one benchmark run: the environment it measured, the sweep (its own
// configuration, so it can be reproduced from its file), every measurement.
type Run struct {
	// Schema is the format version, SchemaVersion for files this build writes.
	Schema int `json:"schema"`
	// StartedAt and FinishedAt bound the sweep; either may be unknown for runs
	// transcribed from other tools.
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Incomplete is set while a sweep is in progress or after it stopped early.
	Incomplete bool `json:"incomplete,omitempty"`
	// Simulated marks runs measured against `matrixgen sim`, not a real server.
	Simulated bool `json:"simulated,omitempty"`
	// Tool is the program that produced the measurements.
	Tool     Tool     `json:"tool"`
	Hardware Hardware `json:"hardware"`
	Engine   Engine   `json:"engine"`
	Model    Model    `json:"model"`
	// LaunchCommand is the server's command line with secrets redacted.
	LaunchCommand string `json:"launch_command,omitempty"`
	// Probe is what `matrixgen run` learnt of the server before measuring.
	Probe *Probe `json:"probe,omitempty"`
	Sweep Sweep  `json:"sweep"`
	// Request is what every chat request carried beside the prompt and
	// matrixgen's own fields: runs that differ in it (thinking on or off)
	// are not the same measurement. Absent where nothing was set.
	Request *Request `json:"request,omitempty"`
	// Prefill holds one measurement per prefill context.
	Prefill []Prefill `json:"prefill,omitempty"`
	// Decode holds one cell per (context, concurrency) pair of the matrix.
	Decode []Decode `json:"decode,omitempty"`
	// ResumedDespite lists the differences of server or settings a resume
	// accepted by force: its cells may not all be comparable.
	ResumedDespite []string `json:"resumed_despite,omitempty"`
}

// Tool names the benchmark program and its version.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Hardware describes the machine the server ran on.
type Hardware struct {
	// Type is the kind of accelerator, e.g. "Discrete GPU" or "CPU".
	Type     string `json:"type,omitempty"`
	GPU      string `json:"gpu,omitempty"`
	GPUCount int    `json:"gpu_count,omitempty"`
	// VRAMGB is memory per GPU in gigabytes as the vendor states it ("96 GB").
	VRAMGB float64 `json:"vram_gb,omitempty"`
	CPU    string  `json:"cpu,omitempty"`
	OS     string  `json:"os,omitempty"`
	Driver string  `json:"driver,omitempty"`
	// Kernel is the OS kernel's release; CUDA the version the driver supports.
	Kernel string `json:"kernel,omitempty"`
	CUDA   string `json:"cuda,omitempty"`
	// PowerLimitW and DefaultPowerLimitW are each GPU's board power limit, as set and as shipped.
	PowerLimitW        float64 `json:"power_limit_w,omitempty"`
	DefaultPowerLimitW float64 `json:"default_power_limit_w,omitempty"`
	// PCIe is the GPUs' link, e.g. "Gen 5 x16".
	PCIe string `json:"pcie,omitempty"`
	// IdlePowerW is all GPUs' board power, measured before the sweep with the server idle.
	IdlePowerW *float64 `json:"idle_power_w,omitempty"`
	// Given names, by their JSON names ("gpu", "vram_gb"), the fields above
	// a person typed ([describe]) rather than the runner detected: a page
	// shows them as given, never as measured.
	Given []string `json:"given,omitempty"`
}

// GivenHardwareFields are the hardware fields a person may give by hand,
// by their JSON names, in the order a page shows them.
var GivenHardwareFields = []string{"type", "gpu", "gpu_count", "vram_gb", "cpu", "os"}

// IsGiven reports whether the hardware field of that JSON name was given by hand.
func (h Hardware) IsGiven(field string) bool { return slices.Contains(h.Given, field) }

// Engine describes the inference server software.
type Engine struct {
	Name         string `json:"name"`
	Version      string `json:"version,omitempty"`
	Quantization string `json:"quantization,omitempty"`
	Backend      string `json:"backend,omitempty"`
	Repository   string `json:"repository,omitempty"`
	Build        string `json:"build,omitempty"`
	Commit       string `json:"commit,omitempty"`
}

// Model describes what the server served.
type Model struct {
	// Name is the model as people know it, shown in titles.
	Name string `json:"name"`
	// ServedName is the id the server answered to in /v1/models.
	ServedName string `json:"served_name,omitempty"`
	Revision   string `json:"revision,omitempty"`
	// MaxModelLen is the server's maximum sequence length in tokens.
	MaxModelLen int `json:"max_model_len,omitempty"`
}

// Probe records what the server said about itself and which signals it
// offers, so a reader knows where each figure came from.
type Probe struct {
	Engine        string `json:"engine,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	Model         string `json:"model,omitempty"`
	ModelRoot     string `json:"model_root,omitempty"`
	MaxModelLen   int    `json:"max_model_len,omitempty"`
	// Tokenize, Metrics: the server offers /tokenize (chat form) and /metrics.
	Tokenize bool `json:"tokenize"`
	Metrics  bool `json:"metrics"`
	// ContinuousUsage: chunks carry cumulative usage when asked;
	// TimingsPerToken: chunks carry llama.cpp's cumulative predicted_n;
	// FinalUsage: a final usage chunk comes when asked.
	ContinuousUsage bool `json:"continuous_usage"`
	TimingsPerToken bool `json:"timings_per_token,omitempty"`
	FinalUsage      bool `json:"final_usage"`
	// Tokenizer says how prompts were made exactly N tokens long.
	Tokenizer string `json:"tokenizer,omitempty"`
	// KVCacheTokens is the KV capacity in tokens, and KVSource where it came
	// from (a metric, the config, or a caveat).
	KVCacheTokens int    `json:"kv_cache_tokens,omitempty"`
	KVSource      string `json:"kv_source,omitempty"`
	// BaseURL is the server's address without user information, query or
	// fragment: a resume against another address is another server.
	BaseURL string `json:"base_url,omitempty"`
}

// Sweep is the configuration that produced the measurements.
type Sweep struct {
	// DecodeTest is how long each decode cell ran: "fixed_duration" (a time
	// window) or "fixed_count" (a number of requests).
	DecodeTest string `json:"decode_test,omitempty"`
	// PrefillMode is how prefill was measured: "warmed_repeats" (an untimed
	// warm-up, then PrefillRepeats fresh prompts, the last warming the
	// context for its decode cells), "decode_warmup" (one request that also
	// warms the context) or "separate".
	PrefillMode string `json:"prefill_mode,omitempty"`
	// PrefillRepeats is how many fresh prompts each prefill row measured.
	PrefillRepeats int `json:"prefill_repeats,omitempty"`
	// Repeats is how many times each decode cell was measured (`run
	// -repeat`), a pass of the whole matrix each, so that drift spreads
	// over every cell. Absent or 1: once.
	Repeats int `json:"repeats,omitempty"`
	// DurationSeconds is the planned window of each decode cell.
	DurationSeconds float64 `json:"duration_seconds,omitempty"`
	// MaxOutputTokens caps each request's output.
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// Contexts and Concurrency are the matrix's rows and columns, ascending.
	Contexts    []int `json:"contexts,omitempty"`
	Concurrency []int `json:"concurrency,omitempty"`
	// PrefillContexts are the contexts prefill was measured at.
	PrefillContexts []int `json:"prefill_contexts,omitempty"`
	// IgnoreEOS records whether requests asked the server to ignore end of
	// sequence, so every stream runs to its maximum output.
	IgnoreEOS *bool `json:"ignore_eos,omitempty"`
	// CacheMode is what the decode streams of a cell were sent: "shared"
	// (all on the context the prefill request warmed) or "distinct" (each
	// its own context); absent where the tool did not say.
	CacheMode string `json:"cache_mode,omitempty"`
}

// Request is the chat request's own settings (`[server]` temperature,
// chat_template_kwargs and extra), their strings redacted; the maps hold
// any JSON values, read strictly as the rest of the file.
type Request struct {
	// Temperature is the sampling temperature sent, 0 included; absent:
	// the model's own default.
	Temperature *float64 `json:"temperature,omitempty"`
	// ChatTemplateKwargs were sent as chat_template_kwargs ({"enable_thinking": false}).
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
	// Extra are other fields merged into every request body ({"repetition_penalty": 1.1}).
	Extra map[string]any `json:"extra,omitempty"`
}

// IsZero reports whether the request carried nothing beside the prompt
// and matrixgen's own fields, so a run leaves Request out.
func (q *Request) IsZero() bool {
	return q == nil || q.Temperature == nil && len(q.ChatTemplateKwargs) == 0 && len(q.Extra) == 0
}

// Text is the request as `compare` and the compare page name it: `temperature
// 0.6 · chat_template_kwargs {"enable_thinking": false}`; "" when nothing was set.
func (q *Request) Text() string {
	var parts []string
	for _, p := range q.Parts() {
		parts = append(parts, p[0]+" "+p[1])
	}
	return strings.Join(parts, " · ")
}

// Parts are the request's settings that were set, each its name and its
// value as Text writes it: a run page shows them a row each.
func (q *Request) Parts() [][2]string {
	if q.IsZero() {
		return nil
	}
	var parts [][2]string
	if q.Temperature != nil {
		parts = append(parts, [2]string{"temperature", strconv.FormatFloat(*q.Temperature, 'g', -1, 64)})
	}
	if len(q.ChatTemplateKwargs) > 0 {
		parts = append(parts, [2]string{"chat_template_kwargs", compactJSON(q.ChatTemplateKwargs)})
	}
	if len(q.Extra) > 0 {
		parts = append(parts, [2]string{"extra", compactJSON(q.Extra)})
	}
	return parts
}

// compactJSON is v as one line of JSON, names in order, a space after each
// colon and comma (where a narrow column may wrap it); a value JSON cannot
// hold says so instead.
func compactJSON(v any) string {
	b, err := json.Marshal(v, json.Deterministic(true), jsontext.SpaceAfterColon(true), jsontext.SpaceAfterComma(true))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}

// CacheMode values.
const (
	CacheShared   = "shared"
	CacheDistinct = "distinct"
)

// DecodeTest and PrefillMode values.
const (
	DecodeFixedDuration = "fixed_duration"
	DecodeFixedCount    = "fixed_count"
	PrefillDecodeWarmup = "decode_warmup"
	PrefillSeparate     = "separate"
	PrefillWarmed       = "warmed_repeats"
)

// WarmsDecodeCache reports whether the prefill requests left each context
// in the prompt cache for its decode cells, so their TTFT mostly excludes
// prefill.
func (s Sweep) WarmsDecodeCache() bool {
	return s.PrefillMode == PrefillDecodeWarmup || s.PrefillMode == PrefillWarmed
}

// Prefill is one prefill measurement at a context: requests of exactly
// ContextTokens prompt tokens, each on a prompt no cache holds, asking for
// one output token, after an untimed warm-up (ColdTTFTMs); the row's
// figures are their medians.
type Prefill struct {
	ContextTokens int    `json:"context_tokens"`
	Status        Status `json:"status"`
	// Reason explains a status other than valid, in the server's words where
	// it gave any.
	Reason string `json:"reason,omitempty"`
	// PromptTokens is the prompt length the server reported, which may differ
	// from ContextTokens by the chat template's tokens.
	PromptTokens int `json:"prompt_tokens,omitempty"`
	// PromptTokS is prompt tokens / TTFT, the median over Requests.
	PromptTokS *float64 `json:"prompt_tok_s,omitempty"`
	// TTFTMs is the time to first token, the median over Requests.
	TTFTMs    *float64 `json:"ttft_ms,omitempty"`
	Completed *int     `json:"completed,omitempty"`
	// ServerPromptTokS is the prefill speed as the server timed its own
	// prompt processing, median over Requests: a cross-check of PromptTokS
	// without what the server spent outside the prompt (queueing, templating).
	ServerPromptTokS *float64 `json:"server_prompt_tok_s,omitempty"`
	// ServerPromptMs is the server's own time for that prompt processing,
	// median over Requests; ServerClock names where it was read.
	ServerPromptMs *float64 `json:"server_prompt_ms,omitempty"`
	ServerClock    string   `json:"server_clock,omitempty"`
	// ColdTTFTMs is the TTFT of the warm-up, which pays the server's
	// one-time costs (kernel compilation, autotuning): what a first user
	// waits, never the prefill rate.
	ColdTTFTMs *float64 `json:"cold_ttft_ms,omitempty"`
	// Requests are the measured requests behind the figures, in the order
	// they were sent; absent for runs that measured one.
	Requests []PrefillRequest `json:"requests,omitempty"`
	// Note says what a reader should know of a figure that stands (a prompt
	// one token short of the context).
	Note string `json:"note,omitempty"`
	// IdleWaitSeconds is how long the runner waited for the server to finish
	// earlier work before measuring.
	IdleWaitSeconds *float64 `json:"idle_wait_seconds,omitempty"`
}

// PrefillRequest is one measured prefill request, on a prompt never sent before.
type PrefillRequest struct {
	PromptTokens int     `json:"prompt_tokens"`
	TTFTMs       float64 `json:"ttft_ms"`
	PromptTokS   float64 `json:"prompt_tok_s"`
	// ServerPromptMs and ServerPromptTokS are the server's own timing of its
	// prompt processing for this request, where it gave one.
	ServerPromptMs   *float64 `json:"server_prompt_ms,omitempty"`
	ServerPromptTokS *float64 `json:"server_prompt_tok_s,omitempty"`
}

// The rule for a prefill figure that is not the server's prefill speed: its
// TTFT exceeds the server's own prompt processing by more than
// OutsidePromptShare of it and by more than OutsidePromptMs.
const (
	OutsidePromptShare = 0.25
	OutsidePromptMs    = 50
)

// OutsidePrompt is how long, of the row's TTFT, the server spent outside
// its own prompt processing, and whether that is beyond the rule above (the
// figure then measures those costs). ok is false without the server's timing.
func (p Prefill) OutsidePrompt() (outsideMs float64, beyond, ok bool) {
	if p.TTFTMs == nil || p.ServerPromptMs == nil {
		return 0, false, false
	}
	outsideMs = *p.TTFTMs - *p.ServerPromptMs
	return outsideMs, outsideMs > OutsidePromptShare**p.ServerPromptMs && outsideMs > OutsidePromptMs, true
}

// PromptTokSRange is the lowest and highest prompt tok/s of the measured
// requests; ok only where there are two or more.
func (p Prefill) PromptTokSRange() (low, high float64, ok bool) {
	if len(p.Requests) < 2 {
		return 0, 0, false
	}
	low, high = p.Requests[0].PromptTokS, p.Requests[0].PromptTokS
	for _, r := range p.Requests[1:] {
		low, high = min(low, r.PromptTokS), max(high, r.PromptTokS)
	}
	return low, high, true
}

// Decode is one cell of the sustained decode matrix: Concurrency streams kept
// in flight on a ContextTokens prompt for a fixed window.
type Decode struct {
	ContextTokens int    `json:"context_tokens"`
	Concurrency   int    `json:"concurrency"`
	Status        Status `json:"status"`
	// Reason explains a status other than valid: the error text, why the cell
	// is over capacity, what showed requests queued.
	Reason string `json:"reason,omitempty"`
	// WindowStart is when the window opened: all streams were producing.
	WindowStart time.Time `json:"window_start,omitzero"`
	// TotalTokS is output tokens that arrived inside the window / its length.
	TotalTokS *float64 `json:"total_tok_s,omitempty"`
	// Interval is TotalTokS's confidence interval, computed when the file
	// was written (stats.SetInterval), so a build reads it. Absent where the
	// samples are too few, on a repeat, and in older files.
	Interval *Interval `json:"interval,omitempty"`
	// PerRequestTokS is the median over streams of each stream's own rate.
	PerRequestTokS *float64 `json:"per_request_tok_s,omitempty"`
	// ServerPerRequestTokS is the same as the server measured it, median
	// over completed requests: a cross-check of the client's figure.
	ServerPerRequestTokS *float64 `json:"server_per_request_tok_s,omitempty"`
	// ClientRateOfServerTimed is the client's own rate for those same
	// completed requests (their tokens from first to last arrival), median:
	// the figure to set beside ServerPerRequestTokS, request for request.
	ClientRateOfServerTimed *float64 `json:"client_rate_of_server_timed,omitempty"`
	// TTFTMs and TBTMs are time to first token and time between tokens over
	// the cell's requests; TBT divides by tokens, not chunks.
	TTFTMs *Percentiles `json:"ttft_ms,omitempty"`
	TBTMs  *Percentiles `json:"tbt_ms,omitempty"`
	// AvgActive is the time-weighted mean of streams producing tokens.
	AvgActive     *float64 `json:"avg_active,omitempty"`
	Completed     *int     `json:"completed,omitempty"`
	OutputTokens  *int     `json:"output_tokens,omitempty"`
	WindowSeconds *float64 `json:"window_seconds,omitempty"`
	// TokenSource says where token counts came from.
	TokenSource TokenSource `json:"token_source,omitempty"`
	// PerSecondTokens counts output tokens in each second of the window.
	PerSecondTokens []int `json:"per_second_tokens,omitempty"`
	// ServerMetrics are samples of the server's own metrics through the window.
	ServerMetrics []MetricsSample `json:"server_metrics,omitempty"`
	// Loop is the evidence behind a Looped status.
	Loop *LoopEvidence `json:"loop,omitempty"`
	// Attempts counts how many times the cell ran (loop retries included).
	Attempts int `json:"attempts,omitempty"`
	// IdleWaitSeconds is how long the runner waited for the server to finish
	// earlier work (the cell before's requests) before the cell started.
	IdleWaitSeconds *float64 `json:"idle_wait_seconds,omitempty"`
	// ServerCount is the server's own count of output tokens beside the
	// client's, for the same requests or the same window.
	ServerCount *ServerCount `json:"server_count,omitempty"`
	// Power is the GPUs' own telemetry through the window, and the energy
	// figures derived from it; absent when the machine has none.
	Power *Power `json:"power,omitempty"`
	// PowerMissing says why a cell has no power figures where GPU
	// telemetry was expected: no reading, never a zero.
	PowerMissing string `json:"power_missing,omitempty"`
	// Repeats are every measurement of the cell in order, where the sweep
	// repeated: each a cell without repeats of its own. The figures above
	// are the median one's (MedianRepeat). Absent for a cell measured once.
	Repeats []Decode `json:"repeats,omitempty"`
}

// MaxRepeats bounds Sweep.Repeats: more is a different experiment.
const MaxRepeats = 100

// MedianRepeat is the index of the repeat whose total tok/s is the median
// of the valid ones (the lower middle one: always a measurement made); the
// last where none is valid; -1 for none.
func MedianRepeat(repeats []Decode) int {
	var valid []int
	for i, r := range repeats {
		if r.Status == StatusValid && r.TotalTokS != nil {
			valid = append(valid, i)
		}
	}
	if len(valid) == 0 {
		return len(repeats) - 1
	}
	slices.SortStableFunc(valid, func(a, b int) int { return cmp.Compare(*repeats[a].TotalTokS, *repeats[b].TotalTokS) })
	return valid[(len(valid)-1)/2]
}

// AddRepeat records one more measurement m of the cell: it joins the
// cell's repeats, and the cell's figures become the median repeat's. m's
// interval is dropped: a repeat carries none.
func (d *Decode) AddRepeat(m Decode) {
	m.Repeats, m.Interval = nil, nil
	all := append(d.Repeats, m)
	*d = all[MedianRepeat(all)]
	d.Repeats = all
}

// Power is what the GPUs reported through a cell's window (board power
// only: not the CPU, not the rest of the server) and what follows from it.
type Power struct {
	// EnergyJoules is the board power of all GPUs integrated over the
	// window; MeanPowerW the same divided by the window's length.
	EnergyJoules float64 `json:"energy_joules"`
	MeanPowerW   float64 `json:"mean_power_w"`
	// TokSPerW is total tok/s per watt; JoulesPer1KTokens the energy spent
	// on each thousand output tokens.
	TokSPerW          *float64 `json:"tok_s_per_w,omitempty"`
	JoulesPer1KTokens *float64 `json:"joules_per_1k_tokens,omitempty"`
	// GPUs has each GPU's figures through the window.
	GPUs []GPUWindow `json:"gpus"`
	// Trace is the power of all GPUs and their mean SM clock at each sample.
	Trace []PowerPoint `json:"trace,omitempty"`
}

// GPUWindow is one GPU's telemetry through a window. A figure the GPU did
// not report ("[N/A]") is absent.
type GPUWindow struct {
	Index            int      `json:"index"`
	Samples          int      `json:"samples"`
	MeanPowerW       *float64 `json:"mean_power_w,omitempty"`
	PeakPowerW       *float64 `json:"peak_power_w,omitempty"`
	MeanSMClockMHz   *float64 `json:"mean_sm_clock_mhz,omitempty"`
	MeanUtilization  *float64 `json:"mean_utilization_pct,omitempty"`
	PeakMemoryMiB    *float64 `json:"peak_memory_mib,omitempty"`
	PeakTemperatureC *float64 `json:"peak_temperature_c,omitempty"`
	PowerThrottled   bool     `json:"power_throttled,omitempty"`
	ThermalThrottled bool     `json:"thermal_throttled,omitempty"`
}

// PowerPoint is one moment of the GPUs' telemetry in a window.
type PowerPoint struct {
	AtSeconds  float64  `json:"at_seconds"`
	PowerW     float64  `json:"power_w"`
	SMClockMHz *float64 `json:"sm_clock_mhz,omitempty"`
}

// ServerCount sets the server's own accounting of a cell's output tokens
// beside the client's count of the same thing.
type ServerCount struct {
	// Source says which counter and what scope, e.g. "vllm:generation_tokens_total
	// over the window" or "eval_count of the requests completed in the window".
	Source string `json:"source"`
	// ServerTokens is the server's count; ClientTokens the client's count of
	// the same requests or window.
	ServerTokens int `json:"server_tokens"`
	ClientTokens int `json:"client_tokens"`
}

// CountDisagreement is the tolerance past which a cell's two counts are flagged: 2 %.
const CountDisagreement = 0.02

// Deviation is the client's count relative to the server's: +0.01 when the
// client counted 1 % more. It is 0 when the server counted nothing.
func (c ServerCount) Deviation() float64 {
	if c.ServerTokens == 0 {
		return 0
	}
	return float64(c.ClientTokens-c.ServerTokens) / float64(c.ServerTokens)
}

// Disagrees reports whether the counts differ by more than CountDisagreement.
func (c ServerCount) Disagrees() bool {
	d := c.Deviation()
	return d > CountDisagreement || d < -CountDisagreement || (c.ServerTokens == 0 && c.ClientTokens > 0)
}

// MinLevel is the lowest confidence a stored interval has: that of the
// median of 2 repeats, between the two.
const MinLevel = 0.5

// Interval is a figure's confidence interval: the true figure lies between
// Low and High with confidence Level (0.95, or less for the median of a
// few repeats). It is of the samples' mean, so the figure may lie outside.
type Interval struct {
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	Level float64 `json:"level"`
}

// Percentiles of a latency distribution in milliseconds. The median is always
// present; the tails only when the tool recorded them.
type Percentiles struct {
	P50 float64  `json:"p50"`
	P90 *float64 `json:"p90,omitempty"`
	P99 *float64 `json:"p99,omitempty"`
}

// TokenSource says which signal a cell's token counts came from, best first.
type TokenSource string

// Token sources, in the order the runner prefers them.
const (
	TokensContinuousUsage TokenSource = "continuous_usage"
	TokensTimingsPerToken TokenSource = "timings_per_token"
	TokensFinalUsage      TokenSource = "final_usage"
	TokensServerMetrics   TokenSource = "server_metrics"
	TokensChunks          TokenSource = "chunks"
)

// TokenSources lists every token source, the only ones a run file may name.
var TokenSources = []TokenSource{TokensContinuousUsage, TokensTimingsPerToken, TokensFinalUsage, TokensServerMetrics, TokensChunks}

// MetricsSample is one reading of the server's metrics during a window.
type MetricsSample struct {
	// AtSeconds is the time since the window opened.
	AtSeconds          float64  `json:"at_seconds"`
	Running            *float64 `json:"running,omitempty"`
	Waiting            *float64 `json:"waiting,omitempty"`
	KVCacheUsage       *float64 `json:"kv_cache_usage,omitempty"`
	Preemptions        *float64 `json:"preemptions,omitempty"`
	SpecAcceptanceRate *float64 `json:"spec_acceptance_rate,omitempty"`
}

// LoopEvidence is what made a cell Looped: the repeated unit, where in the
// output it began, and an excerpt of the text.
type LoopEvidence struct {
	Unit        string `json:"unit"`
	StartOffset int    `json:"start_offset"`
	Excerpt     string `json:"excerpt,omitempty"`
}

// ContextLabel is the row label of the cell's context, e.g. "8K".
func (d Decode) ContextLabel() string { return ContextLabel(d.ContextTokens) }

// Measured reports whether the cell carries figures, whatever its status.
func (d Decode) Measured() bool { return d.TotalTokS != nil }

// Contexts returns the matrix's rows: the sweep's contexts and any context a
// cell names, ascending and without repeats.
func (r *Run) Contexts() []int {
	return Union(r.Sweep.Contexts, each(r.Decode, func(d *Decode) int { return d.ContextTokens }))
}

// ConcurrencyLevels returns the matrix's columns, ascending.
func (r *Run) ConcurrencyLevels() []int {
	return Union(r.Sweep.Concurrency, each(r.Decode, func(d *Decode) int { return d.Concurrency }))
}

// PrefillContexts returns the contexts prefill was planned or measured at.
func (r *Run) PrefillContexts() []int {
	return Union(r.Sweep.PrefillContexts, each(r.Prefill, func(p *Prefill) int { return p.ContextTokens }))
}

// each is f of every element of xs.
func each[T any](xs []T, f func(*T) int) []int {
	out := make([]int, len(xs))
	for i := range xs {
		out[i] = f(&xs[i])
	}
	return out
}

// Cell returns the decode cell at (context, concurrency), if the run has one
// (the first); a caller looking up many keeps a CellIndex instead.
func (r *Run) Cell(context, concurrency int) (Decode, bool) {
	return r.CellIndex().Cell(context, concurrency)
}

// CellIndex finds a run's decode cells by (context, concurrency) in
// constant time, each key to the first such cell.
type CellIndex map[[2]int]*Decode

// CellIndex indexes the run's decode cells, for callers that look up many.
func (r *Run) CellIndex() CellIndex {
	x := make(CellIndex, len(r.Decode))
	for i := len(r.Decode) - 1; i >= 0; i-- { // the first written last
		x[[2]int{r.Decode[i].ContextTokens, r.Decode[i].Concurrency}] = &r.Decode[i]
	}
	return x
}

// Cell returns the decode cell at (context, concurrency), if the run has one.
func (x CellIndex) Cell(context, concurrency int) (Decode, bool) {
	if d, ok := x[[2]int{context, concurrency}]; ok {
		return *d, true
	}
	return Decode{}, false
}

// BestSingleStream is the highest total tok/s of a valid cell at one request,
// the figure a reader running a local assistant cares about.
func (r *Run) BestSingleStream() (float64, bool) {
	return r.bestDecode(func(d Decode) bool { return d.Concurrency == 1 })
}

// PeakTotal is the highest total tok/s of any valid cell.
func (r *Run) PeakTotal() (float64, bool) {
	return r.bestDecode(func(Decode) bool { return true })
}

func (r *Run) bestDecode(keep func(Decode) bool) (best float64, ok bool) {
	for _, d := range r.Decode {
		if d.Status != StatusValid || d.TotalTokS == nil || !keep(d) {
			continue
		}
		if !ok || *d.TotalTokS > best {
			best, ok = *d.TotalTokS, true
		}
	}
	return best, ok
}

// Sorted returns the run with prefill rows by context and decode cells by
// context, then concurrency, the order every page and file shows: the run
// itself if so already (callers only read it), else a sorted copy.
func (r *Run) Sorted() *Run {
	byContext := func(a, b Prefill) int { return cmp.Compare(a.ContextTokens, b.ContextTokens) }
	byCell := func(a, b Decode) int {
		return cmp.Or(cmp.Compare(a.ContextTokens, b.ContextTokens), cmp.Compare(a.Concurrency, b.Concurrency))
	}
	if slices.IsSortedFunc(r.Prefill, byContext) && slices.IsSortedFunc(r.Decode, byCell) {
		return r
	}
	s := *r
	s.Prefill = slices.Clone(r.Prefill)
	s.Decode = slices.Clone(r.Decode)
	slices.SortStableFunc(s.Prefill, byContext)
	slices.SortStableFunc(s.Decode, byCell)
	return &s
}

// Union is the numbers of all the sets, sorted, each once.
func Union(sets ...[]int) []int {
	out := slices.Concat(sets...)
	slices.Sort(out)
	return slices.Compact(out)
}
