package render

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
)

// cellDetail is everything a run recorded for one decode cell, as text, for
// the panel a matrix cell opens (JSON: in HTML it would double the page).
type cellDetail struct {
	Heading   string                  `json:"heading"`
	Status    string                  `json:"status"`
	Reason    string                  `json:"reason,omitempty"`
	Figures   []string                `json:"figures"` // aligned with detailLabels; "" for none
	PerSecond []int                   `json:"per_second,omitempty"`
	Power     [][3]*float64           `json:"power,omitempty"` // [seconds, board watts, SM MHz or null]
	Metrics   [][6]string             `json:"metrics,omitempty"`
	Loop      *matrixgen.LoopEvidence `json:"loop,omitempty"`
}

// cellID names a cell's section: "cell-8K-16".
func cellID(d matrixgen.Decode) string {
	return "cell-" + d.ContextLabel() + "-" + strconv.Itoa(d.Concurrency)
}

// detailLabels name the figures of every cellDetail, sent once per page.
var detailLabels = []string{
	"Total tok/s", "Per request tok/s", "Per request tok/s, as the server timed it", "Per request tok/s, ours for the requests the server timed", "Time to first token",
	"Time between tokens", "Average active requests", "Completed requests", "Output tokens", "Measured for",
	"Window opened", "Token counts from", "Attempts", "The server's own count", "Waited for the server to idle",
	"GPU board power", "Energy in the window", "Tok/s per watt", "Joules per 1K output tokens", "GPUs",
}

// detailsData is a page's cell details and the figures' labels.
type detailsData struct {
	Labels []string         `json:"labels"`
	Cells  byID[cellDetail] `json:"cells"`
	Charts cellCharts       `json:"charts"`
}

// cellDetails maps each measured cell's id to its detail.
func cellDetails(r *matrixgen.Run, cells []orderedCell) *detailsData {
	if len(r.Decode) == 0 {
		return nil
	}
	return &detailsData{Labels: detailLabels, Charts: cellChartOptions(), Cells: mapped(cells,
		func(c orderedCell) idValue[cellDetail] { return idValue[cellDetail]{c.id, newCellDetail(c.d)} })}
}

// byID is a page's cells in a JSON block: one object from cell id to
// value, written in cellOrder, the ids' sorted order, as a map's would be.
type byID[T any] []idValue[T]

type idValue[T any] struct {
	ID    string
	Value T
}

// MarshalJSONTo writes the cells as one object; json.Marshal calls it.
func (cells byID[T]) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for i := range cells {
		c := &cells[i] // a pointer: a value would be copied into an interface
		if err := enc.WriteToken(jsontext.String(c.ID)); err != nil {
			return err
		}
		if err := json.MarshalEncode(enc, &c.Value); err != nil {
			return fmt.Errorf("cell %s: %w", c.ID, err)
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// scriptJSONOptions write a page's JSON blocks as encoding/json writes
// them, byte for byte: <, >, &, U+2028 and U+2029 escaped, so nothing in a
// script block can close it, and an empty list null. Names are not checked
// for repeats (each is written once; the check was a tenth of the writing).
var scriptJSONOptions = json.JoinOptions(
	jsontext.EscapeForHTML(true),
	jsontext.EscapeForJS(true),
	json.FormatNilSliceAsNull(true),
	json.FormatNilMapAsNull(true),
	jsontext.AllowInvalidUTF8(true),
	jsontext.AllowDuplicateNames(true),
)

// scriptJSON is v as a JSON block for a page, trusted as JavaScript: it is
// escaped as scriptJSONOptions say (TestJSONBlocksAreEncodingJSONs), and
// html/template marshalling it again was an eighth of a run page's cost.
func scriptJSON(v any) (template.JS, error) {
	js, err := json.Marshal(v, scriptJSONOptions)
	return template.JS(js), err
}

// scriptCall is a script that calls fn with args, each as a JSON block:
// "fn(1, [...]);\n", how the site hands its data to its pages' script.
func scriptCall(fn string, args ...any) ([]byte, error) {
	out := []byte(fn + "(")
	for i, arg := range args {
		js, err := scriptJSON(arg)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ", "...)
		}
		out = append(out, js...)
	}
	return append(out, ");\n"...), nil
}

// orderedCell is a measured cell and its id.
type orderedCell struct {
	id string
	d  *matrixgen.Decode
}

// cellOrder lists a run's measured cells by id, as encoding/json orders a
// map's keys; of two cells with one id the later stands, as in a map.
func cellOrder(r *matrixgen.Run) []orderedCell {
	var cells []orderedCell
	for i := len(r.Decode) - 1; i >= 0; i-- { // the later of two first, which a stable sort keeps
		if d := &r.Decode[i]; d.Status != matrixgen.StatusNotRun {
			cells = append(cells, orderedCell{cellID(*d), d})
		}
	}
	slices.SortStableFunc(cells, func(a, b orderedCell) int { return strings.Compare(a.id, b.id) })
	return slices.CompactFunc(cells, func(a, b orderedCell) bool { return a.id == b.id })
}

