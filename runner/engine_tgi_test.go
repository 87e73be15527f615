package runner

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/sim"
)

// TestTGIBeforeChatTokenize: a TGI older than /chat_tokenize (TGI 2.0 and
// before) still gets exact prompts, counted with /tokenize plus the chat
// template's tokens, and tells its KV capacity in /info's
// max_batch_total_tokens. No real TGI was at hand: the sim speaks TGI 3's
// dialect, and this older one is TGI 3's with /chat_tokenize gone and the
// field added, as those versions' API listed them.
func TestTGIBeforeChatTokenize(t *testing.T) {
	p := testProfile()
	p.Flavour, p.MaxModelLen, p.Version = sim.FlavourTGI, 32768, "2.0.4"
	old := startSimWith(t, p, func(mux *http.ServeMux) {
		mux.HandleFunc("POST /chat_tokenize", http.NotFound)
		mux.HandleFunc("GET /info", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"model_id":"sim","max_input_tokens":32767,"max_total_tokens":32768,"max_batch_total_tokens":500000,"router":"text-generation-router","version":"2.0.4"}`))
		})
	})
	ctx := context.Background()
	c := newClient(old, "", 1, nil)
	probe, err := c.probe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if probe.Engine != "tgi" || probe.EngineVersion != "2.0.4" || probe.MaxModelLen != 32768 ||
		probe.KVCacheTokens != 500000 || probe.KVSource != "/info max_batch_total_tokens" {
		t.Errorf("probe %+v", probe)
	}
	tok := c.tokenizerFor(ctx, probe)
	if !strings.HasPrefix(probe.Tokenizer, "/tokenize plus the chat template's 3 tokens") {
		t.Errorf("tokenizer %q", probe.Tokenizer)
	}
	text, got, exact, err := exactPrompt(ctx, tok, 3000, newHeads(1, 3000), 7)
	if err != nil || got != 3000 || !exact {
		t.Fatalf("exact prompt: %d tokens, exact %v, %v", got, exact, err)
	}
	// The same prompt as TGI 3 counts it, in the chat form.
	_, url := startSim(t, p)
	current := newClient(url, "", 1, nil)
	current.model = "sim"
	if n, err := (tgiChatTokenizer{current}).count(ctx, text); err != nil || n != 3000 {
		t.Errorf("/chat_tokenize counts %d tokens (%v), want 3000", n, err)
	}
}
