package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Profile is how the simulated server behaves: how fast it prefills and
// decodes, how much it can hold, when its model loops, and which faults it
// injects. The defaults resemble the sample run's server (a 30B-A3B model with
// three speculative tokens on one large GPU), scaled down.
type Profile struct {
	// Flavour is the wire dialect: "vllm" (the default), "sglang",
	// "llamacpp", "openai", "ollama" or one a dialect file registers ("tgi"), each with its own endpoints, chunk
	// shapes and metrics.
	Flavour string `toml:"flavour"`
	// Model is the id /v1/models answers with; Root its "path".
	Model string `toml:"model"`
	Root  string `toml:"root"`
	// Version is what /version reports.
	Version     string `toml:"version"`
	MaxModelLen int    `toml:"max_model_len"`
	// ReasoningTokens is how many tokens each answer spends reasoning before
	// its content (sent as delta.reasoning); 0 for a model that does not reason.
	ReasoningTokens int `toml:"reasoning_tokens"`
	// NaturalLength is where an answer ends by itself (finish_reason "stop")
	// unless the request sets ignore_eos; 0 means it never does.
	NaturalLength int `toml:"natural_length"`
	// KeepAliveSeconds is how often a waiting stream gets a ": keep-alive".
	KeepAliveSeconds float64 `toml:"keep_alive_seconds"`
	// FinishAbandoned keeps generating for a request whose client went away,
	// to its end: the next measurement shares the machine with work nobody
	// reads unless the client waits for the server to idle.
	FinishAbandoned bool `toml:"finish_abandoned"`
	// FinishAbandonedPrompt drops a request whose client went away only
	// when it next has a token to send, as Ollama 0.6.5 does (its runner
	// notices the client left when the text it sends is refused): one
	// abandoned while its prompt is processed keeps the server busy to the
	// end of its prompt. The Ollama flavour does this unless
	// FinishAbandoned is set.
	FinishAbandonedPrompt bool `toml:"finish_abandoned_prompt"`
	// WordTokens is how many tokens each word of a prompt counts (1 when
	// unset). At 2 no prompt has an odd number of words' tokens, as a small
	// vocabulary can make some lengths unreachable; the openai flavour only,
	// whose prompts are measured by their usage alone.
	WordTokens int `toml:"word_tokens"`
	// CounterSkew makes /metrics overstate generated tokens by this share
	// (0.05: 5 %), for testing a client that checks its count against the
	// server's.
	CounterSkew float64 `toml:"counter_skew"`

	Connections ConnectionProfile `toml:"connections"`
	Power       PowerProfile      `toml:"power"`

	Prefill     PrefillProfile     `toml:"prefill"`
	Decode      DecodeProfile      `toml:"decode"`
	Speculative SpeculativeProfile `toml:"speculative"`
	KV          KVProfile          `toml:"kv"`
	Loop        LoopProfile        `toml:"loop"`
	Faults      Faults             `toml:"faults"`
	Noise       NoiseProfile       `toml:"noise"`
}

// NoiseProfile makes the server's speed wander on purpose, the same way
// for the same seed, so that intervals and significance tests can be held
// against known truth. Every step (decode and prefill alike) takes its
// planned time times 1 + JitterShare·g + DriftShare·sin(2π·t/DriftPeriodSeconds),
// where t is the seconds since the server started and g a standard normal
// draw, one for each JitterSeconds-long slice of that time (1 s when
// unset), so neighbouring seconds of a window differ as a busy machine's
// do, and the whole sweep slowly speeds up and slows down as heat or
// other tenants make it. All zero (the default): the exact speed.
type NoiseProfile struct {
	Seed               uint64  `toml:"seed"`
	JitterShare        float64 `toml:"jitter_share"`
	JitterSeconds      float64 `toml:"jitter_seconds"`
	DriftShare         float64 `toml:"drift_share"`
	DriftPeriodSeconds float64 `toml:"drift_period_seconds"`
}

