package matrixgen

import (
	"reflect"
	"strconv"
	"strings"
)

// MapText replaces every string the run holds, in its structs, slices and
// pointers, by f of it, so that redaction sees a field added to the model
// without its being listed. The request's maps are their owner's to redact.
func (r *Run) MapText(f func(string) string) {
	walkText(reflect.ValueOf(r).Elem(), "", func(_ string, v reflect.Value) { v.SetString(f(v.String())) })
}

// EachText calls f with every non-empty string the run holds and its field,
// as problems name fields (decode[3].reason).
func (r *Run) EachText(f func(field, s string)) {
	walkText(reflect.ValueOf(r).Elem(), "", func(field string, v reflect.Value) { f(field, v.String()) })
}

// walkText calls visit with each settable, non-empty string under v and
// its field's name in the run file.
func walkText(v reflect.Value, field string, visit func(field string, v reflect.Value)) {
	switch v.Kind() {
	case reflect.String:
		if v.Len() > 0 && v.CanSet() {
			visit(field, v)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			walkText(v.Elem(), field, visit)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			// The field's name in the run file: its json tag's, else Go's.
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				name = f.Name
			}
			if field != "" {
				name = field + "." + name
			}
			walkText(v.Field(i), name, visit)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkText(v.Index(i), field+"["+strconv.Itoa(i)+"]", visit)
		}
	}
}
