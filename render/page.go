// Package render turns runs into a static site: an index, one page per run,
// downloads and the assets they need. It owns html/template, go-echarts and
// goldmark; every string from a run file reaches a page through html/template
// escaping, and only goldmark's output (raw HTML off) is trusted as HTML.
package render

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/runfile"
)

// pageBase is what every page's layout needs.
type pageBase struct {
	Root           string // relative path from the page to the site root
	SiteTitle      string
	PageTitle      string
	Description    string
	Canonical      string
	EChartsVersion string
	Charts         bool // ECharts, for pages that draw
}

type runPage struct {
	pageBase
	// ID is the run's; Compared, CompareBucket and ComparedList name its
	// bucket of compare pages and the list of buckets (compared.go).
	ID, Compared             string
	CompareBucket            int
	ComparedList             string
	Heading, Subtitle, Shape string
	Simulated, Incomplete    bool
	// Disagreements lists the cells where our count and the server's own
	// disagree; DisagreementCells counts them ("1 cell").
	Disagreements     []string
	DisagreementCells string
	PrefillNotes      []string // what the prefill rows say beside their figures
	PrefillMarked     bool     // a prefill figure is not the server's prefill speed
	ResumedDespite    []string // what differed when the run was resumed by force
	Panels            []panel
	LaunchCommand     string
	// LaunchArgs is the command split into its arguments, a span each,
	// which the page keeps whole when it wraps.
	LaunchArgs   []string
	Chart        any // an ECharts option, which the template writes as JSON
	ChartLabel   string
	Matrix       template.HTML // the decode matrix, drawn (matrixHTML)
	Legend       legend
	LegendTitle  string       // the matrix's figure and how it is coloured
	Views        []matrixView // the matrix coloured by other figures, or nil
	ViewsJSON    template.JS
	Measurements template.HTML // the all-measurements table, drawn
	// Repeated says the decode cells were measured more than once, each
	// showing its median repeat's figures.
	Repeated bool
	Details  template.JS // every cell's detail
	Notes    *notes
}

// notes are a run's notes as its page shows them: goldmark's HTML, or the
// text as it is and why (tooHardForMarkdown).
type notes struct {
	HTML                template.HTML
	Plain, PlainBecause string
}

type panel struct {
	Title string
	Rows  []panelRow
}

// panelRow is one figure of a panel; Whole keeps its value on one line.
type panelRow struct {
	Label, Value string
	Whole        bool
}

// The decode matrix and the all-measurements table are laid out as text
// (S string) and drawn from it escaped (S escaped, tables.go).
type (
	matrix struct {
		Columns []int
		Rows    []matrixRow
	}
	matrixRow              = matrixRowOf[string]
	matrixCell             = matrixCellOf[string]
	measurementGroup       = measurementGroupOf[string]
	measurementRow         = measurementRowOf[string]
	matrixRowOf[S ~string] struct {
		Label S
		Cells []matrixCellOf[S]
	}
	matrixCellOf[S ~string] struct {
		// TTFT is the line under the figure: "256 ms TTFT".
		Class, Figure, Status, TTFT, Title S
		// Anchor is the id of the cell's detail section, "cell-8K-16".
		Anchor S
		// Spread marks a figure whose interval is wider than ±5 %: "±7.2 %".
		Spread S
	}
	// measurementGroupOf is one phase's rows of the all-measurements table.
	measurementGroupOf[S ~string] struct {
		Phase S
		Rows  []measurementRowOf[S]
	}
	// measurementRowOf is one formatted row of the all-measurements table.
	measurementRowOf[S ~string] struct {
		Class                                                   S
		Context, Requests, Status                               S
		Total, PerRequest, TTFT, TBT, Active, Completed, Output S
		Window                                                  S
	}
)

type legend struct {
	Bins       []legendBin
	Statuses   []legendStatus
	WarmupNote bool
}

type legendBin struct{ Class, Range string }

type legendStatus struct{ Class, Mark, Label, Text string }

