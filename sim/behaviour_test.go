package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestQueueing: with room for 4 streams, 8 requests run 4 and queue 4, and
// /metrics says so once all 8 have arrived; the queued ones are traced as
// having waited.
func TestQueueing(t *testing.T) { synctest.Test(t, testQueueing) }

func testQueueing(t *testing.T) {
	p := fastProfile()
	p.KV.MaxRunning = 4
	s, url := startMemSim(t, p)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp := post(t, context.Background(), url, chatBody(20, `"stream":true,"max_tokens":400,"ignore_eos":true`))
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	// The engine admits arrivals at its steps (2 ms); the clock is the
	// bubble's, so 50 ms is 25 steps however busy the machine, and the
	// first request finishes only after 400.
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		running, waiting := getMetric(t, url, "vllm:num_requests_running"), getMetric(t, url, "vllm:num_requests_waiting")
		if running == 4 && waiting == 4 {
			break
		}
		if time.Since(start) > 50*time.Millisecond {
			t.Fatalf("running %v, waiting %v after %v; want 4 and 4", running, waiting, time.Since(start))
		}
	}
	wg.Wait()
	waited := 0
	for _, rt := range s.Trace() {
		if rt.Waited {
			waited++
		}
		if rt.OutputTokens != 400 {
			t.Errorf("%s produced %d tokens, want 400", rt.ID, rt.OutputTokens)
		}
	}
	if waited != 4 {
		t.Errorf("%d requests waited, want 4", waited)
	}
}