func newCellDetail(d *matrixgen.Decode) cellDetail {
	c := cellDetail{
		Heading: d.ContextLabel() + " context × " + strconv.Itoa(d.Concurrency) + " " + plural.Noun(d.Concurrency, "request", "simultaneous requests"),
		Status:  statusMarks[d.Status] + " " + d.Status.Label(),
		Reason:  d.Reason,
		Loop:    d.Loop,
	}
	if d.Status == matrixgen.StatusValid {
		c.Status = d.Status.Label()
	}
	at := func(name string) func(float64) string {
		return func(v float64) string { return name + " " + millis(v) }
	}
	pct := func(p matrixgen.Percentiles) string {
		return joinNonEmpty(" · ", at("p50")(p.P50), ifSet(p.P90, at("p90")), ifSet(p.P99, at("p99")))
	}
	c.Figures = []string{
		ifSet(d.TotalTokS, decimal1), ifSet(d.PerRequestTokS, decimal1), ifSet(d.ServerPerRequestTokS, decimal1), ifSet(d.ClientRateOfServerTimed, decimal1),
		ifSet(d.TTFTMs, pct), ifSet(d.TBTMs, pct), ifSet(d.AvgActive, decimal1), ifSet(d.Completed, count), ifSet(d.OutputTokens, count),
		measuredFor(d), dateTime(d.WindowStart), tokenSourceLabels[d.TokenSource],
		countIf(d.Attempts > 1, d.Attempts), serverCountText(d.ServerCount), ifSet(d.IdleWaitSeconds, secs),
	}
	if sp := decodeSpread(*d); sp.ok {
		c.Figures[0] += " (" + sp.long() + ")"
	}

	c.Figures = append(c.Figures, powerTexts(d.Power)...)
	c.PerSecond = d.PerSecondTokens
	if d.Power != nil {
		for _, p := range d.Power.Trace {
			c.Power = append(c.Power, [3]*float64{new(p.AtSeconds), new(p.PowerW), p.SMClockMHz})
		}
	}
	percent := func(v float64) string { return decimal1(v*100) + "%" }
	for _, m := range d.ServerMetrics {
		c.Metrics = append(c.Metrics, [6]string{
			secs(m.AtSeconds), ifSet(m.Running, decimal1), ifSet(m.Waiting, decimal1),
			ifSet(m.KVCacheUsage, percent), ifSet(m.Preemptions, func(v float64) string { return count(int(v)) }),
			ifSet(m.SpecAcceptanceRate, percent),
		})
	}
	return c
}

// measuredFor is a cell's window, "10.0 s", or "3 repeats (2 valid) ×
// 10.0 s; the figures are the median repeat's".
func measuredFor(d *matrixgen.Decode) string {
	if d.WindowSeconds == nil {
		return ""
	}
	if len(d.Repeats) == 0 {
		return secs(*d.WindowSeconds)
	}
	n, valid := len(d.Repeats), 0
	for _, r := range d.Repeats {
		if r.Status == matrixgen.StatusValid {
			valid++
		}
	}
	text := plural.Count(n, "repeat", "repeats")
	if valid < n {
		text += " (" + strconv.Itoa(valid) + " valid)"
	}
	return text + " × " + secs(*d.WindowSeconds) + "; the figures are the median repeat's"
}

// tokenSourceLabels say where a cell's token counts came from.
var tokenSourceLabels = map[matrixgen.TokenSource]string{
	matrixgen.TokensContinuousUsage: "the server's usage on every chunk",
	matrixgen.TokensTimingsPerToken: "llama.cpp's per-chunk timings",
	matrixgen.TokensFinalUsage:      "each request's final usage, spread over its chunks",
	matrixgen.TokensServerMetrics:   "the server's metrics",
	matrixgen.TokensChunks:          "counting chunks (the server sent no counts)",
}

// serverCountText is the server's count beside ours, with a warning mark
// past the tolerance.
func serverCountText(c *matrixgen.ServerCount) string {
	if c == nil {
		return ""
	}
	s := count(c.ServerTokens) + " " + plural.Noun(c.ServerTokens, "token", "tokens") + "; ours " + count(c.ClientTokens) + " (" + signedPercent(c.Deviation()) + "), by " + c.Source
	if c.Disagrees() {
		s = "⚠ " + s + ": more than 2 % apart"
	}
	return s
}

// throttleTexts say what throttled a GPU: its power limit, heat, or both.
var throttleTexts = map[[2]bool]string{
	{true, true}: "⚠ throttled by power and heat", {true, false}: "⚠ throttled by its power limit",
	{false, true}: "⚠ throttled by heat",
}

// powerTexts are the power figures of a cell's detail (detailLabels' last).
func powerTexts(p *matrixgen.Power) []string {
	if p == nil {
		return []string{"", "", "", "", ""}
	}
	var gpus []string
	for _, g := range p.GPUs {
		gpus = append(gpus, joinNonEmpty(" ", "GPU "+strconv.Itoa(g.Index)+":",
			joinNonEmpty(", ", ifSet(g.MeanPowerW, func(w float64) string { return decimal1(w) + " W mean" }),
				ifSet(g.PeakPowerW, func(w float64) string { return decimal1(w) + " W peak" })),
			ifSet(g.MeanSMClockMHz, func(v float64) string { return count(int(v)) + " MHz" }),
			ifSet(g.MeanUtilization, func(v float64) string { return decimal1(v) + "% busy" }),
			ifSet(g.PeakTemperatureC, func(v float64) string { return count(int(v)) + " °C peak" }),
			throttleTexts[[2]bool{g.PowerThrottled, g.ThermalThrottled}]))
	}
	mean := ifPositive(p.MeanPowerW, func(w float64) string { return decimal1(w) + " W mean, all GPUs" })
	energy := ifPositive(p.EnergyJoules, func(j float64) string { return count(int(math.Round(j))) + " J" })
	joules := ifSet(p.JoulesPer1KTokens, func(v float64) string { return decimal1(v) + " J" })
	return []string{mean, energy, ifSet(p.TokSPerW, perWattText), joules, strings.Join(gpus, "; ")}
}
