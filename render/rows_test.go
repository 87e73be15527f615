package render

import (
	"html"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRowsHoldOnlyEscapedText: measurements.tmpl is a text/template, so
// nothing escapes what it prints but escape. Every value it can reach
// must be of type escaped: a field of any other type added to its data
// would be printed as it is.
func TestRowsHoldOnlyEscapedText(t *testing.T) {
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
				t.Errorf("%s is a %s; measurements.tmpl may print only escaped text", path, typ)
			}
		}
	}
	check(reflect.TypeFor[[]escapedGroup](), "data")
}

// TestMeasurementsAreEscaped puts hostile text in every value of the
// table in turn and reads it back from the drawn rows: the markup around
// it stays the same (as many tags and quotes as with plain text) and the
// value, unescaped, is what was given.
func TestMeasurementsAreEscaped(t *testing.T) {
	b, err := NewRenderer(Site{})
	if err != nil {
		t.Fatal(err)
	}
	hostile := []string{
		`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `' onmouseover='x`,
		`&amp;&lt;`, `a+b`, "nul\x00byte", `</tbody></table><h1>`, `{{.Class}}`, `±7.2 % (75 %)`, "",
	}
	fields := reflect.TypeFor[measurementRow]().NumField()
	plain := func() []measurementGroup {
		row := measurementRow{}
		v := reflect.ValueOf(&row).Elem()
		for i := range fields {
			v.Field(i).SetString("v")
		}
		return []measurementGroup{{Phase: "v", Rows: []measurementRow{row, row}}}
	}
	drawn, err := b.measurementsHTML(plain())
	if err != nil {
		t.Fatal(err)
	}
	tags, quotes := strings.Count(string(drawn), "<"), strings.Count(string(drawn), `"`)
	for _, h := range hostile {
		for i := -1; i < fields; i++ {
			groups := plain()
			if i < 0 {
				groups[0].Phase = h
			} else {
				reflect.ValueOf(&groups[0].Rows[1]).Elem().Field(i).SetString(h)
			}
			out, err := b.measurementsHTML(groups)
			if err != nil {
				t.Fatal(err)
			}
			s := string(out)
			if strings.Count(s, "<") != tags || strings.Count(s, `"`) != quotes {
				t.Errorf("field %d = %q changed the markup:\n%s", i, h, s)
			}
			if !slices.Contains(valuesOf(s), h) {
				t.Errorf("field %d = %q is not read back from:\n%s", i, h, s)
			}
		}
	}
}

// valuesOf reads back, unescaped, every element text and attribute value
// of drawn rows.
func valuesOf(s string) []string {
	var values []string
	for _, m := range drawnValue.FindAllStringSubmatch(s, -1) {
		values = append(values, html.UnescapeString(m[1]+m[2]))
	}
	return values
}

var drawnValue = regexp.MustCompile(`>([^<]*)<|="([^"]*)"`)
