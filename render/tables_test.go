package render

import (
	"html/template"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/templates"
)

// TestTablesHoldOnlyEscapedText: tables.tmpl is a text/template, so
// nothing escapes what it prints but escape. Every value it can reach
// must be of type escaped: a field of any other type added to its data
// would be printed as it is.
func TestTablesHoldOnlyEscapedText(t *testing.T) {
	want := reflect.TypeFor[escaped]()
	var check func(typ reflect.Type, path string)
	check = func(typ reflect.Type, path string) {
		switch typ.Kind() {
		case reflect.Slice:
			check(typ.Elem(), path+"[]")
		case reflect.Struct:
			for f := range typ.Fields() {
				check(f.Type, path+"."+f.Name)
			}
		default:
			if typ != want {
				t.Errorf("%s is a %s; tables.tmpl may print only escaped text", path, typ)
			}
		}
	}
	check(reflect.TypeFor[[]escapedGroup](), "measurements")
	check(reflect.TypeFor[escapedMatrix](), "matrix")
}

// hostileText are values that would break out of an element or an
// attribute, or look like escapes or template actions.
var hostileText = []string{
	`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `' onmouseover='x`, `&amp;&lt;`, `C++ 1+1`,
	"nul\x00byte", "bad \xff utf-8", "line\u2028sep", `</tbody></table><h1>`, `{{.Class}}`, `±7.2 % (75 %)`, `javascript:alert(1)`,
}

// hostileTables are the two tables' layouts with text in every field in
// turn: each of hostileText, and plain text elsewhere. A matrix cell's
// anchor is always an id the layout makes (cellID: "cell-8K-16"), which
// html/template URL-escaped: only ids are put there.
func hostileTables(yield func(groups []measurementGroup, m matrix) bool) {
	var row measurementRow
	var cell matrixCell
	setEvery(reflect.ValueOf(&row).Elem(), "v")
	setEvery(reflect.ValueOf(&cell).Elem(), "v")
	cell.Anchor = "cell-8K-16"
	plain := func() ([]measurementGroup, matrix) {
		return []measurementGroup{{Phase: "v", Rows: []measurementRow{row, row}}},
			matrix{Columns: []int{1, 2}, Rows: []matrixRow{{Label: "v", Cells: []matrixCell{cell, cell}}}}
	}
	for _, h := range hostileText {
		for field := -1; field < reflect.TypeFor[measurementRow]().NumField(); field++ {
			groups, m := plain()
			if field < 0 {
				groups[0].Phase, m.Rows[0].Label = h, h
			} else {
				reflect.ValueOf(&groups[0].Rows[1]).Elem().Field(field).SetString(h)
			}
			if field >= 0 && field < reflect.TypeFor[matrixCell]().NumField() && reflect.TypeFor[matrixCell]().Field(field).Name != "Anchor" {
				reflect.ValueOf(&m.Rows[0].Cells[1]).Elem().Field(field).SetString(h)
			}
			if !yield(groups, m) {
				return
			}
		}
	}
}

// TestTablesAreHTMLTemplates: the tables are what html/template writes
// from the same template and the same text, byte for byte, whatever the
// text. So a value moved where html/template would escape it otherwise
// (into a script, a style, an unquoted attribute, an event handler, a
// URL) fails here: there escape is not enough.
func TestTablesAreHTMLTemplates(t *testing.T) {
	b := newTestRenderer(t)
	reference, err := template.ParseFS(templates.FS, "tables.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	want := func(name string, data any) string {
		var s strings.Builder
		if err := reference.ExecuteTemplate(&s, name, data); err != nil {
			t.Fatal(err)
		}
		return s.String()
	}
	compare := func(groups []measurementGroup, m matrix) {
		t.Helper()
		got, err := b.measurementsHTML(groups)
		if err != nil {
			t.Fatal(err)
		}
		if w := want("measurements", groups); string(got) != w {
			t.Errorf("all measurements differ from html/template's:\n%s\nwant\n%s", got, w)
		}
		if got, err = b.matrixHTML(m); err != nil {
			t.Fatal(err)
		}
		if w := want("matrix", m); string(got) != w {
			t.Errorf("decode matrix differs from html/template's:\n%s\nwant\n%s", got, w)
		}
	}
	for groups, m := range hostileTables {
		compare(groups, m)
	}
	for seed := range uint64(8) {
		r := testrun.Full(seed).Sorted()
		m, _ := decodeMatrix(r)
		compare(measurementRows(r), m)
	}
}

// TestTablesKeepTheirMarkup reads the drawn tables with an HTML parser:
// whatever the text, every value read back is the text given (NUL read
// as U+FFFD, as a browser reads it), and the only attributes are the
// template's, a link only to a cell on the page.
func TestTablesKeepTheirMarkup(t *testing.T) {
	b := newTestRenderer(t)
	for groups, m := range hostileTables {
		given := []string{groups[0].Phase}
		for _, v := range append(fieldsOf(groups[0].Rows[1]), fieldsOf(m.Rows[0].Cells[1])...) {
			given = append(given, v)
		}
		rows, err := b.measurementsHTML(groups)
		if err != nil {
			t.Fatal(err)
		}
		cells, err := b.matrixHTML(m)
		if err != nil {
			t.Fatal(err)
		}
		read := readTables(t, string(rows)+string(cells))
		for _, v := range given {
			if v = strings.ReplaceAll(strings.ToValidUTF8(v, "\uFFFD"), "\x00", "\uFFFD"); !slices.Contains(read, v) {
				t.Errorf("%q is not read back from:\n%s%s", v, rows, cells)
			}
		}
	}
}

// readTables parses drawn tables, failing on an attribute the template
// does not write or a link off the page, and returns every text and
// attribute value as a browser reads it.
func readTables(t *testing.T, s string) []string {
	t.Helper()
	allowed := []string{"class", "title", "href", "scope", "colspan"}
	var values []string
	z := xhtml.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			if z.Err() != io.EOF {
				t.Fatal(z.Err())
			}
			return values
		case xhtml.TextToken:
			values = append(values, strings.ToValidUTF8(string(z.Text()), "\uFFFD"))
		case xhtml.StartTagToken:
			tok := z.Token()
			for _, a := range tok.Attr {
				if !slices.Contains(allowed, a.Key) || a.Key == "href" && !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s %s=%q> in:\n%s", tok.Data, a.Key, a.Val, s)
				}
				values = append(values, strings.ToValidUTF8(strings.TrimPrefix(a.Val, "#"), "\uFFFD"))
			}
		}
	}
}

// TestMatrixAnchorsAreIDs: an anchor is put in href as it is escaped for
// text, which is what html/template's URL escaping would write only for
// an id of letters, digits and dashes; cellID makes no other, for any
// context and concurrency a run file may hold (both at least 1).
func TestMatrixAnchorsAreIDs(t *testing.T) {
	id := regexp.MustCompile(`^cell-[0-9]+K?-[0-9]+$`)
	for _, ctx := range []int{1, 1000, 1023, 1024, 8192, 12345, 1 << 20, 1 << 30, math.MaxInt} {
		for _, conc := range []int{1, 16, 1000, math.MaxInt} {
			if a := cellID(matrixgen.Decode{ContextTokens: ctx, Concurrency: conc}); !id.MatchString(a) {
				t.Errorf("anchor %q is no id", a)
			}
		}
	}
	for seed := range uint64(8) {
		m, _ := decodeMatrix(testrun.Full(seed).Sorted())
		for _, row := range m.Rows {
			for _, c := range row.Cells {
				if c.Anchor != "" && !id.MatchString(c.Anchor) {
					t.Errorf("anchor %q is no id", c.Anchor)
				}
			}
		}
	}
}

func newTestRenderer(t *testing.T) *Renderer {
	t.Helper()
	b, err := NewRenderer(Site{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// setEvery sets every string field of a struct to text.
func setEvery(v reflect.Value, text string) {
	for i := range v.NumField() {
		v.Field(i).SetString(text)
	}
}

// fieldsOf are a struct's string fields' values.
func fieldsOf(s any) []string {
	v := reflect.ValueOf(s)
	var out []string
	for i := range v.NumField() {
		out = append(out, v.Field(i).String())
	}
	return out
}

// TestMeasurementColumnsMatch: the all-measurements table's headings are
// in run.html and its rows in tables.tmpl; a column added to one but not
// the other, or a phase row's colspan left behind, shifts every figure
// under the wrong heading.
func TestMeasurementColumnsMatch(t *testing.T) {
	b := newTestRenderer(t)
	page, err := b.newRunPage(runfile.Entry{ID: "run-1", Run: testrun.Full(1)})
	if err != nil {
		t.Fatal(err)
	}
	html, err := execute(b.run, page)
	if err != nil {
		t.Fatal(err)
	}
	s := string(html)
	start := strings.Index(s, `<table class="all">`)
	end := strings.Index(s[start:], "</table>")
	if start < 0 || end < 0 {
		t.Fatal("no all-measurements table")
	}
	table := s[start : start+end]
	head, body, _ := strings.Cut(table, "</thead>")
	headings := strings.Count(head, "<th ")
	rows := 0
	for _, row := range strings.Split(body, "<tr")[1:] {
		cells := strings.Count(row, "<td")
		if span := colspan.FindStringSubmatch(row); span != nil {
			cells, _ = strconv.Atoi(span[1])
		}
		if cells != headings {
			t.Errorf("a row of %d cells under %d headings: <tr%s", cells, headings, row)
		}
		rows++
	}
	if rows < 10 {
		t.Fatalf("%d rows read", rows)
	}
}

var colspan = regexp.MustCompile(`colspan="(\d+)"`)
