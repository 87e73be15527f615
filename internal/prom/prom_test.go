package prom

import (
	"os"
	"strings"
	"testing"
)

func TestParsePromVLLM(t *testing.T) {
	f, err := os.Open("../../sim/testdata/vllm/metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := Parse(f)
	if v, _ := Sum(s, "vllm:num_requests_running"); v != 16 {
		t.Errorf("running %v, want 16", v)
	}
	if v, _ := Sum(s, "vllm:prompt_tokens_total"); v != 12845056 {
		t.Errorf("prompt tokens %v", v)
	}
	if v, _ := Label(s, "vllm:cache_config_info", "kv_cache_size_tokens"); v != "6123520" {
		t.Errorf("kv_cache_size_tokens %q", v)
	}
	if v, _ := Sum(s, "vllm:time_to_first_token_seconds_bucket"); v != 104 {
		t.Errorf("bucket sum %v (labels with le=\"+Inf\" must parse)", v)
	}
}

func TestParsePromLlamaCpp(t *testing.T) {
	data, err := os.ReadFile("../../sim/testdata/llama-server/metrics-8-requests-4-slots.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := Parse(strings.NewReader(string(data)))
	if v, _ := Sum(s, "llamacpp:requests_deferred"); v != 4 {
		t.Errorf("requests_deferred %v, want 4", v)
	}
}

func TestParsePromOddLines(t *testing.T) {
	text := "# HELP x\nx 1\ny{a=\"q\\\"uote\",b=\"\"} 2 1700000000\nbroken{a=\"x\" 3\nz{} NaN\n\nw{a=\"1\"}notanumber\n"
	s := Parse(strings.NewReader(text))
	if len(s) != 3 {
		t.Fatalf("parsed %d samples, want x, y and z: %+v", len(s), s)
	}
	if s[1].Labels["a"] != `q"uote` {
		t.Errorf("escaped label %q", s[1].Labels["a"])
	}
}

// FuzzParseProm: any text, no panic.
func FuzzParseProm(f *testing.F) {
	f.Add("vllm:x{engine=\"0\"} 1.5\n")
	f.Add("a{b=\"\\\\\"} 2\n# c\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range Parse(strings.NewReader(text)) {
			if s.Name == "" {
				t.Fatalf("a sample without a name from %q", text)
			}
		}
	})
}

// TestPromKeepsBoundedSamples: a sample costs far more than its line (16 MB
// of `a{b=""} 1` lines took 600 MB); past MaxSamples the rest of an
// answer is not read into samples.
func TestPromKeepsBoundedSamples(t *testing.T) {
	const maxMetrics = 4 << 20 // as much as the runner reads of one answer
	for _, line := range []string{"a 1\n", "a{} 1\n", `a{b=""} 1` + "\n", `vllm:x{a="1",b="2",c="3",d="4"} 5` + "\n"} {
		text := strings.Repeat(line, maxMetrics/len(line))
		if got := len(Parse(strings.NewReader(text))); got != MaxSamples {
			t.Errorf("%q × %d: %d samples kept, want %d", line, maxMetrics/len(line), got, MaxSamples)
		}
	}
}
