package runfile

import (
	"strconv"
	"strings"
	"testing"
)

// TestValidateRefusesImpossibleRuns: the same problems in a run file are
// errors that name the field and its line.
func TestValidateRefusesImpossibleRuns(t *testing.T) {
	for _, tt := range []struct{ name, from, to, want string }{
		{"1e300 W", `"total_tok_s": 10`, `"total_tok_s": 10, "window_seconds": 2, "power": {"energy_joules": 2e300, "mean_power_w": 1e300, "gpus": []}`,
			"decode[0].power.mean_power_w: 1e+300 W is more than 1 GPU can draw"},
		{"a GPU past 5 kW", `"total_tok_s": 10`, `"total_tok_s": 10, "power": {"energy_joules": 1, "mean_power_w": 1, "gpus": [{"index": 0, "samples": 1, "peak_power_w": 5001}]}`,
			"decode[0].power.gpus[0].peak_power_w: 5001 W"},
		{"idle power past the GPUs", `"hardware": {}`, `"hardware": {"gpu_count": 2, "idle_power_w": 10001}`, "hardware.idle_power_w: 10001 W is more than 2 GPUs can draw"},
		{"a power limit past any board", `"hardware": {}`, `"hardware": {"power_limit_w": 60000}`, "hardware.power_limit_w: 60000 W"},
		{"more tokens than the requests", `"total_tok_s": 10`, `"total_tok_s": 10, "completed": 3, "output_tokens": 4065`,
			"decode[0].output_tokens: 4065 tokens, more than 4 requests of max_tokens 1000 can yield (4064)"},
		{"a rate of more", `"total_tok_s": 10`, `"total_tok_s": 344000, "completed": 0, "window_seconds": 2`, "decode[0].total_tok_s: 344000 tok/s over 2 s"},
		{"a window of 0 s", `"total_tok_s": 10`, `"total_tok_s": 0, "window_seconds": 0`, "decode[0].window_seconds: a measured cell's window must be at least 0.001 s"},
		// What an attack on the edges found validate let through:
		{"no completed count, a rate past any server", `"total_tok_s": 10`, `"total_tok_s": 3.3e9, "output_tokens": 99000000000, "window_seconds": 30`, "decode[0].total_tok_s: 3.3e+09 tok/s is past any server's"},
		{"more completed than tokens", `"total_tok_s": 10`, `"total_tok_s": 10, "completed": 1000000000000, "output_tokens": 300, "window_seconds": 30`, "decode[0].completed: 1000000000000 requests completed in the window, but only 300 tokens"},
		{"ten million GPUs", `"hardware": {}`, `"hardware": {"gpu_count": 10000000}`, "hardware.gpu_count: 10000000 GPUs serve no one model"},
		{"a window of 1e-300 s", `"total_tok_s": 10`, `"total_tok_s": 10, "window_seconds": 1e-300`, "decode[0].window_seconds: a measured cell's window must be at least 0.001 s"},
		{"a per-request rate of 1e300", `"total_tok_s": 10`, `"total_tok_s": 10, "per_request_tok_s": 1e300`, "decode[0].per_request_tok_s: 1e+300 is past any figure"},
		{"a VRAM of 1e300 GB", `"hardware": {}`, `"hardware": {"vram_gb": 1e300}`, "hardware.vram_gb: 1e+300 is past any figure"},
		{"a prefill of 1e300 tok/s", `"decode": [`, `"prefill": [{"context_tokens": 8192, "status": "valid", "prompt_tok_s": 1e300, "ttft_ms": 1e-300}], "decode": [`, "prefill[0].prompt_tok_s: 1e+300 is past any figure"},
		{"a prefill rate its tokens and TTFT deny", `"decode": [`, `"prefill": [{"context_tokens": 8192, "status": "valid", "prompt_tokens": 8192, "prompt_tok_s": 1e9, "ttft_ms": 1778}], "decode": [`, "prefill[0].prompt_tok_s: 1e+09 tok/s is past any server's"},
		// Times that decode but fall past the year 9999 in UTC, where
		// pages and runs.csv show them:
		{"started in the year 10000 in UTC", `"schema": 1`, `"schema": 1, "started_at": "9999-12-31T23:59:59-01:00"`, "started_at: 9999-12-31T23:59:59-01:00 is in the year 10000 in UTC"},
		{"finished in the year 10000 in UTC", `"schema": 1`, `"schema": 1, "finished_at": "9999-12-31T23:30:00-00:45"`, "finished_at: 9999-12-31T23:30:00-00:45 is in the year 10000 in UTC"},
		{"started before the year 0000 in UTC", `"schema": 1`, `"schema": 1, "started_at": "0000-01-01T00:30:00+01:00"`, "started_at: 0000-01-01T00:30:00+01:00 is in the year -1 in UTC"},
		{"a window in the year 10000 in UTC", `"total_tok_s": 10`, `"total_tok_s": 10, "window_start": "9999-12-31T23:59:59-23:59"`, "decode[0].window_start: 9999-12-31T23:59:59-23:59 is in the year 10000 in UTC"},
		// Every per-second count is a sample of compare's test: counts past
		// the window would make a cell look surer than it was measured.
		{"more seconds than the window", `"total_tok_s": 10`, `"total_tok_s": 10, "window_seconds": 2.4, "per_second_tokens": [10, 10, 10, 10]`,
			"decode[0].per_second_tokens: 4 seconds of counts, but the window is 2.4 s: at most 3"},
		// Counts were bounded below only: 2^63-1 tokens in one second passed.
		{"a per-second count past any", `"total_tok_s": 10`, `"total_tok_s": 10, "per_second_tokens": [10, 9223372036854775807]`,
			"decode[0].per_second_tokens[1]: 9223372036854775807 is past any count a benchmark measures (1e+12 at most)"},
		{"a server's count past any", `"total_tok_s": 10`, `"total_tok_s": 10, "server_count": {"server_tokens": 1000000000001, "client_tokens": 10, "source": "usage"}`,
			"decode[0].server_count.server_tokens: 1000000000001 is past any count"},
		{"a prompt past any", `"decode": [`, `"prefill": [{"context_tokens": 8192, "status": "valid", "prompt_tokens": 9000000000000000000}], "decode": [`, "prefill[0].prompt_tokens: 9000000000000000000 is past any count"},
		{"a prefill rate off its own figures", `"decode": [`, `"prefill": [{"context_tokens": 8192, "status": "valid", "prompt_tokens": 8192, "prompt_tok_s": 46010, "ttft_ms": 1778}], "decode": [`, "prefill[0].prompt_tok_s: 46010 tok/s is not its 8192 prompt tokens in 1778 ms"},
		// Figures a person edited by hand that the cell's own figures deny:
		{"a throughput its tokens deny", `"total_tok_s": 10`, `"total_tok_s": 250, "output_tokens": 3449, "window_seconds": 10`,
			"decode[0].total_tok_s: 250 tok/s is not its 3449 tokens in 10 s (344.9 tok/s)"},
		{"a p99 below the p50", `"total_tok_s": 10`, `"total_tok_s": 10, "ttft_ms": {"p50": 500, "p90": 100, "p99": 1}`,
			"decode[0].ttft_ms.p90: 100 is below the p50 of 500: a higher percentile is never lower"},
		{"a p99 below the p50, no p90", `"total_tok_s": 10`, `"total_tok_s": 10, "tbt_ms": {"p50": 50, "p99": 40}`,
			"decode[0].tbt_ms.p99: 40 is below the p50 of 50"},
		// A few kilobytes of lists made a page of a million cells, which
		// took gigabytes to build.
		{"65 × 65 cells", `"sweep": {"contexts": [8192], "concurrency": [1, 2]}`,
			`"sweep": {"contexts": [8192, ` + numbers(9000, 64) + `], "concurrency": [1, 2, ` + numbers(3, 63) + `]}`,
			"sweep: 65 contexts × 65 concurrency levels are 4225 cells; a sweep has at most 4096"},
		{"5000 levels", `"sweep": {"contexts": [8192], "concurrency": [1, 2]}`,
			`"sweep": {"contexts": [8192], "concurrency": [1, 2, ` + numbers(3, 4998) + `]}`,
			"sweep.concurrency: 5000 entries; a sweep has at most 4096"},
	} {
		doc := strings.Replace(minimal, tt.from, tt.to, 1)
		doc = strings.Replace(doc, `"concurrency": [1, 2]}`, `"concurrency": [1, 2], "max_output_tokens": 1000}`, 1)
		_, err := Decode("f.json", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "f.json:") {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// Without a window of its own, a cell's seconds are bounded by the
	// sweep's; on the bound they pass.
	seconds := func(window string, n int) string {
		counts := strings.TrimSuffix(strings.Repeat("10, ", n), ", ")
		doc := strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10`+window+`, "per_second_tokens": [`+counts+`]`, 1)
		return strings.Replace(doc, `"concurrency": [1, 2]}`, `"concurrency": [1, 2], "duration_seconds": 2}`, 1)
	}
	if _, err := Decode("f.json", []byte(seconds("", 4))); err == nil ||
		!strings.Contains(err.Error(), "decode[0].per_second_tokens: 4 seconds of counts, but the cell gives no window_seconds and sweep.duration_seconds is 2: at most 3") {
		t.Errorf("more seconds than the sweep's window: %v", err)
	}
	for _, doc := range []string{seconds("", 3), seconds(`, "window_seconds": 2.4`, 3), seconds(`, "window_seconds": 2.6`, 4)} {
		if _, err := Decode("f.json", []byte(doc)); err != nil {
			t.Errorf("seconds within the window refused: %v", err)
		}
	}
	if _, err := Decode("f.json", []byte(strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "completed": 3, "output_tokens": 4000`, 1))); err != nil {
		t.Errorf("a run without max_output_tokens has no token bound: %v", err)
	}
}

// numbers is n whole numbers from first, one apart, as a JSON list's body.
func numbers(first, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(first + i)
	}
	return strings.Join(out, ", ")
}
