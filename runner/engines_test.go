package runner

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/sim"
)

// TestEngines sweeps a small matrix against each dialect of the sim: each
// path finds the engine, makes exact prompts its own way, counts tokens
// from the signal the engine offers, and reads its capacity.
func TestEngines(t *testing.T) {
	for _, tt := range []struct {
		flavour, engine string
		source          matrixgen.TokenSource
		tokenizer       string
		kvSource        string
		// clock is where the server's own prompt time is read ("": none).
		clock string
	}{
		{sim.FlavourVLLM, "vllm", matrixgen.TokensContinuousUsage, "/tokenize (chat form", "kv_cache_size_tokens", "vllm:request_prefill_time_seconds"},
		{sim.FlavourSGLang, "sglang", matrixgen.TokensContinuousUsage, "/v1/tokenize plus the chat template's 3 tokens", "/server_info",
			`sglang:per_stage_req_latency_seconds{stage="prefill_forward"}`},
		{sim.FlavourLlamaCpp, "llama.cpp", matrixgen.TokensTimingsPerToken, "/apply-template, then /tokenize", "/props: 8 slots × n_ctx", "llama.cpp timings.prompt_ms"},
		// A bare endpoint: completed streams are counted from their final
		// usage, those cut at the window's end by chunks, labelled as such.
		{sim.FlavourOpenAI, "openai-compatible", matrixgen.TokensChunks, "calibration on usage.prompt_tokens", "", ""},
		// Ollama's native stream: a line per token, then its own eval_count.
		{sim.FlavourOllama, "ollama", matrixgen.TokensChunks, "calibration on usage.prompt_tokens", "num_ctx", "Ollama prompt_eval_duration"},
		// TGI: no per-chunk count, a final usage; no KV capacity in TGI 3's
		// /info.
		{sim.FlavourTGI, "tgi", matrixgen.TokensChunks, "/chat_tokenize (chat form", "", `tgi_batch_inference_duration{method="prefill"}`},
	} {
		t.Run(tt.flavour, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := testProfile()
				p.Flavour = tt.flavour
				p.KV.MaxRunning = 8
				p.KV.CapacityTokens = 8 << 20
				s, url, dial := startMemSim(t, p)
				run, _ := sweepWith(t, testSettings(url, []string{"1K", "2K"}, []int{1, 2}, time.Second), dial)
				pr := run.Probe
				if pr.Engine != tt.engine || !strings.Contains(pr.Tokenizer, tt.tokenizer) || !strings.Contains(pr.KVSource, tt.kvSource) {
					t.Errorf("probe: engine %q, tokenizer %q, kv %q", pr.Engine, pr.Tokenizer, pr.KVSource)
				}
				for _, row := range run.Prefill {
					label := matrixgen.ContextLabel(row.ContextTokens)
					if row.Status != matrixgen.StatusValid || row.PromptTokens != row.ContextTokens {
						t.Errorf("prefill %s: %s, %d prompt tokens (%s)", label, row.Status, row.PromptTokens, row.Reason)
					}
					if row.ServerClock != tt.clock || (tt.clock == "") != (row.ServerPromptMs == nil) {
						t.Errorf("prefill %s: the server's clock %q (%s ms), want %q", label, row.ServerClock, figure(row.ServerPromptMs), tt.clock)
						continue
					}
					// Each request's prompt time as the sim kept it, to the
					// server's rounding: the measured requests are the last
					// ones of the context's length.
					truth := prefillTraces(s.Trace(), row.ContextTokens)
					if len(truth) < len(row.Requests) {
						t.Fatalf("prefill %s: %d requests measured, %d in the sim's trace", label, len(row.Requests), len(truth))
					}
					truth = truth[len(truth)-len(row.Requests):]
					for i, req := range row.Requests {
						want := float64(truth[i].PrefillEnd.Sub(truth[i].Admitted)) / float64(time.Millisecond)
						if tt.clock != "" && (req.ServerPromptMs == nil || !within(*req.ServerPromptMs, want, 1e-4)) {
							t.Errorf("prefill %s, request %d: the server's prompt time %s ms, want %.3f", label, i, figure(req.ServerPromptMs), want)
						}
					}
				}
				trace := s.Trace()
				for _, d := range run.Decode {
					if d.Status != matrixgen.StatusValid || d.TokenSource != tt.source {
						t.Errorf("%s × %d: %s (%s), source %q", matrixgen.ContextLabel(d.ContextTokens), d.Concurrency, d.Status, d.Reason, d.TokenSource)
						continue
					}
					end := d.WindowStart.Add(time.Duration(*d.WindowSeconds * float64(time.Second)))
					truth := sim.WindowOf(trace, d.WindowStart, end)
					if *d.OutputTokens != truth.OutputTokens { // virtual time: exactly
						t.Errorf("%s × %d: %d tokens, the sim wrote %d", matrixgen.ContextLabel(d.ContextTokens), d.Concurrency, *d.OutputTokens, truth.OutputTokens)
					}
				}
			})
		})
	}
}

