// Package runner is the network side of matrixgen: `matrixgen run` sweeps an
// OpenAI-compatible inference server over context lengths × concurrency and
// writes what it measured as a run file. It owns HTTP and go-openai; render
// never imports it. The simulated server it is tested against is sim.
package runner

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/redact"
)

// Settings is everything a sweep needs, filled by the command from its
// configuration and flags.
type Settings struct {
	Server   Server
	Sweep    Sweep
	Describe Describe
}

// Server says where the server is and what to send it besides the prompt.
type Server struct {
	// BaseURL is the server's root, e.g. http://127.0.0.1:8000 (a trailing /v1, as
	// OpenAI's clients are given, is dropped).
	BaseURL string
	// APIKeyEnv names the environment variable holding the API key. The key
	// itself is read at start and never written anywhere.
	APIKeyEnv string
	// Model is the served model; empty picks the only one /v1/models lists.
	Model string
	// MetricsURL overrides <base_url>/metrics.
	MetricsURL string
	// Temperature, when set, is sent as is (0 included, which go-openai drops).
	Temperature *float64
	// ChatTemplateKwargs is sent as chat_template_kwargs, e.g. {enable_thinking = false}.
	ChatTemplateKwargs map[string]any
	// Extra fields merged into every chat request body.
	Extra map[string]any
}

// Sweep is what to measure.
type Sweep struct {
	// Contexts are the matrix's rows: labels ("8K"), token counts, or "max",
	// the largest context that fits max_model_len with max_output.
	Contexts []string
	// Concurrency levels are the matrix's columns.
	Concurrency []int
	// PrefillContexts are where prefill is measured; empty: the contexts.
	PrefillContexts []string
	// PrefillRepeats is how many fresh prompts each prefill row measures,
	// after its warm-up (0: defaultPrefillRepeats; at most MaxPrefillRepeats).
	PrefillRepeats int
	// Repeats is how many times the matrix's decode cells are measured
	// (0 or 1: once; at most matrixgen.MaxRepeats).
	Repeats int
	// Duration is each decode cell's window.
	Duration time.Duration
	// MaxOutput caps each request's output tokens.
	MaxOutput int
	// IgnoreEOS asks the server to run every stream to MaxOutput.
	IgnoreEOS *bool
	// KVCacheTokens overrides the KV capacity the probe finds.
	KVCacheTokens int
	// LoopRetries is how often a looped cell is run again with a fresh prompt.
	LoopRetries *int
	// CacheMode is "shared" (every stream of a cell on the warmed context)
	// or "distinct" (each stream its own context).
	CacheMode string
	// WarmupTimeout bounds the wait for all streams of a cell to produce
	// tokens; past it the window opens anyway and the cell counts as queued.
	WarmupTimeout time.Duration
	// StallTimeout fails a stream that sends nothing for this long.
	StallTimeout time.Duration
	// ServerWait is how long to wait for a server that stopped answering.
	ServerWait time.Duration
	// IdleTimeout bounds the wait, before each measurement, for the server
	// to finish earlier work; past it the measurement starts anyway.
	IdleTimeout time.Duration
}

// Describe is what the runner cannot detect, for the page's panels.
type Describe struct {
	HardwareType  string
	GPU           string
	GPUCount      int
	VRAMGB        float64
	CPU           string
	OS            string
	Engine        string
	EngineVersion string
	Quantization  string
	Backend       string
	Repository    string
	Build         string
	Commit        string
	ModelName     string
	Revision      string
	LaunchCommand string
}

// KVGivenByHand is the probe's KV source when the settings gave the
// capacity (kv_cache_tokens): a resume gives it again.
const KVGivenByHand = "given by hand (kv_cache_tokens)"

// defaults fills what the settings leave out with the sample run's sweep.
func (s *Settings) defaults() {
	s.Server.BaseURL = cmp.Or(s.Server.BaseURL, "http://127.0.0.1:8000")
	sw := &s.Sweep
	if len(sw.Contexts) == 0 {
		sw.Contexts = []string{"8K", "16K", "32K", "64K", "128K", "256K", "512K", "max"}
	}
	if len(sw.Concurrency) == 0 {
		sw.Concurrency = []int{1, 2, 4, 8, 16, 32, 64, 128}
	}
	sw.Duration = cmp.Or(sw.Duration, 30*time.Second)
	sw.MaxOutput = cmp.Or(sw.MaxOutput, 4096)
	sw.IgnoreEOS = cmp.Or(sw.IgnoreEOS, new(true))
	sw.LoopRetries = cmp.Or(sw.LoopRetries, new(1))
	sw.CacheMode = cmp.Or(sw.CacheMode, "shared")
	sw.WarmupTimeout = cmp.Or(sw.WarmupTimeout, 10*time.Minute)
	sw.StallTimeout = cmp.Or(sw.StallTimeout, 5*time.Minute)
	sw.ServerWait = cmp.Or(sw.ServerWait, 5*time.Minute)
	sw.IdleTimeout = cmp.Or(sw.IdleTimeout, 2*time.Minute)
}

