package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
)

// coldH200Row is the H200's 8K prefill as a single cold request measured
// it: 5,194 ms to the first token, of which the server's prompt processing
// took 169 ms.
func coldH200Row() matrixgen.Prefill {
	return matrixgen.Prefill{ContextTokens: 8192, Status: matrixgen.StatusValid, PromptTokens: 8192,
		PromptTokS: new(1577.3), TTFTMs: new(5193.7), Completed: new(1),
		ServerPromptTokS: new(48357.0), ServerPromptMs: new(169.4), ServerClock: "llama.cpp timings.prompt_ms"}
}

// warmRow is a row measured as matrixgen measures now: a warm-up, then three
// fresh prompts within the rule.
func warmRow() matrixgen.Prefill {
	return matrixgen.Prefill{ContextTokens: 1024, Status: matrixgen.StatusValid, PromptTokens: 1025,
		PromptTokS: new(14000.0), TTFTMs: new(73.2), Completed: new(3), ColdTTFTMs: new(319.5),
		ServerPromptTokS: new(15000.0), ServerPromptMs: new(68.3), ServerClock: "llama.cpp timings.prompt_ms",
		Requests: []matrixgen.PrefillRequest{
			{PromptTokens: 1025, TTFTMs: 74, PromptTokS: 13851.4},
			{PromptTokens: 1025, TTFTMs: 73.2, PromptTokS: 14000},
			{PromptTokens: 1025, TTFTMs: 71, PromptTokS: 14436.6},
		}}
}

func TestPrefillRowsShowTheServersClockAndTheColdStart(t *testing.T) {
	rows := prefillRows(warmRow())
	if len(rows) != 3 {
		t.Fatalf("%d rows, want the row, the server's own and the cold start", len(rows))
	}
	// The three requests' range, 13,851–14,437, is ±2.1 % of the median,
	// an interval of 75 %, as three requests give.
	if r := rows[0]; r.Total != "14K ±2.1 % (75 %)" || r.TTFT != "73.2 ms" || r.Completed != "3" {
		t.Errorf("the row: %+v", r)
	}
	if r := rows[1]; r.Status != "Server's own" || r.Total != "15K" || r.TTFT != "68.3 ms" || !strings.Contains(r.Class, "sub") {
		t.Errorf("the server's own: %+v", r)
	}
	if r := rows[2]; r.Status != "Cold start" || r.TTFT != "320 ms" || r.Total != dash {
		t.Errorf("the cold start must show its TTFT and never a rate: %+v", r)
	}
	// A row with nothing beside it stays one row, as the sample run's do.
	plain := matrixgen.Prefill{ContextTokens: 8192, Status: matrixgen.StatusValid, PromptTokS: new(4601.0), TTFTMs: new(1778.0), Completed: new(1)}
	if rows := prefillRows(plain); len(rows) != 1 || rows[0].Total != "4,601.0" {
		t.Errorf("a plain row: %+v", rows)
	}
}

func TestPrefillNotServersSpeedIsMarkedAndSaysWhy(t *testing.T) {
	cold := coldH200Row()
	if got := prefillRows(cold)[0].Total; got != "1,577.3"+notServerMark {
		t.Errorf("the cold row's figure %q is not marked", got)
	}
	if label := barLabel(cold); !strings.HasPrefix(label.Formatter, "1,577.3"+notServerMark) {
		t.Errorf("the chart's bar reads %q: unmarked", label.Formatter)
	}
	run := &matrixgen.Run{Prefill: []matrixgen.Prefill{cold, warmRow()}}
	notes := prefillNotes(run)
	if len(notes) != 2 {
		t.Fatalf("notes %q", notes)
	}
	for _, want := range []string{"8K prefill", "not the server's prefill speed", "its first token came 5,194 ms after the request; its prompt processing took 169 ms", "llama.cpp timings.prompt_ms"} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("the cold row's note %q lacks %q", notes[0], want)
		}
	}
	for _, want := range []string{"median of 3 fresh prompts", "13.9K–14.4K tok/s", "cold start, with any one-time cost it met) took 320 ms"} {
		if !strings.Contains(notes[1], want) {
			t.Errorf("the warm row's note %q lacks %q", notes[1], want)
		}
	}
	if strings.Contains(notes[1], "not the server's") || strings.HasSuffix(prefillRows(warmRow())[0].Total, notServerMark) {
		t.Errorf("a row within the rule is marked: %q", notes[1])
	}
}

func TestPrefillCSVColumns(t *testing.T) {
	run := &matrixgen.Run{Prefill: []matrixgen.Prefill{warmRow()}}
	row := csvRows(run)[0]
	col := func(name string) string { return row[slices.Index(csvHeader, name)] }
	for name, want := range map[string]string{
		"total_tok_s": "14000", "server_prompt_tok_s": "15000", "server_prompt_ms": "68.3",
		"cold_ttft_ms": "319.5", "prompt_tok_s_min": "13851.4", "prompt_tok_s_max": "14436.6", "completed": "3",
	} {
		if got := col(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if len(row) != len(csvHeader) {
		t.Errorf("%d fields for %d columns", len(row), len(csvHeader))
	}
}
