package render

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// TestShownRunCutsOnlyWhatIsTooLong: a name past maxShownName and any
// string past maxShownText, however deep, are cut in a copy; a run with
// neither (a long launch command is usual) is shown as it is, uncopied.
func TestShownRunCutsOnlyWhatIsTooLong(t *testing.T) {
	r := testrun.Full(2)
	r.LaunchCommand = strings.Repeat("--flag ", 300)
	if shownRun(r) != r {
		t.Error("a run with nothing too long was copied")
	}

	r.Model.Name = strings.Repeat("m", maxShownName+1)
	var looped *matrixgen.Decode
	for i := range r.Decode {
		if r.Decode[i].Loop != nil {
			looped = &r.Decode[i]
		}
	}
	if looped == nil {
		t.Fatal("the synthetic run has no looped cell")
	}
	looped.Loop.Excerpt = strings.Repeat("x", maxShownText+1)
	shown := shownRun(r)
	if shown == r {
		t.Fatal("a run with too long strings was not copied")
	}
	if got := len(shown.Model.Name); got > maxShownName+len("…") {
		t.Errorf("model name shown at %d bytes", got)
	}
	for _, d := range shown.Decode {
		if d.Loop != nil && len(d.Loop.Excerpt) > maxShownText+len("…") {
			t.Errorf("loop excerpt shown at %d bytes", len(d.Loop.Excerpt))
		}
	}
	if len(r.Model.Name) != maxShownName+1 || len(looped.Loop.Excerpt) != maxShownText+1 {
		t.Error("cutting the copy cut the run")
	}
	if shown.LaunchCommand != r.LaunchCommand {
		t.Error("a launch command under maxShownText was cut")
	}
}

// TestShownRunCutsEveryString fills every string a run can hold, however
// deep (a repeat of a cell included), past maxShownText and checks the run
// shown holds none past it and the run itself is unchanged: a string added
// to the run's types and not to shownRun fails here.
func TestShownRunCutsEveryString(t *testing.T) {
	long := strings.Repeat("x", 2*maxShownText)
	r := new(matrixgen.Run)
	fillStrings(reflect.ValueOf(r).Elem(), long, 0)
	shown := shownRun(r)
	forEachString(reflect.ValueOf(shown).Elem(), "run", func(path string, s string) {
		if len(s) > maxShownText+len("…") {
			t.Errorf("%s shown at %d bytes", path, len(s))
		}
	})
	forEachString(reflect.ValueOf(r).Elem(), "run", func(path string, s string) {
		if s != long {
			t.Errorf("%s of the run itself was cut", path)
		}
	})
}

// fillStrings sets every string reachable from v to s, making one element
// of each list and a value for each pointer, repeats two deep.
func fillStrings(v reflect.Value, s string, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillStrings(v.Elem(), s, depth)
	case reflect.Slice:
		if depth < 2 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			fillStrings(v.Index(0), s, depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillStrings(v.Field(i), s, depth)
			}
		}
	}
}

// forEachString calls f with every string reachable from v and its path.
func forEachString(v reflect.Value, path string, f func(path, s string)) {
	switch v.Kind() {
	case reflect.String:
		f(path, v.String())
	case reflect.Pointer:
		if !v.IsNil() {
			forEachString(v.Elem(), path, f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			forEachString(v.Index(i), path+"["+strconv.Itoa(i)+"]", f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				forEachString(v.Field(i), path+"."+v.Type().Field(i).Name, f)
			}
		}
	}
}