// maxConcurrency bounds a concurrency level: each stream is a connection
// and a goroutine, and no server batches more.
const maxConcurrency = 100000

// Check refuses settings no sweep can be measured with, before any
// request is sent: the one place flags and the config are checked. Every
// problem is reported, each a *SettingError naming the config key. Zero
// values are the defaults' to fill, so they pass.
func (s Settings) Check() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &SettingError{Key: key, Err: fmt.Errorf(format, args...)})
	}
	checkURL := func(key, u string) {
		if parsed, err := url.Parse(u); u != "" && (err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "") {
			bad(key, "want an http:// or https:// URL, got %q", redact.Text(u))
		}
	}
	checkURL("server.base_url", s.Server.BaseURL)
	if !strings.HasPrefix(s.Server.MetricsURL, "/") {
		checkURL("server.metrics_url", s.Server.MetricsURL)
	}
	sw := s.Sweep
	for _, list := range []struct {
		key    string
		labels []string
	}{{"sweep.contexts", sw.Contexts}, {"sweep.prefill_contexts", sw.PrefillContexts}} {
		for _, l := range list.labels {
			if _, err := matrixgen.ParseContext(l); err != nil && !strings.EqualFold(strings.TrimSpace(l), "max") {
				bad(list.key, "%v", err)
			}
		}
	}
	for _, n := range sw.Concurrency {
		if n < 1 || n > maxConcurrency {
			bad("sweep.concurrency", "want levels from 1 to %d, got %d", maxConcurrency, n)
		}
	}
	for i, d := range []time.Duration{sw.Duration, sw.WarmupTimeout, sw.StallTimeout, sw.ServerWait,
		sw.IdleTimeout} {
		if d < 0 {
			bad([]string{"sweep.duration", "sweep.warmup_timeout", "sweep.stall_timeout", "sweep.server_wait",
				"sweep.idle_timeout"}[i], "must be positive, got %v", d)
		}
	}
	for i, n := range []int{sw.MaxOutput, sw.KVCacheTokens} {
		if n < 0 {
			bad([]string{"sweep.max_output", "sweep.kv_cache_tokens"}[i], "must not be negative, got %d", n)
		}
	}
	if r := sw.PrefillRepeats; r < 0 || r > MaxPrefillRepeats {
		bad("sweep.prefill_repeats", "want 1 to %d fresh prompts a prefill row, got %d", MaxPrefillRepeats, r)
	}
	if r := sw.Repeats; r < 0 || r > matrixgen.MaxRepeats {
		bad("sweep.repeats", "want 1 to %d measurements of every cell, got %d", matrixgen.MaxRepeats, r)
	}
	if r := sw.LoopRetries; r != nil && *r < 0 {
		bad("sweep.loop_retries", "must not be negative, got %d", *r)
	}
	if m := sw.CacheMode; m != "" && m != "shared" && m != "distinct" {
		bad("sweep.cache_mode", "want shared or distinct, got %q", m)
	}
	if !(s.Describe.VRAMGB >= 0 && s.Describe.VRAMGB <= matrixgen.MaxFigure) || s.Describe.GPUCount < 0 {
		bad("describe", "vram_gb and gpu_count must not be negative, nor vram_gb past %g", float64(matrixgen.MaxFigure))
	}
	if t := s.Server.Temperature; t != nil && !(*t >= 0 && *t <= matrixgen.MaxFigure) {
		bad("server.temperature", "want a finite number from 0 up, got %v", *t)
	}
	for _, m := range []struct {
		key string
		v   map[string]any
	}{{"server.extra", s.Server.Extra}, {"server.chat_template_kwargs", s.Server.ChatTemplateKwargs}} {
		if _, err := json.Marshal(m.v); err != nil {
			bad(m.key, "cannot be sent as JSON: %v", err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Server.Extra)) {
		if setting, own := ownFields[k]; own && setting == "" {
			bad("server.extra",
				"%q is a field matrixgen sets itself; extra may only add fields it does not set", k)
		} else if own {
			bad("server.extra", "%q is a field matrixgen sets itself, from %s: set that instead", k, setting)
		}
	}
	return errors.Join(errs...)
}

// ownFields are the chat request's fields matrixgen sets itself, each
// with the setting that sets it ("" where none does): the same name in
// server.extra would be dropped without a word, so Check refuses it.
var ownFields = map[string]string{
	"model": "server.model", "messages": "", "stream": "", "stream_options": "", "seed": "",
	"max_tokens": "sweep.max_output", "max_completion_tokens": "sweep.max_output",
	"temperature": "server.temperature", "chat_template_kwargs": "server.chat_template_kwargs",
	"ignore_eos": "sweep.ignore_eos", "cache_salt": "sweep.cache_mode",
	"timings_per_token": "", // asked of llama.cpp, for its own timings
}
