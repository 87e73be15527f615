package render

import (
	"reflect"
	"unicode/utf8"

	"github.com/matrixgen/matrixgen"
)

// A run file may hold any string a person or a server put there; a page
// shows a bounded part of each, and run.json keeps the whole. A 60 MB model
// name must not make every page of the site 60 MB.
const (
	maxShownName = 200  // names and versions, shown in titles and tables
	maxShownText = 4000 // everything else: reasons, commands, evidence
)

// shownRun is a copy of r whose strings are cut for showing.
func shownRun(r *matrixgen.Run) *matrixgen.Run {
	if !tooLong(reflect.ValueOf(r), maxShownName) {
		return r // the usual case: nothing to cut, nothing to copy
	}
	c := deepCopy(reflect.ValueOf(r)).Interface().(*matrixgen.Run)
	capStrings(reflect.ValueOf(c).Elem(), maxShownText)
	for _, s := range []*string{
		&c.Hardware.Type, &c.Hardware.GPU, &c.Hardware.CPU, &c.Hardware.OS, &c.Hardware.Driver,
		&c.Engine.Name, &c.Engine.Version, &c.Engine.Quantization, &c.Engine.Backend, &c.Engine.Repository,
		&c.Engine.Build, &c.Engine.Commit, &c.Model.Name, &c.Model.ServedName, &c.Model.Revision,
		&c.Tool.Name, &c.Tool.Version,
	} {
		*s = cutText(*s, maxShownName)
	}
	return c
}

// cutText cuts s to at most n bytes on a character boundary, marked with
// an ellipsis.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// capStrings cuts every string reachable from v.
func capStrings(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() && v.Len() > n {
			v.SetString(cutText(v.String(), n))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			capStrings(v.Elem(), n)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				capStrings(v.Field(i), n)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			capStrings(v.Index(i), n)
		}
	}
}

// tooLong reports whether any string reachable from v is longer than n.
func tooLong(v reflect.Value, n int) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Len() > n
	case reflect.Pointer:
		return !v.IsNil() && tooLong(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && tooLong(v.Field(i), n) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Int || v.Type().Elem().Kind() == reflect.Float64 {
			return false
		}
		for i := range v.Len() {
			if tooLong(v.Index(i), n) {
				return true
			}
		}
	}
	return false
}

// deepCopy copies pointers, slices and structs so cutting the copy's
// strings leaves the original as it was.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Elem().Type())
		c.Elem().Set(deepCopy(v.Elem()))
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if c.Field(i).CanSet() {
				c.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	}
	return v
}
