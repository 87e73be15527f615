package render

import (
	"cmp"
	"encoding/json"
	"html/template"
	"strconv"
	"strings"
)

// The parts of a page that repeat a cell or a row many times — the matrix,
// the all-measurements table, the JSON blocks — are written here in Go
// instead of by html/template, whose reflection costs about as much a cell
// as the rest of the page together. The rest of each page stays a
// template. Every value is escaped as html/template escapes text and
// attribute values (esc), so the pages are the same byte for byte.

// esc escapes text for an element's content or a quoted attribute value,
// with the same replacements as html/template.
var esc = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;").Replace

// jsonBlock is v as the content of a <script type="application/json">
// block: encoding/json escapes <, >, & and U+2028/U+2029, so nothing in it
// can close the script or be read as markup, and the template inserts it
// as it is.
func jsonBlock(v any) (template.JS, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return template.JS(b), nil
}

// HTML is the matrix as a table in a horizontal scroller.
func (m matrix) HTML() template.HTML {
	var b strings.Builder
	b.Grow(256 + 160*len(m.Columns)*len(m.Rows))
	b.WriteString("\n<div class=\"scroll\">\n<table class=\"matrix\">\n<thead><tr><th scope=\"col\">Context</th>")
	for _, c := range m.Columns {
		b.WriteString("<th scope=\"col\">")
		b.WriteString(strconv.Itoa(c))
		b.WriteString("</th>")
	}
	b.WriteString("</tr></thead>\n<tbody>")
	for _, r := range m.Rows {
		b.WriteString("\n<tr><th scope=\"row\">")
		b.WriteString(esc(r.Label))
		b.WriteString("</th>")
		for _, c := range r.Cells {
			c.write(&b)
		}
		b.WriteString("</tr>")
	}
	b.WriteString("\n</tbody>\n</table>\n</div>\n")
	return template.HTML(b.String())
}

func (c matrixCell) write(b *strings.Builder) {
	b.WriteString("<td class=\"")
	b.WriteString(esc(c.Class))
	b.WriteByte('"')
	if c.Title != "" {
		b.WriteString(" title=\"")
		b.WriteString(esc(c.Title))
		b.WriteByte('"')
	}
	b.WriteByte('>')
	if c.Href != "" {
		b.WriteString("<a class=\"cell-link\" href=\"")
		b.WriteString(esc(c.Href))
		b.WriteString("\">")
	}
	span := func(class, text string) {
		if text != "" {
			b.WriteString("<span class=\"" + class + "\">")
			b.WriteString(esc(text))
			b.WriteString("</span>")
		}
	}
	span("fig", c.Figure)
	span("st", c.Status)
	span("spread", c.Spread)
	span("ttft", c.TTFT)
	if c.Href != "" {
		b.WriteString("</a>")
	}
	b.WriteString("</td>")
}

// measurementsHTML is the all-measurements table's body: a heading row a
// phase, then its rows.
func measurementsHTML(groups []measurementGroup) template.HTML {
	var b strings.Builder
	b.Grow(512 * (1 + len(groups)*40))
	for _, g := range groups {
		b.WriteString("\n<tbody>\n<tr class=\"phase\"><th colspan=\"11\" scope=\"colgroup\">")
		b.WriteString(esc(g.Phase))
		b.WriteString("</th></tr>")
		for _, r := range g.Rows {
			b.WriteString("\n<tr class=\"")
			b.WriteString(esc(r.Class))
			b.WriteString("\"><td>")
			b.WriteString(esc(r.Context))
			b.WriteString("</td>")
			for _, v := range [...]string{r.Requests} {
				b.WriteString("<td class=\"num\">" + esc(v) + "</td>")
			}
			b.WriteString("<td>" + esc(r.Status) + "</td>")
			for _, v := range [...]string{r.Total, r.PerRequest, r.TTFT, r.TBT, r.Active, r.Completed, r.Output, r.Window} {
				b.WriteString("<td class=\"num\">")
				b.WriteString(esc(v))
				b.WriteString("</td>")
			}
			b.WriteString("</tr>")
		}
		b.WriteString("\n</tbody>")
	}
	return template.HTML(b.String())
}

// indexRowsHTML is the index table's rows, a run each, with the data the
// filters and the sort read.
func indexRowsHTML(rows []indexRow, efficiency bool) template.HTML {
	var b strings.Builder
	b.Grow(1024 * len(rows))
	attr := func(name, value string) {
		b.WriteString(" " + name + "=\"")
		b.WriteString(esc(value))
		b.WriteByte('"')
	}
	// The best of each figure column is marked by the page's script, among
	// the runs its filters leave (markTops in matrixgen.js).
	figure := func(label, value string, kind string) {
		b.WriteString("<td data-label=\"" + label + "\" class=\"num figure\" data-top=\"" + kind + "\">")
		b.WriteString(esc(value))
		b.WriteString("</td>")
	}
	for _, r := range rows {
		b.WriteString("\n<tr")
		attr("data-id", r.ID)
		attr("data-model", r.Model)
		attr("data-gpu", r.GPU)
		attr("data-engine", r.EngineName)
		attr("data-quantization", r.Quantization)
		attr("data-best", r.BestValue)
		attr("data-peak", r.PeakValue)
		attr("data-perwatt", r.PerWattValue)
		attr("data-date", r.Date)
		b.WriteString("><td class=\"model\"><a href=\"" + esc(r.Href) + "\">" + esc(r.Model) + "</a>")
		if r.Simulated {
			b.WriteString(" <span class=\"badge\">simulated</span>")
		}
		b.WriteString("<span class=\"run-id\">" + esc(r.ID) + "</span></td>")
		b.WriteString("<td data-label=\"GPU\">" + esc(r.GPU) + "</td>")
		b.WriteString("<td data-label=\"Engine\" class=\"engine\">" + esc(r.Engine) + "</td>")
		b.WriteString("<td data-label=\"Quantization\">" + esc(r.Quantization) + "</td>")
		b.WriteString("<td data-label=\"Date\" class=\"date\">" + esc(r.Date) + "</td>")
		figure("Best single-stream tok/s", r.BestSingle, "best")
		figure("Peak total tok/s", r.Peak, "peak")
		if efficiency {
			figure("Best tok/s per watt", cmp.Or(r.BestPerWatt, dash), "perwatt")
		}
		b.WriteString("</tr>")
	}
	return template.HTML(b.String())
}

// runOptionsHTML are a compare picker's options: every run by id.
func runOptionsHTML(rows []indexRow) template.HTML {
	var b strings.Builder
	for _, r := range rows {
		id := esc(r.ID)
		b.WriteString("<option value=\"" + id + "\">" + id)
		if r.Simulated {
			b.WriteString(" (simulated)")
		}
		b.WriteString("</option>")
	}
	return template.HTML(b.String())
}

// HTML is the panels, a titled definition list each.
func (ps panels) HTML() template.HTML {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\n<div class=\"panel\">\n<h2>" + esc(p.Title) + "</h2>\n<dl>")
		for _, r := range p.Rows {
			dd := "<dd>"
			if r.Whole {
				dd = `<dd class="whole">`
			}
			b.WriteString("\n<dt>" + esc(r.Label) + "</dt>" + dd + esc(r.Value) + "</dd>")
		}
		b.WriteString("\n</dl>\n</div>")
	}
	return template.HTML(b.String())
}

// HTML is the arguments a span each, so a wrapping line breaks between
// them, not inside one.
func (args launchArgs) HTML() template.HTML {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("<span class=\"arg\">" + esc(a) + "</span>")
	}
	return template.HTML(b.String())
}