// TestEnginesOverRealSockets sweeps one cell of each dialect over loopback
// TCP in real time: what virtual time cannot show (a real network stack,
// real connection reuse) still works for every engine. Its figures are
// checked by TestEngines, exactly.
func TestEnginesOverRealSockets(t *testing.T) {
	for _, flavour := range sim.Flavours {
		t.Run(flavour, func(t *testing.T) {
			p := testProfile()
			p.Flavour = flavour
			p.KV.MaxRunning = 8
			p.KV.CapacityTokens = 8 << 20
			p.Prefill.RequestOverheadMs = 20
			_, url := startSim(t, p)
			run, _ := sweep(t, testSettings(url, []string{"1K"}, []int{2}, 500*time.Millisecond))
			if p := run.Prefill[0]; p.Status != matrixgen.StatusValid {
				t.Errorf("prefill 1K: %s (%s)", p.Status, p.Reason)
			}
			if d := run.Decode[0]; d.Status != matrixgen.StatusValid || d.OutputTokens == nil || *d.OutputTokens == 0 {
				t.Errorf("1K × 2: %s (%s)", d.Status, d.Reason)
			}
		})
	}
}

// TestUsageCalibration builds an exact prompt with only usage.prompt_tokens
// to go by, as for a server without any tokenize endpoint.
func TestUsageCalibration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		c := newClient(url, "", 1, dial)
		c.model = "sim"
		text, got, exact, err := exactPrompt(context.Background(), usageTokenizer{c}, 3000, newHeads(1, 3000), 7)
		if err != nil {
			t.Fatal(err)
		}
		if exact {
			t.Error("a prompt built by sending its twin is not counted exactly")
		}
		n, _ := vllmTokenizer{c}.count(context.Background(), text)
		if got != 3000 || n != 3000 {
			t.Errorf("calibrated to %d tokens, the server counts %d; want 3000", got, n)
		}
	})
}

// TestOllamaProbe: an Ollama server is known by /api/version, and its
// per-request context (the point past which it cuts prompts silently) by
// the model's num_ctx in /api/show, or by /api/ps in versions that list it.
func TestOllamaProbe(t *testing.T) {
	p := testProfile()
	p.Flavour = sim.FlavourOllama
	p.MaxModelLen = 8192
	p.Version = "0.6.5"
	_, url := startSim(t, p)
	c := newClient(url, "", 1, nil)
	pr, err := c.probe(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Engine != "ollama" || pr.EngineVersion != "0.6.5" || pr.MaxModelLen != 8192 || !strings.Contains(pr.KVSource, "num_ctx 8192") ||
		pr.Metrics || !pr.FinalUsage {
		t.Errorf("probe %+v", pr)
	}

	// A newer Ollama without num_ctx in the model's parameters.
	newer := startSimWith(t, p, func(mux *http.ServeMux) {
		mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"parameters":""}`)) })
		mux.HandleFunc("GET /api/ps", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"models":[{"name":"sim","model":"sim","context_length":4096}]}`))
		})
	})
	if pr, err = newClient(newer, "", 1, nil).probe(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if pr.MaxModelLen != 4096 || !strings.Contains(pr.KVSource, "OLLAMA_NUM_PARALLEL") {
		t.Errorf("probe %+v", pr)
	}
}

// TestLlamaTimingsCrossCheck: llama-server's own timings are recorded beside
// the client's per-request rate, and the two agree.
func TestLlamaTimingsCrossCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Flavour = sim.FlavourLlamaCpp
		p.KV.MaxRunning = 4
		_, url, dial := startMemSim(t, p)
		s := testSettings(url, []string{"1K"}, []int{2}, 2*time.Second)
		s.Sweep.MaxOutput = 40
		run, _ := sweepWith(t, s, dial)
		d := run.Decode[0]
		if d.ServerPerRequestTokS == nil || d.PerRequestTokS == nil {
			t.Fatalf("no server timings recorded: %+v", d)
		}
		if !within(*d.ServerPerRequestTokS, *d.PerRequestTokS, 0.15) {
			t.Errorf("the server timed %.1f tok/s per request, the client %.1f", *d.ServerPerRequestTokS, *d.PerRequestTokS)
		}
	})
}

// prefillTraces are the sim's records of requests as long as a prefill
// request at context n, in the order they arrived.
func prefillTraces(trace []sim.RequestTrace, n int) []sim.RequestTrace {
	var out []sim.RequestTrace
	for _, rt := range trace {
		if rt.PromptTokens > n-headWords && rt.PromptTokens <= n {
			out = append(out, rt)
		}
	}
	return out
}