// Factor is how much longer than planned a step that starts at seconds
// since the server started takes: 1 without noise, never below 0.1.
func (n NoiseProfile) Factor(seconds float64) float64 {
	f := 1.0
	if n.JitterShare > 0 {
		k := uint64(max(0, math.Floor(seconds/cmp.Or(n.JitterSeconds, 1))))
		f += n.JitterShare * rand.New(rand.NewPCG(n.Seed, k)).NormFloat64()
	}
	if n.DriftShare > 0 && n.DriftPeriodSeconds > 0 {
		f += n.DriftShare * math.Sin(2*math.Pi*seconds/n.DriftPeriodSeconds)
	}
	return max(0.1, f)
}

// PowerProfile is the board power of the GPUs the sim pretends to run on,
// following its load: IdleW plus PerRequestW for each request running,
// shared evenly by GPUs GPUs. GET /sim/power answers with it as lines of
// nvidia-smi's telemetry query, so a stand-in nvidia-smi can pass it on.
// GPUs 0: no power model.
type PowerProfile struct {
	GPUs        int     `toml:"gpus"`
	IdleW       float64 `toml:"idle_w"`
	PerRequestW float64 `toml:"per_request_w"`
}

// ConnectionProfile is how the server treats keep-alive connections.
// llama-server's HTTP library closes a connection idle for 5 s and one that
// has served 100 requests.
type ConnectionProfile struct {
	// IdleCloseSeconds closes a connection once it has been idle this long
	// (0: never). A request that arrives on it after that is lost the way it
	// is on a real server racing the close: the connection closes, with no
	// answer and nothing processed.
	IdleCloseSeconds float64 `toml:"idle_close_seconds"`
	// MaxRequests answers the last request a connection may carry with
	// "Connection: close" and closes it (0: no limit).
	MaxRequests int `toml:"max_requests"`
}

// PrefillProfile: prompt tok/s at context N is PeakTokS / (1 + N/HalfContext),
// falling as context grows the way attention cost does. RequestOverheadMs is
// the time a request spends before the scheduler sees it (parsing,
// templating, tokenizing), which a real server spends on every request.
//
// NewSizeMs and AfterBurstMs are one-time costs, paid before the scheduler
// sees a request and outside the server's own prompt time, as a GPU server
// pays them: on an H200 a llama-server's first 1K request spent 243 ms
// beside 72 ms of prompt processing, and its first 8K request after a burst
// of 16 new streams 4.6 s beside 169 ms. NewSizeMs is charged to the first
// request whose prompt is longer than any before it by a power of two (its
// length's highest bit is above every earlier one's: kernels are compiled
// and tuned per shape bucket); AfterBurstMs to the first request that finds
// the server idle after BurstStreams or more requests ran at once.
type PrefillProfile struct {
	PeakTokS          float64 `toml:"peak_tok_s"`
	HalfContext       float64 `toml:"half_context"`
	RequestOverheadMs float64 `toml:"request_overhead_ms"`
	NewSizeMs         float64 `toml:"new_size_ms"`
	AfterBurstMs      float64 `toml:"after_burst_ms"`
	BurstStreams      int     `toml:"burst_streams"`
}

// Rate is the prefill speed, tokens per second, for a prompt of n tokens.
func (p PrefillProfile) Rate(n int) float64 {
	return p.PeakTokS / (1 + float64(n)/p.HalfContext)
}

// DecodeProfile: one decode step of a batch takes BaseMs + PerSeqMs × batch +
// PerKTokenMs × (context tokens in the batch / 1000) + PerKCachedTokenMs ×
// (tokens the KV cache holds, cached prefixes included, / 1000). A step also
// prefills up to MaxBatchedTokens prompt tokens, at the prefill rate.
type DecodeProfile struct {
	BaseMs      float64 `toml:"base_ms"`
	PerSeqMs    float64 `toml:"per_seq_ms"`
	PerKTokenMs float64 `toml:"per_ktoken_ms"`
	// PerKCachedTokenMs is llama.cpp's cost of a fuller cache: its
	// attention spans the cache's used cells, other requests' cached
	// prompts too, so an idle server decodes slower after long prompts
	// than before them.
	PerKCachedTokenMs float64 `toml:"per_kcached_token_ms"`
	MaxBatchedTokens  int     `toml:"max_batched_tokens"`
}

// stepSeconds is the duration of a decode step over batch sequences holding
// contextTokens tokens in all.
func (d DecodeProfile) stepSeconds(batch, contextTokens int) float64 {
	return (d.BaseMs + d.PerSeqMs*float64(batch) + d.PerKTokenMs*float64(contextTokens)/1000) / 1000
}

