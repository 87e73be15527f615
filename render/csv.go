package render

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/matrixgen/matrixgen"
)

// csvHeader names the columns of measurements.csv: the all-measurements
// table, unformatted, with units in the names and contexts as token counts.
var csvHeader = []string{
	"phase", "context_tokens", "context", "concurrency", "status", "reason",
	"total_tok_s", "per_request_tok_s", "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99",
	"tbt_ms_p50", "tbt_ms_p90", "tbt_ms_p99", "avg_active", "completed", "output_tokens",
	"window_seconds", "token_source", "prompt_tokens",
	// Prefill rows only: the server's own timing, the cold TTFT, the spread.
	"server_prompt_tok_s", "server_prompt_ms", "cold_ttft_ms", "prompt_tok_s_min", "prompt_tok_s_max",
	"server_clock", "not_server_prefill",
	// The figure's interval (spread) and its level: 0.95, or less where
	// few repeats or requests cannot give 95 % (0.75 for 3).
	"low", "high", "level",
}

// measurementsCSV writes every measurement of a run as CSV, one row each, in
// page order. Missing figures are empty cells, not zeros.
func measurementsCSV(r *matrixgen.Run) []byte {
	return csvBytes(csvHeader, csvRows(r))
}

// csvBytes writes a header (if any) and rows with encoding/csv, whose
// writer cannot fail on a bytes.Buffer with the default comma.
func csvBytes(header []string, rows [][]string) []byte {
	var b bytes.Buffer
	if len(rows) > 0 {
		b.Grow((len(rows) + 1) * 12 * len(rows[0])) // about a dozen bytes a field
	}
	w := csv.NewWriter(&b)
	if header != nil {
		_ = w.Write(header)
	}
	_ = w.WriteAll(rows) // and flushes
	return b.Bytes()
}

// siteCSVHeader is runs.csv's: which run, then the measurement columns.
// simulated is "true" for a run measured against the sim; hardware_given
// names the hardware fields a person typed (gpu, vram_gb, …), space apart.
var siteCSVHeader = append([]string{"run_id", "model", "gpu", "engine", "engine_version", "quantization", "started_at", "simulated", "hardware_given"}, csvHeader...)

// csvRows are a run's measurements as CSV rows, in page order.
func csvRows(r *matrixgen.Run) [][]string {
	run := r.Sorted()
	var rows [][]string
	for _, p := range run.Prefill {
		sp := prefillSpread(p).csv()
		low, high := "", ""
		if l, h, ok := p.PromptTokSRange(); ok {
			low, high = num(&l), num(&h)
		}
		rows = append(rows, []string{
			"prefill", strconv.Itoa(p.ContextTokens), matrixgen.ContextLabel(p.ContextTokens), "1",
			string(p.Status), csvSafe(p.Reason),
			num(p.PromptTokS), "", num(p.TTFTMs), "", "", "", "", "", "",
			ifSet(p.Completed, strconv.Itoa), "", "", "", ifPositive(p.PromptTokens, strconv.Itoa),
			num(p.ServerPromptTokS), num(p.ServerPromptMs), num(p.ColdTTFTMs), low, high,
			csvSafe(p.ServerClock), notServerPrefill(p), sp[0], sp[1], sp[2],
		})
	}
	for _, d := range run.Decode {
		ttft, tbt := percentiles(d.TTFTMs), percentiles(d.TBTMs)
		sp := decodeSpread(d).csv()
		rows = append(rows, []string{
			"decode", strconv.Itoa(d.ContextTokens), d.ContextLabel(), strconv.Itoa(d.Concurrency),
			string(d.Status), csvSafe(d.Reason),
			num(d.TotalTokS), num(d.PerRequestTokS), ttft[0], ttft[1], ttft[2], tbt[0], tbt[1], tbt[2],
			num(d.AvgActive), ifSet(d.Completed, strconv.Itoa), ifSet(d.OutputTokens, strconv.Itoa), num(d.WindowSeconds),
			string(d.TokenSource), "", "", "", "", "", "", "", "",
			sp[0], sp[1], sp[2],
		})
	}
	return rows
}

func num(v *float64) string {
	return ifSet(v, func(v float64) string { return plain(v) })
}

func percentiles(p *matrixgen.Percentiles) [3]string {
	if p == nil {
		return [3]string{}
	}
	return [3]string{plain(p.P50), num(p.P90), num(p.P99)}
}

// csvSafe keeps a spreadsheet from reading free text (a hostile server's
// reason) as a formula: a leading quote defuses a cell that starts with a
// tab or a carriage return, or, past the white space and format characters
// spreadsheets may skip, with = + - @ or their fullwidth forms.
func csvSafe(s string) string {
	if s == "" {
		return s
	}
	first, _ := utf8.DecodeRuneInString(strings.TrimLeftFunc(s, skippedLead))
	if s[0] == '\t' || s[0] == '\r' || strings.ContainsRune(formulaLeads, first) {
		return "'" + s
	}
	return s
}

// formulaLeads are the characters a formula starts with.
const formulaLeads = "=+-@\uff1d\uff0b\uff0d\uff20"

// skippedLead reports whether a spreadsheet may skip r before a formula:
// white space, and format characters (Cf: a byte order mark, zero widths).
func skippedLead(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)
}

// notServerPrefill is "true" for a prefill figure that is not the server's
// prefill speed (Prefill.OutsidePrompt), "false" where the server's clock
// says it is, and empty where there is no clock to tell.
func notServerPrefill(p matrixgen.Prefill) string {
	if _, beyond, ok := p.OutsidePrompt(); ok {
		return strconv.FormatBool(beyond)
	}
	return ""
}
