package render

import (
	"html"
	"html/template"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
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
	`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `' onmouseover='x`,
	`&amp;&lt;`, `a+b`, "nul\x00byte", `</tbody></table><h1>`, `{{.Class}}`, `±7.2 % (75 %)`, `javascript:alert(1)`,
}

// TestMeasurementsAreEscaped puts hostile text in every value of the
// all-measurements table in turn and reads it back from the drawn rows.
func TestMeasurementsAreEscaped(t *testing.T) {
	b := newTestRenderer(t)
	draw := func(field int, text string) (template.HTML, error) {
		var row measurementRow
		setEvery(reflect.ValueOf(&row).Elem(), "v")
		groups := []measurementGroup{{Phase: "v", Rows: []measurementRow{row, row}}}
		if field < 0 {
			groups[0].Phase = text
		} else {
			reflect.ValueOf(&groups[0].Rows[1]).Elem().Field(field).SetString(text)
		}
		return b.measurementsHTML(groups)
	}
	checkEscaped(t, reflect.TypeFor[measurementRow]().NumField(), draw)
}

// TestMatrixIsEscaped does the same for every text of the decode matrix.
func TestMatrixIsEscaped(t *testing.T) {
	b := newTestRenderer(t)
	draw := func(field int, text string) (template.HTML, error) {
		var cell matrixCell
		setEvery(reflect.ValueOf(&cell).Elem(), "v")
		m := matrix{Columns: []int{1, 2}, Rows: []matrixRow{{Label: "v", Cells: []matrixCell{cell, cell}}}}
		if field < 0 {
			m.Rows[0].Label = text
		} else {
			reflect.ValueOf(&m.Rows[0].Cells[1]).Elem().Field(field).SetString(text)
		}
		return b.matrixHTML(m)
	}
	checkEscaped(t, reflect.TypeFor[matrixCell]().NumField(), draw)
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

// checkEscaped draws a table with plain text everywhere, then with each
// hostile text in each field (-1: the field outside the rows), and checks
// that the markup around it stays the same (as many tags and quotes) and
// that the value, unescaped, is read back as it was given.
func checkEscaped(t *testing.T, fields int, draw func(field int, text string) (template.HTML, error)) {
	t.Helper()
	plain, err := draw(0, "v")
	if err != nil {
		t.Fatal(err)
	}
	tags, quotes := strings.Count(string(plain), "<"), strings.Count(string(plain), `"`)
	for _, h := range hostileText {
		for field := -1; field < fields; field++ {
			out, err := draw(field, h)
			if err != nil {
				t.Fatal(err)
			}
			s := string(out)
			if strings.Count(s, "<") != tags || strings.Count(s, `"`) != quotes {
				t.Errorf("field %d = %q changed the markup:\n%s", field, h, s)
			}
			if !slices.Contains(valuesOf(s), h) {
				t.Errorf("field %d = %q is not read back from:\n%s", field, h, s)
			}
		}
	}
}

// valuesOf reads back, unescaped, every element text and attribute value
// of drawn markup (an anchor's without its #).
func valuesOf(s string) []string {
	var values []string
	for _, m := range drawnValue.FindAllStringSubmatch(s, -1) {
		values = append(values, html.UnescapeString(m[1]+m[2]))
	}
	return values
}

var drawnValue = regexp.MustCompile(`>([^<]*)<|="#?([^"]*)"`)