// SpeculativeProfile: each step drafts DraftTokens per stream; each draft
// token is accepted with probability Acceptance until the first rejection,
// so a step yields 1 + accepted tokens.
type SpeculativeProfile struct {
	DraftTokens int     `toml:"draft_tokens"`
	Acceptance  float64 `toml:"acceptance"`
}

// KVProfile is the cache: CapacityTokens in blocks of BlockSize, and at most
// MaxRunning requests in a batch. Requests that do not fit wait.
type KVProfile struct {
	CapacityTokens int `toml:"capacity_tokens"`
	BlockSize      int `toml:"block_size"`
	MaxRunning     int `toml:"max_running"`
}

// LoopProfile: above AboveContext prompt tokens (0: never), or with
// Probability per request, the output turns into Phrase repeated, from
// AfterTokens on.
type LoopProfile struct {
	AboveContext int     `toml:"above_context"`
	Probability  float64 `toml:"probability"`
	AfterTokens  int     `toml:"after_tokens"`
	Phrase       string  `toml:"phrase"`
}

// Faults are failures the server injects into every Every-th request
// (1: all of them, 0: none), for testing what a client does with them.
type Faults struct {
	Every int `toml:"every"`
	// HTTPStatus answers 500, 503 or 429 at once, with Retry-After when set.
	HTTPStatus        int `toml:"http_status"`
	RetryAfterSeconds int `toml:"retry_after_seconds"`
	// DropAfterTokens closes the connection mid-stream, without [DONE].
	DropAfterTokens int `toml:"drop_after_tokens"`
	// StallAfterTokens stops sending for StallSeconds, then goes on.
	StallAfterTokens int     `toml:"stall_after_tokens"`
	StallSeconds     float64 `toml:"stall_seconds"`
	// MalformedAfterTokens sends one chunk of broken JSON.
	MalformedAfterTokens int `toml:"malformed_after_tokens"`
	// ErrorEventAfterTokens ends the stream with vLLM's error event.
	ErrorEventAfterTokens int `toml:"error_event_after_tokens"`
	// TruncatePromptTo silently cuts prompts to this many tokens, as Ollama does.
	TruncatePromptTo int `toml:"truncate_prompt_to"`
}

// DefaultProfile is the sample run's server, scaled down: about 330 tok/s for one
// stream, a few thousand in total at 128, 2M tokens of KV cache.
func DefaultProfile() Profile {
	return Profile{
		Flavour:          FlavourVLLM,
		Model:            "sim",
		Root:             "matrixgen/sim-30b-a3b",
		Version:          "0.0.0+matrixgen.sim",
		MaxModelLen:      1 << 20,
		KeepAliveSeconds: 1,
		Prefill:          PrefillProfile{PeakTokS: 40000, HalfContext: 200000, RequestOverheadMs: 200},
		Decode:           DecodeProfile{BaseMs: 5, PerSeqMs: 0.15, PerKTokenMs: 0.0005, MaxBatchedTokens: 8192},
		Speculative:      SpeculativeProfile{DraftTokens: 3, Acceptance: 0.45},
		KV:               KVProfile{CapacityTokens: 2_000_000, BlockSize: 16, MaxRunning: 128},
		Loop:             LoopProfile{AfterTokens: 64, Phrase: "and the same words came back again"},
	}
}

