package config

import (
	"fmt"
	"time"
)

// The [server], [sweep] and [describe] sections, as the file spells them;
// the command wires them into the runner's settings.

// Server says where the server is and what to send it besides the prompt.
type Server struct {
	// BaseURL is the server's root, e.g. http://127.0.0.1:8000 (a trailing /v1, as
	// OpenAI's clients are given, is dropped).
	BaseURL string `toml:"base_url"`
	// APIKeyEnv names the environment variable holding the API key. The key
	// itself is read at start and never written anywhere.
	APIKeyEnv string `toml:"api_key_env"`
	// Model is the served model; empty picks the only one /v1/models lists.
	Model string `toml:"model"`
	// MetricsURL overrides <base_url>/metrics.
	MetricsURL string `toml:"metrics_url"`
	// Temperature, when set, is sent as is (0 included, which go-openai drops).
	Temperature *float64 `toml:"temperature"`
	// ChatTemplateKwargs is sent as chat_template_kwargs, e.g. {enable_thinking = false}.
	ChatTemplateKwargs map[string]any `toml:"chat_template_kwargs"`
	// Extra fields merged into every chat request body.
	Extra map[string]any `toml:"extra"`
}

// Sweep is what to measure.
type Sweep struct {
	// Contexts are the matrix's rows: labels ("8K"), token counts, or "max",
	// the largest context that fits max_model_len with max_output.
	Contexts []string `toml:"contexts"`
	// Concurrency levels are the matrix's columns.
	Concurrency []int `toml:"concurrency"`
	// PrefillContexts are where prefill is measured; empty: the contexts.
	PrefillContexts []string `toml:"prefill_contexts"`
	// PrefillRepeats is how many fresh prompts each prefill row measures
	// after its warm-up (default 3).
	PrefillRepeats int `toml:"prefill_repeats"`
	// Repeats is how many times each decode cell is measured, the whole
	// matrix once, then again (default 1).
	Repeats int `toml:"repeats"`
	// Duration is each decode cell's window.
	Duration Duration `toml:"duration"`
	// MaxOutput caps each request's output tokens.
	MaxOutput int `toml:"max_output"`
	// IgnoreEOS asks the server to run every stream to MaxOutput.
	IgnoreEOS *bool `toml:"ignore_eos"`
	// KVCacheTokens overrides the KV capacity the probe finds.
	KVCacheTokens int `toml:"kv_cache_tokens"`
	// LoopRetries is how often a looped cell is run again with a fresh prompt.
	LoopRetries *int `toml:"loop_retries"`
	// CacheMode is "shared" (every stream of a cell on the context the scout
	// warmed, as the sample run was measured) or "distinct" (each stream its own context).
	CacheMode string `toml:"cache_mode"`
	// WarmupTimeout bounds the wait for all streams of a cell to produce
	// tokens; past it the window opens anyway and the cell counts as queued.
	WarmupTimeout Duration `toml:"warmup_timeout"`
	// StallTimeout fails a stream that sends nothing for this long.
	StallTimeout Duration `toml:"stall_timeout"`
	// ServerWait is how long to wait for a server that stopped answering to
	// come back (its /health answering) before the sweep stops.
	ServerWait Duration `toml:"server_wait"`
	// IdleTimeout bounds the wait, before each measurement, for the server to
	// finish earlier work (some go on generating for requests a cut cell
	// left behind); past it the measurement starts anyway and says so.
	IdleTimeout Duration `toml:"idle_timeout"`
}

// Describe is what the runner cannot detect, for the page's panels.
type Describe struct {
	HardwareType  string  `toml:"hardware_type"`
	GPU           string  `toml:"gpu"`
	GPUCount      int     `toml:"gpu_count"`
	VRAMGB        float64 `toml:"vram_gb"`
	CPU           string  `toml:"cpu"`
	OS            string  `toml:"os"`
	Engine        string  `toml:"engine"`
	EngineVersion string  `toml:"engine_version"`
	Quantization  string  `toml:"quantization"`
	Backend       string  `toml:"backend"`
	Repository    string  `toml:"repository"`
	Build         string  `toml:"build"`
	Commit        string  `toml:"commit"`
	ModelName     string  `toml:"model_name"`
	Revision      string  `toml:"revision"`
	LaunchCommand string  `toml:"launch_command"`
}

// Duration is a time.Duration written as "30s" in the file.
type Duration struct{ time.Duration }

// UnmarshalText reads "30s", "2m", "1h30m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("want a duration like 30s or 2m, got %q", b)
	}
	d.Duration = v
	return nil
}
