package matrixgen

import (
	"reflect"
	"strings"
	"testing"
)

// TestMapTextSeesEveryString: every exported string field of the model,
// however deep (a decode cell's loop excerpt, a probe's model root), is
// passed through MapText, so a field added later is redacted without
// being listed. The test fills each string field with a marker by
// reflection and fails on any that comes back unchanged.
func TestMapTextSeesEveryString(t *testing.T) {
	var r Run
	fill(reflect.ValueOf(&r).Elem(), 0)
	r.MapText(func(s string) string { return strings.ReplaceAll(s, "SECRET", "hidden") })
	var kept []string
	walkStrings(reflect.ValueOf(r), "run", func(path, s string) {
		if strings.Contains(s, "SECRET") {
			kept = append(kept, path)
		}
	})
	if len(kept) > 0 {
		t.Errorf("MapText did not reach: %v", kept)
	}
	seen := 0
	walkStrings(reflect.ValueOf(r), "run", func(string, string) { seen++ })
	if seen < 40 {
		t.Errorf("only %d strings filled: the test does not reach the model", seen)
	}
}

// fill gives every string a marker and every pointer and slice one value,
// to a depth no model's type nests deeper than.
func fill(v reflect.Value, depth int) {
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("a SECRET")
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct && v.Type().Elem().PkgPath() == "time" {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	}
}

func walkStrings(v reflect.Value, path string, f func(path, s string)) {
	switch v.Kind() {
	case reflect.String:
		f(path, v.String())
	case reflect.Pointer:
		if !v.IsNil() {
			walkStrings(v.Elem(), path, f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkStrings(v.Field(i), path+"."+v.Type().Field(i).Name, f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkStrings(v.Index(i), path+"[]", f)
		}
	}
}

// TestEachTextNamesFields: a string is named by its place in the run
// file, as a problem names it.
func TestEachTextNamesFields(t *testing.T) {
	r := Run{LaunchCommand: "vllm serve m", Decode: []Decode{{}, {Reason: "HTTP 500"}}}
	var got []string
	r.EachText(func(field, s string) { got = append(got, field+"="+s) })
	if strings.Join(got, " ") != "launch_command=vllm serve m decode[1].reason=HTTP 500" {
		t.Errorf("%q", got)
	}
}