// newRunPage lays out everything one run page shows.
func (b *Renderer) newRunPage(e runfile.Entry) (*runPage, error) {
	r := e.Run.Sorted()
	p := &runPage{
		pageBase:       b.base("../../", runTitle(r)+" · "+b.site.Title, runDescription(r), "runs/"+e.ID+"/"),
		ID:             e.ID,
		Compared:       "../../" + comparedName(comparedBucket(e.ID)),
		CompareBucket:  comparedBucket(e.ID),
		ComparedList:   "../../" + comparedListName,
		Heading:        runTitle(r),
		Subtitle:       joinNonEmpty(" · ", r.Engine.Name, r.Engine.Version, r.Engine.Quantization),
		Shape:          sweepShape(r),
		Simulated:      r.Simulated,
		Incomplete:     r.Incomplete,
		Disagreements:  disagreements(r),
		PrefillNotes:   prefillNotes(r),
		PrefillMarked:  anyNotServersPrefill(r),
		ResumedDespite: r.ResumedDespite,
		Panels:         runPanels(r),
		LaunchCommand:  r.LaunchCommand,
		LaunchArgs:     strings.Fields(r.LaunchCommand),
		Repeated:       r.Sweep.Repeats > 1,
		LegendTitle:    viewSpecs[0].label,
	}
	p.DisagreementCells = plural.Count(len(p.Disagreements), "cell", "cells")
	if len(r.Prefill) > 0 {
		p.Chart, p.ChartLabel = prefillChart(r)
	}
	p.Charts = len(r.Prefill) > 0 || len(r.Decode) > 0
	var err error
	if p.Measurements, err = b.measurementsHTML(measurementRows(r)); err != nil {
		return nil, fmt.Errorf("all measurements: %w", err)
	}
	var m matrix
	m, p.Legend = decodeMatrix(r)
	if p.Matrix, err = b.matrixHTML(m); err != nil {
		return nil, fmt.Errorf("decode matrix: %w", err)
	}
	cells := cellOrder(r)
	if p.Views = matrixViews(cells); p.Views != nil {
		if p.ViewsJSON, err = scriptJSON(p.Views); err != nil {
			return nil, fmt.Errorf("matrix views: %w", err)
		}
	}
	if d := cellDetails(r, cells); d != nil {
		if p.Details, err = scriptJSON(d); err != nil {
			return nil, fmt.Errorf("cell details: %w", err)
		}
	}
	if len(e.Notes) > 0 {
		if p.Notes, err = b.markdown(e.Notes); err != nil {
			return nil, fmt.Errorf("notes: %w", err)
		}
	}
	return p, nil
}

// runTitle names a run as published matrices do, "<model> on <GPU> 96GB";
// a simulated run names the sim, and typed hardware is marked as given.
func runTitle(r *matrixgen.Run) string {
	if r.Simulated {
		return r.Model.Name + " on " + simulatedServer
	}
	h := r.Hardware
	gpu, given := h.GPU, h.IsGiven("gpu")
	if h.GPUCount > 1 {
		gpu, given = strconv.Itoa(h.GPUCount)+"× "+gpu, given || h.IsGiven("gpu_count")
	}
	if h.VRAMGB > 0 && gpu != "" {
		gpu, given = gpu+" "+plain(h.VRAMGB)+"GB", given || h.IsGiven("vram_gb")
	}
	if gpu == "" && h.CPU != "" {
		gpu, given = h.CPU+" (no GPU)", h.IsGiven("cpu")
	}
	if gpu == "" {
		return r.Model.Name
	}
	if given {
		gpu += givenMark
	}
	return r.Model.Name + " on " + gpu
}

// simulatedServer is what served a simulated run, as pages name it.
const simulatedServer = "matrixgen sim"

// givenMark follows a hardware value a person typed.
const givenMark = " (as given)"

// asGiven is a hardware value (field its JSON name), marked when given.
func asGiven(h matrixgen.Hardware, field, value string) string {
	if value != "" && h.IsGiven(field) {
		return value + givenMark
	}
	return value
}

func runDescription(r *matrixgen.Run) string {
	d := "Prefill and sustained decode speed of " + runTitle(r)
	if engine := joinNonEmpty(" ", r.Engine.Name, r.Engine.Version); engine != "" {
		d += " served by " + engine
	}
	if s := sweepShape(r); s != "" {
		d += ": " + s
	}
	return d + "."
}

// sweepShape summarises the matrix: "8 contexts (8K–1019K) × 8 concurrency
// levels (1–128) · prefill at 8K, 16K, …".
func sweepShape(r *matrixgen.Run) string {
	var parts []string
	contexts, levels := r.Contexts(), r.ConcurrencyLevels()
	if len(contexts) > 0 && len(levels) > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s) × %s (%s)",
			plural.Count(len(contexts), "context", "contexts"),
			span(matrixgen.ContextLabel(contexts[0]), matrixgen.ContextLabel(contexts[len(contexts)-1])),
			plural.Count(len(levels), "concurrency level", "concurrency levels"),
			span(strconv.Itoa(levels[0]), strconv.Itoa(levels[len(levels)-1]))))
	}
	if pre := r.PrefillContexts(); len(pre) > 0 {
		parts = append(parts, "prefill at "+strings.Join(mapped(pre, matrixgen.ContextLabel), ", "))
	}
	return strings.Join(parts, " · ")
}

