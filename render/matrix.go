package render

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
)

// statusMarks are symbols that tell statuses apart in print and for readers
// who do not see the colours.
var statusMarks = map[matrixgen.Status]string{
	matrixgen.StatusQueued:       "⋯",
	matrixgen.StatusLooped:       "↻",
	matrixgen.StatusOverCapacity: "✕",
	matrixgen.StatusError:        "!",
	matrixgen.StatusNotRun:       "·",
}

// decodeMatrix lays out the sustained decode cells by context and
// concurrency, coloured by total tok/s on a logarithmic scale anchored at
// the best figure (anchoredLow).
func decodeMatrix(r *matrixgen.Run) (matrix, legend) {
	lo, hi, measured := throughputRange(r)
	lo = anchoredLow(lo, hi)
	contexts, levels := r.Contexts(), r.ConcurrencyLevels()
	m := matrix{Columns: levels}
	seen := map[matrixgen.Status]bool{}
	cells := r.CellIndex() // one scan, not one per cell
	for _, c := range contexts {
		row := matrixRow{Label: matrixgen.ContextLabel(c)}
		for _, n := range levels {
			d, ok := cells.Cell(c, n)
			if ok {
				seen[d.Status] = true
			}
			row.Cells = append(row.Cells, cell(d, ok, lo, hi))
		}
		m.Rows = append(m.Rows, row)
	}
	var lg legend
	if measured {
		lg.Bins = legendBins(lo, hi, tokS, false)
	}
	for _, s := range matrixgen.Statuses {
		if s != matrixgen.StatusValid && seen[s] {
			lg.Statuses = append(lg.Statuses, legendStatusOf(s))
		}
	}
	lg.WarmupNote = r.Sweep.WarmsDecodeCache() && len(m.Rows) > 0
	return m, lg
}

func legendStatusOf(s matrixgen.Status) legendStatus {
	return legendStatus{Class: "st-" + string(s), Mark: statusMarks[s], Label: s.Label(), Text: s.Explanation()}
}

// throughputRange is the lowest and highest positive total tok/s among the
// cells that show a figure (valid and queued), the ends of the colour scale.
func throughputRange(r *matrixgen.Run) (lo, hi float64, ok bool) {
	lo = math.Inf(1)
	for _, d := range r.Decode {
		if showsFigure(d) && *d.TotalTokS > 0 {
			lo, hi, ok = min(lo, *d.TotalTokS), max(hi, *d.TotalTokS), true
		}
	}
	return lo, hi, ok
}

// showsFigure reports whether the matrix prints the cell's throughput: valid
// cells, and queued ones, whose figure is real but not what C streams at
// once would give. Looped figures are kept in the file, not shown as speed.
func showsFigure(d matrixgen.Decode) bool {
	return d.TotalTokS != nil && (d.Status == matrixgen.StatusValid || d.Status == matrixgen.StatusQueued)
}

// loopedFigure reports whether a looped cell has a total tok/s to show.
func loopedFigure(d matrixgen.Decode) bool {
	return d.Status == matrixgen.StatusLooped && d.TotalTokS != nil
}

func cell(d matrixgen.Decode, ok bool, lo, hi float64) matrixCell {
	if !ok {
		return matrixCell{Class: "st-missing", Figure: dash, Title: "not measured"}
	}
	c := matrixCell{Title: fmt.Sprintf("%s × %d: %s", d.ContextLabel(), d.Concurrency, d.Status.Label())}
	if d.Status != matrixgen.StatusNotRun {
		c.Anchor = cellID(d)
	}
	if d.Reason != "" {
		c.Title += ": " + d.Reason
	}
	if showsFigure(d) {
		c.Figure = decimal1(*d.TotalTokS)
		c.Class = binClass(logBin(*d.TotalTokS, lo, hi, binCount))
		if sp := decodeSpread(d); sp.ok {
			c.Title += "; " + sp.long()
			if sp.wide() {
				c.Spread = sp.halfWidth()
			}
		}
		if d.TTFTMs != nil {
			c.TTFT = millis(d.TTFTMs.P50) + " TTFT"
		}
	} else if loopedFigure(d) {
		// The figure the table shows, uncoloured beside its mark: what the
		// server did, not a speed to rank.
		c.Figure = decimal1(*d.TotalTokS)
	}
	if d.Status != matrixgen.StatusValid {
		c.Class = strings.TrimSpace(c.Class + " st-" + string(d.Status))
		c.Status = statusMarks[d.Status] + " " + d.Status.Label()
	}
	return c
}

