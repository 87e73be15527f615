package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

const faultBody = `"stream":true,"max_tokens":30,"ignore_eos":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`

func TestHTTPStatusFaults(t *testing.T) {
	s, url := startSim(t, fastProfile())
	for _, status := range []int{500, 503, 429} {
		s.SetFaults(Faults{Every: 1, HTTPStatus: status, RetryAfterSeconds: 7})
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(5, faultBody)))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != status || body.Error.Code != status || resp.Header.Get("Retry-After") != "7" {
			t.Errorf("fault %d: status %d, body code %d, Retry-After %q", status, resp.StatusCode, body.Error.Code, resp.Header.Get("Retry-After"))
		}
	}
}

// TestFaultEvery: a fault set for every third request hits only those.
func TestFaultEvery(t *testing.T) {
	s, url := startSim(t, fastProfile())
	s.SetFaults(Faults{Every: 3, HTTPStatus: 503})
	var got []int
	for range 6 {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(5, `"max_tokens":2`)))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got = append(got, resp.StatusCode)
	}
	want := []int{200, 200, 503, 200, 200, 503}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	}
}

// lastUsage is the completion tokens the stream's last usage reported.
func lastUsage(t *testing.T, events []event) int {
	n := 0
	for _, e := range events {
		if e.comment || e.data == "[DONE]" {
			continue
		}
		var c chunk
		if json.Unmarshal([]byte(e.data), &c) == nil && c.Usage != nil {
			n = c.Usage.CompletionTokens
		}
	}
	return n
}

func TestDropConnection(t *testing.T) {
	s, url := startSim(t, fastProfile())
	s.SetFaults(Faults{Every: 1, DropAfterTokens: 10})
	events, err := streamChat(t, url, chatBody(5, faultBody))
	if err == nil {
		t.Error("a dropped connection read as a clean end")
	}
	if n := lastUsage(t, events); n != 10 {
		t.Errorf("usage reached %d tokens before the drop, want 10", n)
	}
	for _, e := range events {
		if e.data == "[DONE]" {
			t.Error("a dropped stream sent [DONE]")
		}
	}
	if f := s.Trace()[0].Fault; f != "dropped connection" {
		t.Errorf("trace fault %q", f)
	}
}

// TestStall: the stream stops for the stall's 300 ms, on the sim's own
// clock: a gap of that, not of what the machine's scheduling adds.
func TestStall(t *testing.T) { synctest.Test(t, testStall) }

func testStall(t *testing.T) {
	s, url := startMemSim(t, fastProfile())
	s.SetFaults(Faults{Every: 1, StallAfterTokens: 5, StallSeconds: 0.3})
	events, err := streamChat(t, url, chatBody(5, faultBody))
	if err != nil {
		t.Fatal(err)
	}
	var longest time.Duration
	for i := 1; i < len(events); i++ {
		longest = max(longest, events[i].at.Sub(events[i-1].at))
	}
	if longest < 300*time.Millisecond || longest > 305*time.Millisecond { // the stall, and at most the step it ends in
		t.Errorf("longest gap %v, want a 300 ms stall", longest)
	}
	if n := lastUsage(t, events); n != 30 {
		t.Errorf("a stalled stream ended at %d tokens, want all 30", n)
	}
}

func TestMalformedChunk(t *testing.T) {
	s, url := startSim(t, fastProfile())
	s.SetFaults(Faults{Every: 1, MalformedAfterTokens: 4})
	events, err := streamChat(t, url, chatBody(5, faultBody))
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, e := range events {
		if !e.comment && e.data != "[DONE]" && !json.Valid([]byte(e.data)) {
			bad++
		}
	}
	if bad != 1 || lastUsage(t, events) != 30 {
		t.Errorf("%d malformed chunks (want 1), usage %d (want 30)", bad, lastUsage(t, events))
	}
}

func TestErrorEvent(t *testing.T) {
	s, url := startSim(t, fastProfile())
	s.SetFaults(Faults{Every: 1, ErrorEventAfterTokens: 6})
	events, err := streamChat(t, url, chatBody(5, faultBody))
	if err != nil {
		t.Fatal(err)
	}
	n := len(events)
	if n < 2 || events[n-1].data != "[DONE]" {
		t.Fatalf("stream did not end with [DONE] after the error: %v", events)
	}
	c := decodeChunk(t, events[n-2].data)
	if c.Error == nil || !strings.Contains(c.Error.Message, "engine core died") {
		t.Errorf("the event before [DONE] is not vLLM's error event: %s", events[n-2].data)
	}
	if lastUsage(t, events) != 6 {
		t.Errorf("usage %d before the error, want 6", lastUsage(t, events))
	}
	for _, e := range events {
		if k := kind(t, e.data); k == "finish" || k == "usage" {
			t.Errorf("a failed stream sent a %s chunk", k)
		}
	}
}

func TestTruncatedPrompt(t *testing.T) {
	s, url := startSim(t, fastProfile())
	s.SetFaults(Faults{Every: 1, TruncatePromptTo: 64})
	events, err := streamChat(t, url, chatBody(500, faultBody))
	if err != nil {
		t.Fatal(err)
	}
	var prompt int
	for _, e := range events {
		if !e.comment && e.data != "[DONE]" {
			if c := decodeChunk(t, e.data); c.Usage != nil {
				prompt = c.Usage.PromptTokens
			}
		}
	}
	if prompt != 64 || s.Trace()[0].PromptTokens != 64 {
		t.Errorf("usage reports %d prompt tokens for a 503-token prompt cut to 64", prompt)
	}
}