func span(lo, hi string) string {
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

func runPanels(r *matrixgen.Run) []panel {
	h := r.Hardware
	hw := panel{Title: "Hardware", Rows: rows(
		"Type", asGiven(h, "type", h.Type),
		"GPU", asGiven(h, "gpu", h.GPU),
		"GPUs", asGiven(h, "gpu_count", countIf(h.GPUCount > 1, h.GPUCount)),
		"VRAM", asGiven(h, "vram_gb", vram(h.VRAMGB)),
		"CPU", asGiven(h, "cpu", h.CPU),
		"OS", asGiven(h, "os", h.OS),
		"Kernel", r.Hardware.Kernel,
		"Driver", r.Hardware.Driver,
		"CUDA", r.Hardware.CUDA,
		"Power limit", powerLimit(r.Hardware.PowerLimitW, r.Hardware.DefaultPowerLimitW),
		"PCIe", r.Hardware.PCIe,
		"Idle power", wattsIf(r.Hardware.IdlePowerW),
	)}
	engine := panel{Title: "Engine", Rows: rows(
		"Engine", r.Engine.Name,
		"Version", r.Engine.Version,
		"Quantization", r.Engine.Quantization,
		"Backend", r.Engine.Backend,
		"Repository", r.Engine.Repository,
		"Build", r.Engine.Build,
		"Commit", r.Engine.Commit,
	)}
	s := r.Sweep
	run := panel{Title: "Run", Rows: rows(
		"Served model", r.Model.ServedName,
		"Revision", r.Model.Revision,
		"Max model length", tokensIf(r.Model.MaxModelLen),
		"Benchmark tool", joinNonEmpty(" ", r.Tool.Name, r.Tool.Version),
		"Decode test", decodeTestLabel(s.DecodeTest),
		"Prefill mode", prefillModeLabel(s),
		"Time per measurement", ifPositive(s.DurationSeconds, planSeconds),
		"Repeats", repeatsLabel(s.Repeats),
		"Max output", tokensIf(s.MaxOutputTokens),
		"Ignore EOS", boolIf(s.IgnoreEOS),
	)}
	for _, p := range r.Request.Parts() { // the request's own settings, a row each
		run.Rows = append(run.Rows, panelRow{Label: requestPartLabels[p[0]], Value: cutTo(p[1], maxShownText)})
	}
	for _, t := range rows("Started", dateTime(r.StartedAt), "Finished", dateTime(r.FinishedAt)) {
		t.Whole = true
		run.Rows = append(run.Rows, t)
	}
	return slices.DeleteFunc([]panel{hw, engine, run}, func(p panel) bool { return len(p.Rows) == 0 })
}

// requestLabel is what every request carried beside the prompt, cut: a
// run file may hold megabytes in extra.
func requestLabel(q *matrixgen.Request) string { return cutTo(q.Text(), maxShownText) }

// requestPartLabels name the request's settings as the panel shows them.
var requestPartLabels = map[string]string{
	"temperature": "Temperature", "chat_template_kwargs": "Chat template arguments", "extra": "Extra request fields",
}

// rows pairs labels with values, leaving out what the run lacks.
func rows(pairs ...string) []panelRow {
	var out []panelRow
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			out = append(out, panelRow{Label: pairs[i], Value: pairs[i+1]})
		}
	}
	return out
}

func countIf(ok bool, n int) string {
	if !ok {
		return ""
	}
	return count(n)
}

// tokensIf is "4,096 tokens" ("1 token"), or "" for none.
func tokensIf(n int) string {
	return ifPositive(n, func(n int) string { return count(n) + " " + plural.Noun(n, "token", "tokens") })
}

func vram(gb float64) string {
	return ifPositive(gb, func(gb float64) string { return plain(gb) + " GB" })
}

func boolIf(b *bool) string {
	switch {
	case b == nil:
		return ""
	case *b:
		return "yes"
	}
	return "no"
}

// repeatsLabel is how many times the sweep measured each decode cell:
// "3, interleaved" (the whole matrix, then again); "" for once.
func repeatsLabel(n int) string {
	if n <= 1 {
		return ""
	}
	return strconv.Itoa(n) + ", interleaved"
}

var decodeTestLabels = map[string]string{
	matrixgen.DecodeFixedDuration: "Fixed duration", matrixgen.DecodeFixedCount: "Fixed request count",
}

