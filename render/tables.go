package render

import (
	"html/template"
	"strconv"
	"strings"
)

// A run page's decode matrix and all-measurements table are most of its
// values, and html/template's reflective escaping of them was half a
// page's cost (BenchmarkRunPage). They are drawn by a text/template
// (templates/tables.tmpl) from values escaped here first, as html/template
// would (escape). A new column: its heading in run.html, its cell in
// tables.tmpl (and the phase rows' colspan), its value an escaped field
// here (tables_test.go).

// escaped is text escaped as html/template escapes a value in an element's
// text or a quoted attribute, the only places tables.tmpl prints one:
// template.HTMLEscapeString, and + as &#43; (TestTablesAreHTMLTemplates).
// Only escape makes one.
type escaped string

func escape(s string) escaped {
	return escaped(strings.ReplaceAll(template.HTMLEscapeString(s), "+", "&#43;"))
}

// The data tables.tmpl is given: the layout's tables with every value
// escaped. TestTablesHoldOnlyEscapedText keeps them so.
type (
	escapedGroup  = measurementGroupOf[escaped]
	escapedMatrix struct {
		Columns []escaped
		Rows    []matrixRowOf[escaped]
	}
)

func escapeGroups(groups []measurementGroup) []escapedGroup {
	out := make([]escapedGroup, len(groups))
	for i, g := range groups {
		out[i] = escapedGroup{Phase: escape(g.Phase), Rows: make([]measurementRowOf[escaped], len(g.Rows))}
		for j, r := range g.Rows {
			out[i].Rows[j] = measurementRowOf[escaped]{
				Class: escape(r.Class), Context: escape(r.Context), Requests: escape(r.Requests), Status: escape(r.Status),
				Total: escape(r.Total), PerRequest: escape(r.PerRequest), TTFT: escape(r.TTFT), TBT: escape(r.TBT),
				Active: escape(r.Active), Completed: escape(r.Completed), Output: escape(r.Output), Window: escape(r.Window),
			}
		}
	}
	return out
}

func escapeMatrix(m matrix) escapedMatrix {
	out := escapedMatrix{Columns: mapped(m.Columns, func(c int) escaped { return escape(strconv.Itoa(c)) })}
	for i, row := range m.Rows {
		out.Rows = append(out.Rows, matrixRowOf[escaped]{Label: escape(row.Label)})
		out.Rows[i].Cells = make([]matrixCellOf[escaped], len(row.Cells))
		for j, c := range row.Cells {
			out.Rows[i].Cells[j] = matrixCellOf[escaped]{
				Class: escape(c.Class), Figure: escape(c.Figure), Status: escape(c.Status), TTFT: escape(c.TTFT),
				Title: escape(c.Title), Anchor: escape(c.Anchor), Spread: escape(c.Spread),
			}
		}
	}
	return out
}

// measurementsHTML draws the all-measurements table's row groups.
func (b *Renderer) measurementsHTML(groups []measurementGroup) (template.HTML, error) {
	if len(groups) == 0 {
		return "", nil
	}
	rows := 0
	for _, g := range groups {
		rows += 1 + len(g.Rows)
	}
	return b.drawTable("measurements", escapeGroups(groups), 320*rows)
}

// matrixHTML draws the decode matrix.
func (b *Renderer) matrixHTML(m matrix) (template.HTML, error) {
	if len(m.Rows) == 0 {
		return "", nil
	}
	return b.drawTable("matrix", escapeMatrix(m), 80*len(m.Rows)*(1+len(m.Columns)))
}

// drawTable executes one of tables.tmpl's templates on escaped data into a
// string grown first to size bytes.
func (b *Renderer) drawTable(name string, data any, size int) (template.HTML, error) {
	var buf strings.Builder
	buf.Grow(size)
	if err := b.tables.ExecuteTemplate(&buf, name, data); err != nil {
		return "", err
	}
	// Safe: the markup is ours, and every value in it was escaped.
	return template.HTML(buf.String()), nil
}