// TestSpeculation: with a drafter, chunks carry several tokens, continuous
// usage counts every one, and the trace agrees chunk by chunk.
func TestSpeculation(t *testing.T) {
	p := fastProfile()
	p.Speculative = SpeculativeProfile{DraftTokens: 3, Acceptance: 0.8}
	s, url := startSim(t, p)
	events, err := streamChat(t, url, chatBody(10, `"stream":true,"max_tokens":300,"ignore_eos":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var perChunk []int
	prev, multi := 0, 0
	for _, e := range events {
		if e.comment || e.data == "[DONE]" {
			continue
		}
		c := decodeChunk(t, e.data)
		if len(c.Choices) == 0 || c.Choices[0].Delta.Role != nil {
			continue
		}
		n := c.Usage.CompletionTokens - prev
		prev = c.Usage.CompletionTokens
		words := len(strings.Fields(*c.Choices[0].Delta.Content))
		if words != n {
			t.Errorf("a chunk of %d words reports %d tokens", words, n)
		}
		if n > 1 {
			multi++
		}
		perChunk = append(perChunk, n)
	}
	if prev != 300 {
		t.Errorf("continuous usage ends at %d, want 300", prev)
	}
	if multi == 0 {
		t.Error("no chunk carried more than one token")
	}
	trace := s.Trace()[0]
	if len(trace.Chunks) != len(perChunk) {
		t.Fatalf("trace has %d chunks, stream %d", len(trace.Chunks), len(perChunk))
	}
	for i, c := range trace.Chunks {
		if c.Tokens != perChunk[i] {
			t.Errorf("chunk %d: trace %d tokens, usage %d", i, c.Tokens, perChunk[i])
		}
	}
	drafts := getMetric(t, url, "vllm:spec_decode_num_drafts_total")
	accepted := getMetric(t, url, "vllm:spec_decode_num_accepted_tokens_total")
	// The first token comes from prefill; every other one from a draft step.
	if int(drafts+accepted) < 299 || accepted == 0 {
		t.Errorf("drafts %v + accepted %v do not account for 299 decoded tokens", drafts, accepted)
	}
}

func TestTokenizeCountsLikeTheServer(t *testing.T) {
	_, url := startSim(t, fastProfile())
	body := chatBody(137, "")
	resp, err := http.Post(url+"/tokenize", "application/json", strings.NewReader(strings.TrimSuffix(body, "}")+`,"add_generation_prompt":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Count  int   `json:"count"`
		Tokens []int `json:"tokens"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	events, _ := streamChat(t, url, strings.TrimSuffix(body, "}")+`,"stream":true,"max_tokens":2,"stream_options":{"include_usage":true}}`)
	usage := decodeChunk(t, events[len(events)-2].data).Usage
	if tok.Count != 140 || len(tok.Tokens) != 140 || usage.PromptTokens != 140 {
		t.Errorf("tokenize count %d (%d ids), completion prompt_tokens %d; want 140 each", tok.Count, len(tok.Tokens), usage.PromptTokens)
	}
	resp, _ = http.Post(url+"/tokenize", "application/json", strings.NewReader(`{"model":"sim","prompt":"one two  three\nfour"}`))
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if tok.Count != 4 {
		t.Errorf("prompt form counted %d, want 4", tok.Count)
	}
}

// TestPrefixCache: a prompt seen before prefills only its new tail, unless
// its cache salt differs; its TTFTs are the sim's own clock's.
func TestPrefixCache(t *testing.T) { synctest.Test(t, testPrefixCache) }

func testPrefixCache(t *testing.T) {
	p := fastProfile()
	p.Prefill = PrefillProfile{PeakTokS: 200000, HalfContext: 1e6}
	s, url := startMemSim(t, p)
	run := func(extra string) RequestTrace {
		streamChat(t, url, chatBody(20000, `"stream":true,"max_tokens":1`+extra))
		tr := s.Trace()
		return tr[len(tr)-1]
	}
	cold := run("")
	warm := run("")
	salted := run(`,"cache_salt":"other"`)
	if cold.CachedTokens != 0 || salted.CachedTokens != 0 {
		t.Errorf("cold %d and salted %d cached tokens, want 0", cold.CachedTokens, salted.CachedTokens)
	}
	if warm.CachedTokens < 20000-16 {
		t.Errorf("warm request reused %d tokens, want nearly all of %d", warm.CachedTokens, warm.PromptTokens)
	}
	coldTTFT, warmTTFT := cold.FirstToken.Sub(cold.Arrival), warm.FirstToken.Sub(warm.Arrival)
	if coldTTFT < 100*time.Millisecond || coldTTFT > 105*time.Millisecond { // 20,000 tokens at 200,000 tok/s, and the step it ends in
		t.Errorf("cold TTFT %v, want the 100 ms its prefill takes", coldTTFT)
	}
	if warmTTFT*10 > coldTTFT {
		t.Errorf("warm TTFT %v is not well below cold %v (100 ms of prefill)", warmTTFT, coldTTFT)
	}
	if hits := getMetric(t, url, "vllm:prefix_cache_hits_total"); int(hits) != warm.CachedTokens {
		t.Errorf("prefix cache hits %v, want %d", hits, warm.CachedTokens)
	}
}

func TestLoops(t *testing.T) {
	p := fastProfile()
	p.Loop = LoopProfile{AboveContext: 100, AfterTokens: 10, Phrase: "round and round"}
	s, url := startSim(t, p)
	text := func(events []event) string {
		var b strings.Builder
		for _, e := range events {
			if e.comment || e.data == "[DONE]" {
				continue
			}
			if c := decodeChunk(t, e.data); len(c.Choices) > 0 && c.Choices[0].Delta.Content != nil {
				b.WriteString(*c.Choices[0].Delta.Content)
			}
		}
		return b.String()
	}
	short, _ := streamChat(t, url, chatBody(50, `"stream":true,"max_tokens":40,"ignore_eos":true`))
	long, _ := streamChat(t, url, chatBody(150, `"stream":true,"max_tokens":40,"ignore_eos":true`))
	if strings.Contains(text(short), "round and round") {
		t.Error("a short prompt looped")
	}
	words := strings.Fields(text(long))
	if got := strings.Join(words[10:16], " "); got != "round and round round and round" {
		t.Errorf("after 10 tokens the long prompt's output is %q", got)
	}
	tr := s.Trace()
	if tr[0].Looped || !tr[1].Looped || tr[1].LoopStart != 10 {
		t.Errorf("trace loops: %v %v (start %d)", tr[0].Looped, tr[1].Looped, tr[1].LoopStart)
	}
}

func TestSeedGivesSameText(t *testing.T) {
	_, url := startSim(t, fastProfile())
	get := func(seed string) string {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(5, `"max_tokens":20,"ignore_eos":true,"seed":`+seed)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		json.NewDecoder(resp.Body).Decode(&r)
		return r.Choices[0].Message.Content
	}
	a, b, c := get("7"), get("7"), get("8")
	if a != b || a == c || len(strings.Fields(a)) != 20 {
		t.Errorf("seed 7 gave %q and %q, seed 8 %q", a, b, c)
	}
}

func TestNaturalEndAndMinTokens(t *testing.T) {
	p := fastProfile()
	p.NaturalLength = 5
	_, url := startSim(t, p)
	finish := func(extra string) (string, int) {
		events, _ := streamChat(t, url, chatBody(5, `"stream":true,"max_tokens":20,"stream_options":{"include_usage":true}`+extra))
		var reason string
		for _, e := range events {
			if e.data == "[DONE]" || e.comment {
				continue
			}
			c := decodeChunk(t, e.data)
			if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
				reason = *c.Choices[0].FinishReason
			}
			if len(c.Choices) == 0 {
				return reason, c.Usage.CompletionTokens
			}
		}
		return reason, -1
	}
	for _, tt := range []struct {
		extra  string
		reason string
		tokens int
	}{
		{"", "stop", 5},
		{`,"min_tokens":8`, "stop", 8},
		{`,"ignore_eos":true`, "length", 20},
		{`,"max_completion_tokens":3,"ignore_eos":true`, "length", 3},
	} {
		if r, n := finish(tt.extra); r != tt.reason || n != tt.tokens {
			t.Errorf("%s: finish %q after %d tokens, want %q after %d", tt.extra, r, n, tt.reason, tt.tokens)
		}
	}
}

// TestKeepAliveWhileWaiting: a stream queued behind another (200 ms of
// steps) gets a keep-alive comment every 50 ms before its first chunk.
func TestKeepAliveWhileWaiting(t *testing.T) { synctest.Test(t, testKeepAliveWhileWaiting) }

func testKeepAliveWhileWaiting(t *testing.T) {
	p := fastProfile()
	p.KV.MaxRunning = 1
	p.KeepAliveSeconds = 0.05
	_, url := startMemSim(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := post(t, ctx, url, chatBody(5, `"stream":true,"max_tokens":100,"ignore_eos":true`))
	defer first.Body.Close()
	events, _ := streamChat(t, url, chatBody(5, `"stream":true,"max_tokens":3,"ignore_eos":true`))
	if !events[0].comment {
		t.Error("a waiting stream got no keep-alive before its first chunk")
	}
}

// TestDecodeSpeedFollowsProfile: one stream's tokens are scheduled and
// written at the rate the profile's step time gives, within 2 %, on the
// sim's own clock (BenchmarkSustain measures it on the machine's).
func TestDecodeSpeedFollowsProfile(t *testing.T) { synctest.Test(t, testDecodeSpeedFollowsProfile) }

func testDecodeSpeedFollowsProfile(t *testing.T) {
	p := fastProfile()
	p.Decode = DecodeProfile{BaseMs: 10, MaxBatchedTokens: 8192}
	s, url := startMemSim(t, p)
	streamChat(t, url, chatBody(5, `"stream":true,"max_tokens":101,"ignore_eos":true`))
	tr := s.Trace()[0]
	first, last := tr.Chunks[0], tr.Chunks[len(tr.Chunks)-1]
	rate := 100 / last.Scheduled.Sub(first.Scheduled).Seconds()
	if rate < 98 || rate > 102 {
		t.Errorf("scheduled decode rate %.1f tok/s, profile says 100", rate)
	}
	written := 100 / last.At.Sub(first.At).Seconds()
	if written < 98 || written > 102 {
		t.Errorf("written decode rate %.1f tok/s, profile says 100", written)
	}
}

func TestNonStreaming(t *testing.T) {
	p := fastProfile()
	p.ReasoningTokens = 2
	_, url := startSim(t, p)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(5, `"max_tokens":6,"ignore_eos":true`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Object  string
		Choices []struct {
			Message      struct{ Content, Reasoning string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	m := r.Choices[0].Message
	if r.Object != "chat.completion" || len(strings.Fields(m.Reasoning)) != 2 || len(strings.Fields(m.Content)) != 4 ||
		r.Choices[0].FinishReason != "length" || r.Usage.CompletionTokens != 6 {
		t.Errorf("got %+v", r)
	}
}

// TestClientGoneFreesTheRequest: a client that leaves mid-stream frees its
// slot, so the next request runs; 5 s on the sim's clock is 2,500 steps.
func TestClientGoneFreesTheRequest(t *testing.T) { synctest.Test(t, testClientGoneFreesTheRequest) }

func testClientGoneFreesTheRequest(t *testing.T) {
	p := fastProfile()
	p.KV.MaxRunning = 1
	_, url := startMemSim(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, url, chatBody(5, `"stream":true,"max_tokens":100000,"ignore_eos":true`))
	buf := make([]byte, 10)
	resp.Body.Read(buf)
	cancel()
	resp.Body.Close()
	done := make(chan error, 1)
	go func() {
		_, err := streamChat(t, url, chatBody(5, `"stream":true,"max_tokens":3,"ignore_eos":true`))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, io.EOF) {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the slot of a client that left was never freed")
	}
}

// TestSaysWhenItCannotKeepUp gives the engine steps of 10 ns, which
// no machine schedules: it must report that it fell behind, not pretend.
func TestSaysWhenItCannotKeepUp(t *testing.T) {
	p := fastProfile()
	p.Decode = DecodeProfile{BaseMs: 0.00001, MaxBatchedTokens: 8192}
	s, url := startSim(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp := post(t, ctx, url, chatBody(5, `"stream":true,"max_tokens":1000000,"ignore_eos":true`))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if tm := s.Timing(); tm.KeepingUp() || tm.Lost == 0 {
		t.Errorf("timing %+v claims to keep up with 10 ns steps", tm)
	}
}
