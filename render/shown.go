package render

import (
	"reflect"
	"slices"
	"sync"
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

// shownRun is r, or a copy of it whose strings are cut for showing when
// some string is too long to show whole.
func shownRun(r *matrixgen.Run) *matrixgen.Run {
	if !tooLong(reflect.ValueOf(r), maxShownText) && !slices.ContainsFunc(names(r), func(s *string) bool { return len(*s) > maxShownName }) {
		return r // the usual case: nothing to cut, nothing to copy
	}
	c := deepCopy(reflect.ValueOf(r)).Interface().(*matrixgen.Run)
	capStrings(reflect.ValueOf(c).Elem(), maxShownText)
	for _, s := range names(c) {
		*s = cutText(*s, maxShownName)
	}
	return c
}

// names are a run's strings shown in titles and tables, cut shorter than
// the rest.
func names(r *matrixgen.Run) []*string {
	return []*string{
		&r.Hardware.Type, &r.Hardware.GPU, &r.Hardware.CPU, &r.Hardware.OS, &r.Hardware.Driver,
		&r.Engine.Name, &r.Engine.Version, &r.Engine.Quantization, &r.Engine.Backend, &r.Engine.Repository,
		&r.Engine.Build, &r.Engine.Commit, &r.Model.Name, &r.Model.ServedName, &r.Model.Revision,
		&r.Tool.Name, &r.Tool.Version,
	}
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
// It looks only where a type can hold strings (stringFields): a run is
// thousands of numbers and a few dozen strings.
func tooLong(v reflect.Value, n int) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Len() > n
	case reflect.Pointer:
		return !v.IsNil() && tooLong(v.Elem(), n)
	case reflect.Struct:
		for _, i := range stringFields(v.Type()) {
			if tooLong(v.Field(i), n) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if !elemHoldsStrings(v.Type()) {
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

var stringFieldsOf sync.Map // reflect.Type → []int

// stringFields are the indexes of a struct type's exported fields that can
// hold a string.
func stringFields(t reflect.Type) []int {
	if f, ok := stringFieldsOf.Load(t); ok {
		return f.([]int)
	}
	var fields []int
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && holdsStrings(f.Type, nil) {
			fields = append(fields, i)
		}
	}
	stringFieldsOf.Store(t, fields)
	return fields
}

var elemHoldsStringsOf sync.Map // reflect.Type → bool

// elemHoldsStrings reports whether the elements of a slice or array type
// can hold a string.
func elemHoldsStrings(t reflect.Type) bool {
	if h, ok := elemHoldsStringsOf.Load(t); ok {
		return h.(bool)
	}
	h := holdsStrings(t.Elem(), nil)
	elemHoldsStringsOf.Store(t, h)
	return h
}

// holdsStrings reports whether a value of type t can hold a string: is
// one, or points to, lists or has a field that can. seen guards against
// types that contain themselves.
func holdsStrings(t reflect.Type, seen map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.String:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsStrings(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return false
		}
		if seen == nil {
			seen = map[reflect.Type]bool{}
		}
		seen[t] = true
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsStrings(f.Type, seen) {
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