func decodeTestLabel(s string) string { return cmp.Or(decodeTestLabels[s], s) }

func prefillModeLabel(s matrixgen.Sweep) string {
	switch s.PrefillMode {
	case matrixgen.PrefillWarmed:
		if s.PrefillRepeats > 1 {
			return fmt.Sprintf("After a warm-up, the median of %d fresh prompts", s.PrefillRepeats)
		}
		return "After a warm-up, one fresh prompt"
	case matrixgen.PrefillDecodeWarmup:
		return "Measured during decode warm-up"
	case matrixgen.PrefillSeparate:
		return "Separate cold requests"
	}
	return s.PrefillMode
}

func joinNonEmpty(sep string, parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), sep)
}

// disagreements names each cell whose count the server's own contradicts:
// "8K × 4: 1,234 tokens by us, 1,300 by the server (−5.1 %)".
func disagreements(r *matrixgen.Run) []string {
	var out []string
	for _, d := range r.Sorted().Decode {
		if c := d.ServerCount; c != nil && c.Disagrees() {
			out = append(out, fmt.Sprintf("%s × %d: %s %s by us, %s by the server (%s)",
				d.ContextLabel(), d.Concurrency, count(c.ClientTokens), plural.Noun(c.ClientTokens, "token", "tokens"), count(c.ServerTokens), signedPercent(c.Deviation())))
		}
	}
	return out
}

// signedPercent writes a share as "+1.2 %" or "−0.4 %".
func signedPercent(v float64) string {
	s := percentFigure(v * 100)
	if v < 0 {
		return "−" + s + " %"
	}
	return "+" + s + " %"
}

// prefillNotes says, per prefill row, what its figures alone do not.
func prefillNotes(r *matrixgen.Run) []string {
	var out []string
	for _, p := range r.Prefill {
		parts := []string{p.Note}
		if low, high, ok := p.PromptTokSRange(); ok {
			parts = append(parts, fmt.Sprintf("the median of %d fresh prompts after an untimed warm-up, %s–%s tok/s", len(p.Requests), tokS(low), tokS(high)))
		}
		if p.ServerPromptTokS != nil {
			parts = append(parts, "the server timed its prefill at "+tokS(*p.ServerPromptTokS)+" tok/s"+serverClockNote(p))
		}
		if outside, beyond, ok := p.OutsidePrompt(); ok && beyond {
			parts = append(parts, fmt.Sprintf("%snot the server's prefill speed: its first token came %s after the request; its prompt processing took %s (%s outside it)",
				strings.TrimSpace(notServerMark)+" ", millis(*p.TTFTMs), millis(*p.ServerPromptMs), millis(outside)))
		}
		if p.ColdTTFTMs != nil {
			parts = append(parts, "the sweep's first request of this length (cold start, with any one-time cost it met) took "+millis(*p.ColdTTFTMs))
		}
		if p.IdleWaitSeconds != nil && *p.IdleWaitSeconds >= 0.5 {
			parts = append(parts, "measured after waiting "+secs(*p.IdleWaitSeconds)+" for the server to finish earlier work")
		}
		if s := joinNonEmpty("; ", parts...); s != "" {
			out = append(out, matrixgen.ContextLabel(p.ContextTokens)+" prefill: "+s+".")
		}
	}
	return out
}

// serverClockNote says where the server's timing came from, when the run
// says: " (vllm:request_prefill_time_seconds, 169 ms)".
func serverClockNote(p matrixgen.Prefill) string {
	if s := joinNonEmpty(", ", p.ServerClock, ifSet(p.ServerPromptMs, millis)); s != "" {
		return " (" + s + ")"
	}
	return ""
}

// powerLimit is "600 W" or "300 W (default 600 W)" for a capped card.
func powerLimit(set, def float64) string {
	switch {
	case set <= 0:
		return ""
	case def > 0 && def != set:
		return count(int(math.Round(set))) + " W (default " + count(int(math.Round(def))) + " W)"
	}
	return count(int(math.Round(set))) + " W"
}

func wattsIf(w *float64) string {
	return ifSet(w, func(w float64) string { return decimal1(w) + " W" })
}

// anyNotServersPrefill reports whether a prefill figure is not the
// server's prefill speed.
func anyNotServersPrefill(r *matrixgen.Run) bool {
	return slices.ContainsFunc(r.Prefill, func(p matrixgen.Prefill) bool { _, beyond, _ := p.OutsidePrompt(); return beyond })
}