func binClass(i int) string { return "bin-" + strconv.Itoa(i) }

// measurementRows is the all-measurements table of a run whose
// measurements are Sorted.
func measurementRows(r *matrixgen.Run) []measurementGroup {
	var prefill, decode []measurementRow
	for _, p := range r.Prefill {
		prefill = append(prefill, prefillRows(p)...)
	}
	for _, d := range r.Decode {
		decode = append(decode, measurementRow{
			Class:   "phase-decode st-row-" + string(d.Status),
			Context: d.ContextLabel(), Requests: strconv.Itoa(d.Concurrency), Status: d.Status.Label(),
			Total: optional(d.TotalTokS, decimal1) + decodeSpread(d).short(), PerRequest: optional(d.PerRequestTokS, decimal1),
			TTFT: optional(d.TTFTMs, median(millis)), TBT: optional(d.TBTMs, median(millis)),
			Active: optional(d.AvgActive, decimal1), Completed: optional(d.Completed, count),
			Output: optional(d.OutputTokens, count), Window: optional(d.WindowSeconds, secs),
		})
	}
	return slices.DeleteFunc([]measurementGroup{{"Prefill", prefill}, {"Sustained decode", decode}},
		func(g measurementGroup) bool { return len(g.Rows) == 0 })
}

// prefillRows are a prefill measurement's row and, beneath it, the
// server's own timing and the cold start; a figure that is not the
// server's prefill speed (OutsidePrompt) is marked.
func prefillRows(p matrixgen.Prefill) []measurementRow {
	label := matrixgen.ContextLabel(p.ContextTokens)
	total := optional(p.PromptTokS, tokS) + prefillSpread(p).short()
	if _, beyond, _ := p.OutsidePrompt(); beyond {
		total += notServerMark
	}
	rows := []measurementRow{{
		Class:   "phase-prefill st-row-" + string(p.Status),
		Context: label, Requests: "1", Status: p.Status.Label(),
		Total: total, PerRequest: dash, TTFT: optional(p.TTFTMs, millis), TBT: dash,
		Active: dash, Completed: optional(p.Completed, count), Output: dash, Window: dash,
	}}
	// A figure's row beneath: its name where the status goes.
	sub := func(what, requests, total, ttft string) measurementRow {
		return measurementRow{Class: "sub phase-prefill", Context: "↳", Requests: requests, Status: what,
			Total: total, PerRequest: dash, TTFT: ttft, TBT: dash, Active: dash, Completed: dash, Output: dash, Window: dash}
	}
	if p.ServerPromptMs != nil {
		rows = append(rows, sub("Server's own", dash, optional(p.ServerPromptTokS, tokS), millis(*p.ServerPromptMs)))
	}
	if p.ColdTTFTMs != nil {
		rows = append(rows, sub("Cold start", "1", dash, millis(*p.ColdTTFTMs)))
	}
	return rows
}

// notServerMark follows a prefill figure that is not the server's.
const notServerMark = " *"

func median(format func(float64) string) func(matrixgen.Percentiles) string {
	return func(p matrixgen.Percentiles) string { return format(p.P50) }
}

// dateTime is a time as the pages show it, held on one line: its spaces
// are no-break spaces (a panel's narrow column wrapped "UTC" alone).
func dateTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02\u00a015:04\u00a0UTC")
}

func date(t time.Time) string {
	if t.IsZero() {
		return dash
	}
	return t.UTC().Format("2006-01-02")
}

// binsCSS is the stylesheet of the matrix colours.
func binsCSS() string {
	var b strings.Builder
	b.WriteString("/* Decode matrix colours: viridis stops mixed in OKLab, generated by matrixgen. */\n")
	for i, c := range palette(binCount) {
		fmt.Fprintf(&b, ".%s { background: %s; color: %s; }\n", binClass(i), c, textOn(c))
	}
	return b.String()
}
