package config

// A `matrixgen sim` profile as its TOML file spells it: the sim's own types
// carry no TOML tags, and config imports no sim. The leaf tables convert to
// the sim's types as they are (the same fields); the command converts the
// top field by field.

// SimProfile is the sim's profile as a profile file spells it.
type SimProfile struct {
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
	Connections      SimConnectionProfile  `toml:"connections"`
	Power            SimPowerProfile       `toml:"power"`
	Prefill          SimPrefillProfile     `toml:"prefill"`
	Decode           SimDecodeProfile      `toml:"decode"`
	Speculative      SimSpeculativeProfile `toml:"speculative"`
	KV               SimKVProfile          `toml:"kv"`
	Loop             SimLoopProfile        `toml:"loop"`
	Faults           SimFaults             `toml:"faults"`
	Noise            SimNoiseProfile       `toml:"noise"`
}

// SimNoiseProfile is the profile's [noise] table.
type SimNoiseProfile struct {
	Seed               uint64  `toml:"seed"`
	JitterShare        float64 `toml:"jitter_share"`
	JitterSeconds      float64 `toml:"jitter_seconds"`
	DriftShare         float64 `toml:"drift_share"`
	DriftPeriodSeconds float64 `toml:"drift_period_seconds"`
}

// SimPowerProfile is the profile's [power] table.
type SimPowerProfile struct {
	GPUs        int     `toml:"gpus"`
	IdleW       float64 `toml:"idle_w"`
	PerRequestW float64 `toml:"per_request_w"`
}

// SimConnectionProfile is the profile's [connections] table.
type SimConnectionProfile struct {
	IdleCloseSeconds float64 `toml:"idle_close_seconds"`
	MaxRequests      int     `toml:"max_requests"`
}

// SimPrefillProfile is the profile's [prefill] table.
type SimPrefillProfile struct {
	PeakTokS          float64 `toml:"peak_tok_s"`
	HalfContext       float64 `toml:"half_context"`
	RequestOverheadMs float64 `toml:"request_overhead_ms"`
	NewSizeMs         float64 `toml:"new_size_ms"`
	AfterBurstMs      float64 `toml:"after_burst_ms"`
	BurstStreams      int     `toml:"burst_streams"`
}

// SimDecodeProfile is the profile's [decode] table.
type SimDecodeProfile struct {
	BaseMs            float64 `toml:"base_ms"`
	PerSeqMs          float64 `toml:"per_seq_ms"`
	PerKTokenMs       float64 `toml:"per_ktoken_ms"`
	PerKCachedTokenMs float64 `toml:"per_kcached_token_ms"`
	MaxBatchedTokens  int     `toml:"max_batched_tokens"`
}

// SimSpeculativeProfile is the profile's [speculative] table.
type SimSpeculativeProfile struct {
	DraftTokens int     `toml:"draft_tokens"`
	Acceptance  float64 `toml:"acceptance"`
}

// SimKVProfile is the profile's [kv] table.
type SimKVProfile struct {
	CapacityTokens int `toml:"capacity_tokens"`
	BlockSize      int `toml:"block_size"`
	MaxRunning     int `toml:"max_running"`
}

// SimLoopProfile is the profile's [loop] table.
type SimLoopProfile struct {
	AboveContext int     `toml:"above_context"`
	Probability  float64 `toml:"probability"`
	AfterTokens  int     `toml:"after_tokens"`
	Phrase       string  `toml:"phrase"`
}

// SimFaults is the profile's [faults] table.
type SimFaults struct {
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
