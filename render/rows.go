package render

import (
	"bytes"
	"html"
	"html/template"
	"io/fs"
	texttemplate "text/template"
)

// The all-measurements table is the largest part of a run page: 72 rows of
// 12 values on the sample run. Drawn by html/template it took 0.75 ms of a
// page's 2.0 ms (BenchmarkRunPage), most of it html/template calling its
// escaper through reflection, a slice and six allocations for each value.
// Its rows are drawn instead by a text/template (templates/measurements.tmpl)
// from values escaped here first, each once, by html.EscapeString; the
// page's html/template then writes the rows as they are (measurementsHTML).

// escaped is text escaped for HTML by html.EscapeString (<, >, &, ' and "),
// so safe as an element's text and as a quoted attribute's value, the only
// places measurements.tmpl prints one. Only escape makes one.
type escaped string

func escape(s string) escaped { return escaped(html.EscapeString(s)) }

// escapedGroup and escapedRow are measurementGroup and measurementRow with
// every value escaped: all that measurements.tmpl is given.
// TestRowsHoldOnlyEscapedText keeps them so.
type escapedGroup struct {
	Phase escaped
	Rows  []escapedRow
}

type escapedRow struct {
	Class                                                   escaped
	Context, Requests, Status                               escaped
	Total, PerRequest, TTFT, TBT, Active, Completed, Output escaped
	Window                                                  escaped
}

func escapeRow(r measurementRow) escapedRow {
	return escapedRow{
		Class: escape(r.Class), Context: escape(r.Context), Requests: escape(r.Requests), Status: escape(r.Status),
		Total: escape(r.Total), PerRequest: escape(r.PerRequest), TTFT: escape(r.TTFT), TBT: escape(r.TBT),
		Active: escape(r.Active), Completed: escape(r.Completed), Output: escape(r.Output), Window: escape(r.Window),
	}
}

// parseMeasurements parses measurements.tmpl.
func parseMeasurements(templates fs.FS) (*texttemplate.Template, error) {
	return texttemplate.ParseFS(templates, "measurements.tmpl")
}

// measurementsHTML draws the all-measurements table's row groups.
func (b *Renderer) measurementsHTML(groups []measurementGroup) (template.HTML, error) {
	if len(groups) == 0 {
		return "", nil
	}
	data := make([]escapedGroup, len(groups))
	for i, g := range groups {
		data[i] = escapedGroup{Phase: escape(g.Phase), Rows: make([]escapedRow, len(g.Rows))}
		for j, r := range g.Rows {
			data[i].Rows[j] = escapeRow(r)
		}
	}
	var buf bytes.Buffer
	buf.Grow(256 * (len(groups) + len(groups[0].Rows) + len(groups[len(groups)-1].Rows)))
	if err := b.measurements.Execute(&buf, data); err != nil {
		return "", err
	}
	// Safe as it is: the template's markup is ours, and every value in it
	// was escaped by escape (an escapedRow holds nothing else), printed
	// only as an element's text or inside a quoted attribute.
	return template.HTML(buf.String()), nil
}