// Validate rejects profiles the engine cannot run.
func (p Profile) Validate() error {
	var errs []error
	check := func(ok bool, msg string) {
		if !ok {
			errs = append(errs, errors.New(msg))
		}
	}
	check(p.Model != "", "model: required")
	check(slices.Contains(Flavours, p.Flavour), "flavour: want "+strings.Join(Flavours, ", "))
	check(p.MaxModelLen > 0, "max_model_len: must be positive")
	check(p.Prefill.PeakTokS > 0 && p.Prefill.HalfContext > 0, "prefill: peak_tok_s and half_context must be positive")
	check(p.Prefill.RequestOverheadMs >= 0, "prefill.request_overhead_ms: must not be negative")
	check(p.Prefill.NewSizeMs >= 0 && p.Prefill.AfterBurstMs >= 0 && p.Prefill.BurstStreams >= 0,
		"prefill: new_size_ms, after_burst_ms and burst_streams must not be negative")
	check(p.Prefill.AfterBurstMs == 0 || p.Prefill.BurstStreams > 0, "prefill.after_burst_ms: needs burst_streams")
	check(p.Decode.BaseMs > 0 && p.Decode.PerSeqMs >= 0 && p.Decode.PerKTokenMs >= 0 && p.Decode.PerKCachedTokenMs >= 0, "decode: base_ms must be positive, the others not negative")
	check(p.Decode.MaxBatchedTokens > 0, "decode.max_batched_tokens: must be positive")
	check(p.Speculative.DraftTokens >= 0 && p.Speculative.Acceptance >= 0 && p.Speculative.Acceptance <= 1, "speculative: draft_tokens ≥ 0, acceptance in 0…1")
	check(p.KV.BlockSize > 0 && p.KV.CapacityTokens >= p.KV.BlockSize && p.KV.MaxRunning > 0, "kv: block_size, capacity_tokens and max_running must be positive")
	check(p.KV.CapacityTokens >= p.MaxModelLen, "kv.capacity_tokens: must hold one request of max_model_len, as vLLM checks at startup")
	check(p.Loop.Probability >= 0 && p.Loop.Probability <= 1 && !math.IsNaN(p.Loop.Probability), "loop.probability: want 0…1")
	check(p.KeepAliveSeconds > 0, "keep_alive_seconds: must be positive")
	check(p.Power.GPUs >= 0 && p.Power.IdleW >= 0 && p.Power.PerRequestW >= 0, "power: gpus, idle_w and per_request_w must not be negative")
	check(p.CounterSkew >= 0 && p.CounterSkew <= 1, "counter_skew: want 0…1")
	check(p.WordTokens >= 0 && (p.WordTokens <= 1 || p.Flavour == FlavourOpenAI), "word_tokens: 0 or 1, or more with flavour openai only")
	check(p.Connections.IdleCloseSeconds >= 0 && p.Connections.MaxRequests >= 0, "connections: idle_close_seconds and max_requests must not be negative")
	check(p.Noise.JitterShare >= 0 && p.Noise.JitterShare <= 0.5 && p.Noise.DriftShare >= 0 && p.Noise.DriftShare <= 0.5,
		"noise: jitter_share and drift_share want 0…0.5")
	check(p.Noise.JitterSeconds >= 0 && p.Noise.DriftPeriodSeconds >= 0, "noise: jitter_seconds and drift_period_seconds must not be negative")
	check(p.Noise.DriftShare == 0 || p.Noise.DriftPeriodSeconds > 0, "noise.drift_share: needs drift_period_seconds")
	check(slices.Contains([]int{0, 429, 500, 503}, p.Faults.HTTPStatus), fmt.Sprintf("faults.http_status: want 429, 500 or 503, got %d", p.Faults.HTTPStatus))
	return errors.Join(errs...)
}

// The wire dialects the sim speaks.
const (
	FlavourVLLM     = "vllm"
	FlavourSGLang   = "sglang"
	FlavourLlamaCpp = "llamacpp"
	// FlavourOpenAI is a bare OpenAI-compatible server: no tokenize, no
	// metrics, no per-chunk counts, only a final usage chunk when asked.
	FlavourOpenAI = "openai"
	// FlavourOllama is Ollama's: its native /api/chat beside the
	// OpenAI-compatible endpoint, num_ctx in /api/show, no metrics.
	FlavourOllama = "ollama"
)

// Flavours lists the dialects the sim speaks.
var Flavours = []string{FlavourVLLM, FlavourSGLang, FlavourLlamaCpp, FlavourOpenAI, FlavourOllama}

// blocks is the KV capacity in blocks.
func (p Profile) blocks() int { return p.KV.CapacityTokens / p.KV.BlockSize }

// SingleStreamTokS is the profile's decode speed for one short stream
// (speculative tokens accepted included), to tell a person what to expect.
func (p Profile) SingleStreamTokS() float64 {
	perStep := 1.0
	for i, q := 1, p.Speculative.Acceptance; i <= p.Speculative.DraftTokens; i++ {
		perStep += q
		q *= p.Speculative.Acceptance
	}
	return perStep / p.Decode.stepSeconds(1, 0)
}
