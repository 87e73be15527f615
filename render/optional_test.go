package render

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// TestEveryOptionalFigureAloneRenders: a run file may leave out any
// optional figure, or give one a full run lacks, and still be valid; a
// page that read a figure because another was there (a GPU's peak power
// beside its mean) crashed the build on such a file. Every pointer and
// list reachable from a full run is, one at a time, left out, set to zero
// and set to a figure; each variant that validates is laid out (its page,
// its index line, its CSV) and all of them built into one site, with their
// comparisons.
func TestEveryOptionalFigureAloneRenders(t *testing.T) {
	b, err := NewRenderer(Site{Title: "optional"})
	if err != nil {
		t.Fatal(err)
	}
	var entries Entries
	tried, skipped := 0, 0
	for i := range countPlaces(fullest()) {
		for _, change := range []string{"unset", "zero", "set"} {
			run := fullest()
			place, changed := changePlace(run, i, change)
			if !changed {
				continue
			}
			if problems := run.Validate(); len(problems) > 0 {
				skipped++
				continue
			}
			tried++
			id := fmt.Sprintf("v%d-%s", i, change)
			e := entryOf(t, id, run)
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s %s: laying out the run panicked: %v", change, place, p)
					}
				}()
				if _, _, err := b.worker().layOut(e); err != nil {
					t.Errorf("%s %s: %v", change, place, err)
				}
			}()
			entries = append(entries, e)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("%d variants laid out, %d invalid ones skipped", tried, skipped)
	if tried < 100 {
		t.Fatalf("only %d variants: the walk found too few places", tried)
	}
	pairs := []Pair{{entries[0].ID, entries[len(entries)-1].ID}, {entries[1].ID, entries[len(entries)/2].ID}}
	if _, err := writeSite(entries, Site{Title: "optional", Compare: pairs}, filepath.Join(t.TempDir(), "public")); err != nil {
		t.Fatal(err)
	}
}

// fullest is a full run with every figure it lacks set and every empty
// list given an element, so that leaving each out is tried.
func fullest() *matrixgen.Run {
	run := testrun.Full(1)
	fill(reflect.ValueOf(run).Elem())
	run.Hardware.Given = []string{"gpu"}
	for i := range run.Decode {
		d := &run.Decode[i]
		d.ServerCount.Source = "usage"
		d.Interval.Level = 0.95
		// What fill set agrees with what the run had, as validate asks.
		for _, p := range []*matrixgen.Percentiles{d.TTFTMs, d.TBTMs} {
			*p.P90 = max(*p.P90, p.P50)
			*p.P99 = max(*p.P99, *p.P90)
		}
		*d.TotalTokS = float64(*d.OutputTokens) / *d.WindowSeconds
	}
	return run
}

// fill sets what v lacks; a list of a type being filled already (a
// cell's repeats are cells) is left empty, or it would never end.
func fill(v reflect.Value, filling ...reflect.Type) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
			setFigure(v.Elem())
		}
		fill(v.Elem(), filling...)
	case reflect.Slice:
		if v.Len() == 0 && !slices.Contains(filling, v.Type().Elem()) {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			setFigure(v.Index(0))
		}
		for i := range v.Len() {
			fill(v.Index(i), filling...)
		}
	case reflect.Struct:
		filling = append(filling, v.Type())
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), filling...)
			}
		}
	}
}

func entryOf(t *testing.T, id string, run *matrixgen.Run) runfile.Entry {
	t.Helper()
	raw, err := runfile.Encode(run)
	if err != nil {
		t.Fatal(err)
	}
	return runfile.Entry{ID: id, Run: run, Raw: raw}
}

// countPlaces is how many places eachPlace visits in run.
func countPlaces(run *matrixgen.Run) int {
	n := 0
	eachPlace(reflect.ValueOf(run).Elem(), "run", func(string, reflect.Value) bool { n++; return false })
	return n
}

// changePlace changes the i-th place of run as change says: "unset" (nil,
// or an empty list), "zero" (a pointer to its type's zero) or "set" (a
// pointer to a figure, where it was nil). It names the place, and says
// whether it changed anything.
func changePlace(run *matrixgen.Run, i int, change string) (string, bool) {
	var name string
	changed := false
	eachPlace(reflect.ValueOf(run).Elem(), "run", func(path string, v reflect.Value) bool {
		if i--; i >= 0 {
			return false
		}
		name = path
		switch {
		case change == "unset" && !v.IsNil():
			v.SetZero()
			changed = true
		case change == "zero" && v.Kind() == reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			changed = true
		case change == "set" && v.Kind() == reflect.Pointer && v.IsNil():
			p := reflect.New(v.Type().Elem())
			setFigure(p.Elem())
			v.Set(p)
			changed = true
		}
		return true
	})
	return name, changed
}

// setFigure gives v, a new value, a plausible figure of its kind.
func setFigure(v reflect.Value) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("x")
	}
}

// eachPlace calls f with every pointer and list under v (a list's first
// and last elements walked), by its path, until f says it is done.
func eachPlace(v reflect.Value, path string, f func(string, reflect.Value) bool) bool {
	switch v.Kind() {
	case reflect.Pointer:
		if f(path, v) {
			return true
		}
		return !v.IsNil() && eachPlace(v.Elem(), path, f)
	case reflect.Slice:
		if f(path, v) {
			return true
		}
		ends := []int{0, v.Len() - 1}
		if v.Len() < 2 {
			ends = ends[:v.Len()]
		}
		for _, i := range ends {
			if eachPlace(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			field := v.Type().Field(i)
			if field.IsExported() && eachPlace(v.Field(i), path+"."+strings.ToLower(field.Name), f) {
				return true
			}
		}
	}
	return false
}
