package config

import "github.com/matrixgen/matrixgen/sim"

// A sim profile as its TOML file spells it: the sim's own types carry no
// TOML tags. The leaf tables convert to the sim's types as they are (the
// same fields); the top converts field by field (asProfile, profileFile).

// simProfile is a sim.Profile as a profile file spells it.
type simProfile struct {
	Flavour          string                `toml:"flavour"`
	Model            string                `toml:"model"`
	Root             string                `toml:"root"`
	Version          string                `toml:"version"`
	MaxModelLen      int                   `toml:"max_model_len"`
	ReasoningTokens  int                   `toml:"reasoning_tokens"`
	NaturalLength    int                   `toml:"natural_length"`
	KeepAliveSeconds float64               `toml:"keep_alive_seconds"`
	FinishAbandoned  bool                  `toml:"finish_abandoned"`
	WordTokens       int                   `toml:"word_tokens"`
	CounterSkew      float64               `toml:"counter_skew"`
	Connections      simConnectionProfile  `toml:"connections"`
	Power            simPowerProfile       `toml:"power"`
	Prefill          simPrefillProfile     `toml:"prefill"`
	Decode           simDecodeProfile      `toml:"decode"`
	Speculative      simSpeculativeProfile `toml:"speculative"`
	KV               simKVProfile          `toml:"kv"`
	Loop             simLoopProfile        `toml:"loop"`
	Faults           simFaults             `toml:"faults"`
	Noise            simNoiseProfile       `toml:"noise"`
}

type simNoiseProfile struct {
	Seed               uint64  `toml:"seed"`
	JitterShare        float64 `toml:"jitter_share"`
	JitterSeconds      float64 `toml:"jitter_seconds"`
	DriftShare         float64 `toml:"drift_share"`
	DriftPeriodSeconds float64 `toml:"drift_period_seconds"`
}

type simPowerProfile struct {
	GPUs        int     `toml:"gpus"`
	IdleW       float64 `toml:"idle_w"`
	PerRequestW float64 `toml:"per_request_w"`
}

type simConnectionProfile struct {
	IdleCloseSeconds float64 `toml:"idle_close_seconds"`
	MaxRequests      int     `toml:"max_requests"`
}

type simPrefillProfile struct {
	PeakTokS          float64 `toml:"peak_tok_s"`
	HalfContext       float64 `toml:"half_context"`
	RequestOverheadMs float64 `toml:"request_overhead_ms"`
	NewSizeMs         float64 `toml:"new_size_ms"`
	AfterBurstMs      float64 `toml:"after_burst_ms"`
	BurstStreams      int     `toml:"burst_streams"`
}

type simDecodeProfile struct {
	BaseMs            float64 `toml:"base_ms"`
	PerSeqMs          float64 `toml:"per_seq_ms"`
	PerKTokenMs       float64 `toml:"per_ktoken_ms"`
	PerKCachedTokenMs float64 `toml:"per_kcached_token_ms"`
	MaxBatchedTokens  int     `toml:"max_batched_tokens"`
}

type simSpeculativeProfile struct {
	DraftTokens int     `toml:"draft_tokens"`
	Acceptance  float64 `toml:"acceptance"`
}

type simKVProfile struct {
	CapacityTokens int `toml:"capacity_tokens"`
	BlockSize      int `toml:"block_size"`
	MaxRunning     int `toml:"max_running"`
}

type simLoopProfile struct {
	AboveContext int     `toml:"above_context"`
	Probability  float64 `toml:"probability"`
	AfterTokens  int     `toml:"after_tokens"`
	Phrase       string  `toml:"phrase"`
}

type simFaults struct {
	Every                 int     `toml:"every"`
	HTTPStatus            int     `toml:"http_status"`
	RetryAfterSeconds     int     `toml:"retry_after_seconds"`
	DropAfterTokens       int     `toml:"drop_after_tokens"`
	StallAfterTokens      int     `toml:"stall_after_tokens"`
	StallSeconds          float64 `toml:"stall_seconds"`
	MalformedAfterTokens  int     `toml:"malformed_after_tokens"`
	ErrorEventAfterTokens int     `toml:"error_event_after_tokens"`
	TruncatePromptTo      int     `toml:"truncate_prompt_to"`
}

// asProfile is the profile the sim takes.
func (p simProfile) asProfile() sim.Profile {
	return sim.Profile{
		Flavour:          p.Flavour,
		Model:            p.Model,
		Root:             p.Root,
		Version:          p.Version,
		MaxModelLen:      p.MaxModelLen,
		ReasoningTokens:  p.ReasoningTokens,
		NaturalLength:    p.NaturalLength,
		KeepAliveSeconds: p.KeepAliveSeconds,
		FinishAbandoned:  p.FinishAbandoned,
		WordTokens:       p.WordTokens,
		CounterSkew:      p.CounterSkew,
		Connections:      sim.ConnectionProfile(p.Connections),
		Power:            sim.PowerProfile(p.Power),
		Prefill:          sim.PrefillProfile(p.Prefill),
		Decode:           sim.DecodeProfile(p.Decode),
		Speculative:      sim.SpeculativeProfile(p.Speculative),
		KV:               sim.KVProfile(p.KV),
		Loop:             sim.LoopProfile(p.Loop),
		Faults:           sim.Faults(p.Faults),
		Noise:            sim.NoiseProfile(p.Noise),
	}
}

// profileFile is a sim profile as the file spells it.
func profileFile(p sim.Profile) simProfile {
	return simProfile{
		Flavour:          p.Flavour,
		Model:            p.Model,
		Root:             p.Root,
		Version:          p.Version,
		MaxModelLen:      p.MaxModelLen,
		ReasoningTokens:  p.ReasoningTokens,
		NaturalLength:    p.NaturalLength,
		KeepAliveSeconds: p.KeepAliveSeconds,
		FinishAbandoned:  p.FinishAbandoned,
		WordTokens:       p.WordTokens,
		CounterSkew:      p.CounterSkew,
		Connections:      simConnectionProfile(p.Connections),
		Power:            simPowerProfile(p.Power),
		Prefill:          simPrefillProfile(p.Prefill),
		Decode:           simDecodeProfile(p.Decode),
		Speculative:      simSpeculativeProfile(p.Speculative),
		KV:               simKVProfile(p.KV),
		Loop:             simLoopProfile(p.Loop),
		Faults:           simFaults(p.Faults),
		Noise:            simNoiseProfile(p.Noise),
	}
}
