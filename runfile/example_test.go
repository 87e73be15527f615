package runfile

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
)

// TestFormatReferenceExample keeps the example in runs/README.md a valid run.
func TestFormatReferenceExample(t *testing.T) {
	doc, err := os.ReadFile("../runs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("runs/README.md has no JSON example")
	}
	if _, err := Decode("runs/README.md example", m[1]); err != nil {
		t.Errorf("the documented example is not a valid run: %v", err)
	}
}

// TestFormatReferenceNamesEveryField keeps runs/README.md in step with the
// Go types: every JSON field name must appear in it, in backquotes.
func TestFormatReferenceNamesEveryField(t *testing.T) {
	doc, err := os.ReadFile("../runs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || rt.PkgPath() != reflect.TypeFor[matrixgen.Run]().PkgPath() || seen[rt] {
			return
		}
		seen[rt] = true
		for name, i := range fieldsOf(rt) {
			if !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("runs/README.md does not document %s.%s", rt.Name(), name)
			}
			walk(rt.Field(i).Type)
		}
	}
	walk(reflect.TypeFor[matrixgen.Run]())
}
