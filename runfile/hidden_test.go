package runfile

import (
	"fmt"
	"strings"
	"testing"
)

// TestNoHiddenProblems: a value the decoder refused hides only the
// problems that read it. A problem about a whole object, an array's
// length or power past one GPU read less than their field's whole; and
// twenty follow-ons must not crowd out a real problem past them. Each
// case is a real problem beside an unrelated undecoded value (found by
// mutating a full run field by field).
func TestNoHiddenProblems(t *testing.T) {
	cell := func(ctx, conc int, extra string) string {
		return fmt.Sprintf(`{"context_tokens": %d, "concurrency": %d, "status": "valid", "total_tok_s": 10%s}`, ctx, conc, extra)
	}
	var many []string
	ctxs := []string{}
	for i := 1; i <= 21; i++ {
		ctxs = append(ctxs, fmt.Sprint(i*1024))
		extra := ""
		if i == 21 {
			extra = `, "avg_active": -1`
		}
		many = append(many, cell(i*1024, 2, extra))
	}
	for _, tt := range []struct {
		name, doc string
		want      []string
	}{
		{"a repeat's cell, beside another field of the repeat",
			strings.Replace(minimal, `"total_tok_s": 10}`, `"total_tok_s": 10, "repeats": [
      {"context_tokens": 8192, "concurrency": 2, "status": "valid", "total_tok_s": 10, "ttft_ms": {"p50": "5"}}]}`, 1),
			[]string{"decode[0].repeats[0]: is 8K × 2, not the cell's 8K × 1", "decode[0].repeats[0].ttft_ms.p50: want a number"}},
		{"too many repeats, beside a field inside one",
			strings.Replace(minimal, `"total_tok_s": 10}`, `"total_tok_s": 10, "repeats": [
      {"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 10},
      {"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 10, "attempts": "1"}]}`, 1),
			[]string{"decode[0].repeats: 2 measurements, but sweep.repeats is 0", "decode[0].repeats[1].attempts: want a whole number"}},
		{"an interval upside down, beside its level",
			strings.Replace(minimal, `"total_tok_s": 10}`, `"total_tok_s": 10, "interval": {"low": 12, "high": 8, "level": "0.95"}}`, 1),
			[]string{"decode[0].interval: low 12 is above high 8", "decode[0].interval.level: want a number"}},
		{"per-second counts past the window, beside one count",
			strings.Replace(minimal, `"total_tok_s": 10}`, `"total_tok_s": 10, "window_seconds": 2, "per_second_tokens": [10, 10, 10, 10, "10"]}`, 1),
			[]string{"decode[0].per_second_tokens: 5 seconds of counts, but the window is 2 s", "decode[0].per_second_tokens[4]: want a whole number"}},
		{"one GPU past its power, beside gpu_count",
			strings.Replace(strings.Replace(minimal, `"hardware": {}`, `"hardware": {"gpu_count": "1"}`, 1), `"total_tok_s": 10}`,
				`"total_tok_s": 10, "power": {"energy_joules": 0, "mean_power_w": 100, "gpus": [{"index": 0, "samples": 1, "peak_power_w": 9000}]}}`, 1),
			[]string{"hardware.gpu_count: want a whole number", "decode[0].power.gpus[0].peak_power_w: 9000 W is more than 1 GPU"}},
		{"mean power past 1 GPU, beside window_seconds",
			strings.Replace(minimal, `"total_tok_s": 10}`,
				`"total_tok_s": 10, "window_seconds": "30", "power": {"energy_joules": 0, "mean_power_w": 9000, "gpus": []}}`, 1),
			[]string{"decode[0].window_seconds: want a number", "decode[0].power.mean_power_w: 9000 W is more than 1 GPU"}},
		{"a window under a millisecond, beside status",
			strings.Replace(minimal, `"status": "valid", "total_tok_s": 10}`, `"status": 3, "total_tok_s": 10, "window_seconds": 0}`, 1),
			[]string{"decode[0].status: want a string", "decode[0].window_seconds: a measured cell's window must be at least"}},
		{"a real problem past 20 follow-ons",
			strings.Replace(strings.Replace(minimal, `"contexts": [8192], "concurrency": [1, 2]`, `"contexts": [`+strings.Join(ctxs, ", ")+`], "concurrency": [1, "2"]`, 1),
				cell(8192, 1, ""), strings.Join(many, ",\n    "), 1),
			[]string{"sweep.concurrency[1]: want a whole number", "decode[20].avg_active: must not be negative"}},
		{"no cell twice when the first one's concurrency is undecoded",
			strings.Replace(minimal, cell(8192, 1, ""), `{"context_tokens": 8192, "concurrency": "1", "status": "valid", "total_tok_s": 10},
    `+cell(8192, 0, ""), 1),
			[]string{"decode[0].concurrency: want a whole number", "decode[1].concurrency: must be at least 1, got 0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("f.json", []byte(tt.doc))
			got := ""
			if err != nil {
				got = err.Error()
			}
			lines := strings.Split(got, "\n")
			ok := len(lines) == len(tt.want)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					ok = false
				}
			}
			if !ok {
				t.Errorf("got:\n%s\nwant (each):\n%s", got, strings.Join(tt.want, "\n"))
			}
		})
	}
}
