package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/sim"
)

func TestServeSim(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &bytes.Buffer{}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveSim(ctx, ln, sim.DefaultProfile(), 10, pw); pw.Close() }()
	copied := make(chan struct{})
	go func() { io.Copy(out, pr); close(copied) }()
	// The listener is open before serveSim starts, so the first request
	// waits in its backlog until the sim serves it: no retries, no sleeps.
	url := "http://" + ln.Addr().String()
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"max_model_len":1048576`) {
		t.Errorf("/v1/models: %s", body)
	}
	resp, err = http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"sim","messages":[{"role":"user","content":"hi"}],"max_tokens":3}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("chat: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, _ = http.Get(url + "/sim/trace")
	trace, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(trace), `"output_tokens":3`) {
		t.Errorf("/sim/trace: %s", trace)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-copied
	if !strings.Contains(out.String(), "serving \"sim\" (vllm dialect)") || !strings.Contains(out.String(), "stopped") {
		t.Errorf("output: %q", out.String())
	}
}

func TestSimBadProfile(t *testing.T) {
	code, _, stderr := matrixgenCmd(t, "sim", "-profile", "nope.toml")
	if code != 1 || !strings.Contains(stderr, "nope.toml") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}
