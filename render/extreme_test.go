package render

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/matrixgen/matrixgen/runfile"
)

// TestExtremeFiguresReadAsNumbers: validate accepts any figure from the
// least positive float up to its bounds, and a share or ratio of two of
// them ran off the page: "±+Inf %" in a cell's interval, a percentage of
// 300 digits. Every float of a full run is set, one at a time, to each
// extreme that validates, and every file the run's page is made of must
// read as numbers: no Inf, no NaN, no figure of 20 digits or more.
func TestExtremeFiguresReadAsNumbers(t *testing.T) {
	b, err := NewRenderer(Site{Title: "extreme"})
	if err != nil {
		t.Fatal(err)
	}
	full, err := runfile.Encode(fullest())
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for i := range countFloats(fullest()) {
		for _, x := range []float64{5e-324, 1e-300, 1e-9, 9.9e7, 9.9e11} {
			run, err := runfile.Decode("full.json", full)
			if err != nil {
				t.Fatal(err)
			}
			place := setFloat(run, i, x)
			if len(run.Validate()) > 0 {
				continue
			}
			tried++
			_, files, err := b.worker().layOut(entryOf(t, fmt.Sprintf("x%d", i), run))
			if err != nil {
				t.Errorf("%s = %g: %v", place, x, err)
				continue
			}
			for _, f := range files {
				if m := unreadable(f.data); m != "" {
					t.Errorf("%s = %g: %s reads %q", place, x, f.rel, m)
				}
			}
		}
	}
	t.Logf("%d variants", tried)
	if tried < 50 {
		t.Fatalf("only %d variants validated", tried)
	}
}

// unreadable is the first thing in data that does not read as a number:
// Inf, NaN, or a figure of 20 digits or more, plain or grouped by commas
// (a regular expression took a minute over the variants).
func unreadable(data []byte) string {
	for _, word := range []string{"Inf", "NaN"} {
		if i := bytes.Index(data, []byte(word)); i >= 0 {
			return string(data[max(0, i-40) : i+len(word)])
		}
	}
	isDigit := func(i int) bool { return i < len(data) && data[i] >= '0' && data[i] <= '9' }
	for i := 0; i < len(data); i++ {
		if !isDigit(i) || i > 0 && (isDigit(i-1) || data[i-1] == ',') {
			continue
		}
		end := i
		for isDigit(end) {
			end++
		}
		digits := end - i
		if digits >= 20 {
			return string(data[i:end])
		}
		if digits > 3 {
			continue
		}
		for end+3 < len(data) && data[end] == ',' && isDigit(end+1) && isDigit(end+2) && isDigit(end+3) && !isDigit(end+4) {
			end, digits = end+4, digits+3 // grouped by thousands: 1,234,567.8
		}
		if digits >= 20 && end < len(data) && data[end] == '.' { // a list of numbers has no decimal after it
			return string(data[i:end])
		}
	}
	return ""
}

// countFloats is how many floats eachFloat visits in v.
func countFloats(v any) int {
	n := 0
	eachFloat(reflect.ValueOf(v).Elem(), "run", func(string, reflect.Value) bool { n++; return false })
	return n
}

// setFloat sets the i-th float of run to x and names it.
func setFloat(v any, i int, x float64) (name string) {
	eachFloat(reflect.ValueOf(v).Elem(), "run", func(path string, f reflect.Value) bool {
		if i--; i >= 0 {
			return false
		}
		f.SetFloat(x)
		name = path
		return true
	})
	return name
}

// eachFloat calls f with every float under v (a list's first and last
// elements walked), by its path, until f says
// it is done.
func eachFloat(v reflect.Value, path string, f func(string, reflect.Value) bool) bool {
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		return f(path, v)
	case reflect.Pointer:
		return !v.IsNil() && eachFloat(v.Elem(), path, f)
	case reflect.Slice: // its first and last elements
		for _, i := range []int{0, v.Len() - 1}[:min(v.Len(), 2)] {
			if eachFloat(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && eachFloat(v.Field(i), path+"."+v.Type().Field(i).Name, f) {
				return true
			}
		}
	}
	return false
}
