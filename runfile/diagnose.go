package runfile

import (
	"bytes"
	"cmp"
	"encoding"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/suggest"
)

// diagnose finds every problem of a run file the library refused with err:
// each refused value is noted and skipped, then what decoded is validated.
// Only a syntax error ends the search early.
func diagnose(file string, data []byte, err error) error {
	d := newDiagnosis(file, data)
	problems := d.run()
	if len(problems) == 0 {
		// Never while diagnosis and library agree (the fuzz tests hold
		// them to it); else the file is refused in the library's words.
		problems = []*Error{d.src.errAt(0, "", err.Error())}
	}
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// diagnosis is one re-reading of a refused run file.
type diagnosis struct {
	src      source
	dec      *jsontext.Decoder
	problems []*Error
	// undecoded are the fields whose values the library refused or that
	// were misspelt: Validate's complaints about them would repeat ours.
	undecoded []string
}

// errEnough ends a diagnosis that has found matrixgen.MaxProblems: a
// hostile file could hold millions.
var errEnough = errors.New("enough problems")

func newDiagnosis(file string, data []byte) *diagnosis {
	// Duplicate names are found member by member, not ending the reading.
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	return &diagnosis{src: source{file: file, data: data}, dec: dec}
}

// run reads the whole file into a run, validates what decoded and returns
// every problem in file order, at most matrixgen.MaxProblems of them.
func (d *diagnosis) run() []*Error {
	var run matrixgen.Run
	err := d.value(reflect.ValueOf(&run).Elem(), "", d.next())
	switch {
	case err == nil:
		d.end()
		follows := func(p matrixgen.Problem) bool {
			return slices.ContainsFunc(d.undecoded, func(f string) bool { return readsUndecoded(p, f) })
		}
		for _, p := range run.ValidateExcept(follows) {
			d.problems = append(d.problems, d.src.problem(p))
		}
	case !errors.Is(err, errEnough):
		d.syntaxError(err)
	}
	slices.SortStableFunc(d.problems, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return d.problems[:min(len(d.problems), matrixgen.MaxProblems)]
}

// value reads the next value into v, the field at path whose name starts
// at offset at; it returns only errors that end the reading.
func (d *diagnosis) value(v reflect.Value, path string, at int64) error {
	kind := d.dec.PeekKind()
	t := v.Type()
	switch {
	case kind == 0: // a syntax error or the end of the file, which reading reports
		_, err := d.dec.ReadToken()
		return cmp.Or(err, io.ErrUnexpectedEOF)
	case kind == 'n' || decodesItself(t):
	case t.Kind() == reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return d.value(v.Elem(), path, at)
	case t.Kind() == reflect.Struct && kind == '{':
		return d.object(v, path)
	case t.Kind() == reflect.Slice && kind == '[':
		return d.array(v, path)
	}
	if want := jsonKind(t); kind != 'n' && kind != want && !(kind == 'f' && want == 't') {
		d.undecoded = append(d.undecoded, path)
		if err := d.add(at, path, fmt.Sprintf("want %s, got %s", goKindName(t), jsonKindName(kind))); err != nil {
			return err
		}
		return d.dec.SkipValue()
	}
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v.Addr().Interface(), strict); err != nil {
		d.undecoded = append(d.undecoded, path)
		return d.add(at, path, valueMessage(err))
	}
	return nil
}

// object reads an object's members into the struct v, noting unknown and
// repeated names.
func (d *diagnosis) object(v reflect.Value, path string) error {
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	fields := fieldsOf(v.Type())
	seen := make([]bool, v.NumField())
	var meant []string // known names the unknown ones were likely meant as
	for d.dec.PeekKind() != '}' {
		at := d.next()
		tok, err := d.dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		field := joinPath(path, name)
		i, known := fields[name]
		if known && !seen[i] {
			seen[i] = true
			if err := d.value(v.Field(i), field, at); err != nil {
				return err
			}
			continue
		}
		problem := "field appears twice"
		if !known {
			names := slices.Sorted(maps.Keys(fields))
			problem = "unknown field" + suggest.DidYouMean(name, names)
			if m := suggest.Nearest(name, names); m != "" {
				meant = append(meant, m)
			}
		}
		if err := d.add(at, field, problem); err != nil {
			return err
		}
		if err := d.dec.SkipValue(); err != nil {
			return err
		}
	}
	// A misspelt field is in the file: the checks that miss it (a figure
	// required, schema version 0) would follow from the misspelling.
	for _, m := range meant {
		if !seen[fields[m]] {
			d.undecoded = append(d.undecoded, joinPath(path, m))
		}
	}
	_, err := d.dec.ReadToken()
	return err
}

// joinPath is the path of the member name of the object at path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// array reads an array's elements into the slice v.
func (d *diagnosis) array(v reflect.Value, path string) error {
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	for i := 0; d.dec.PeekKind() != ']'; i++ {
		at := d.next()
		v.Grow(1)
		v.SetLen(i + 1)
		if err := d.value(v.Index(i), path+"["+strconv.Itoa(i)+"]", at); err != nil {
			return err
		}
	}
	_, err := d.dec.ReadToken()
	return err
}

// end checks that nothing follows the run object.
func (d *diagnosis) end() {
	at := d.next()
	if _, err := d.dec.ReadToken(); !errors.Is(err, io.EOF) {
		d.add(at, "", "unexpected data after the run object")
	}
}

// syntaxError notes the error that ended the reading, at its place.
func (d *diagnosis) syntaxError(err error) {
	serr, ok := errors.AsType[*jsontext.SyntacticError](err)
	if !ok {
		d.add(int64(len(d.src.data)), "", "unexpected end of file")
		return
	}
	_, field := Locate(d.src.data, serr.JSONPointer)
	if len(field) > maxFieldShown { // within hostile nesting
		field = field[:max(strings.LastIndexAny(field[:maxFieldShown], ".["), 1)] + "…"
	}
	msg := "syntax error"
	switch {
	case errors.Is(serr.Err, io.ErrUnexpectedEOF):
		msg = "unexpected end of file"
	case serr.Err != nil:
		msg = serr.Err.Error()
	}
	d.add(serr.ByteOffset, field, msg)
}

// maxFieldShown bounds a field path in a syntax error's message.
const maxFieldShown = 100

// add notes a problem; errEnough when it is the last a file reports.
func (d *diagnosis) add(at int64, field, msg string) error {
	d.problems = append(d.problems, d.src.errAt(at, field, msg))
	if len(d.problems) >= matrixgen.MaxProblems {
		return errEnough
	}
	return nil
}

// next is where the next token starts, past whitespace and separators.
func (d *diagnosis) next() int64 { return nextToken(d.src.data, d.dec.InputOffset()) }

func nextToken(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

// valueMessage says what was wrong with a value the library refused: for a
// number, what was wanted; else the type's own complaint.
func valueMessage(err error) string {
	switch serr, ok := errors.AsType[*json.SemanticError](err); {
	case !ok || serr.Err == nil || serr.GoType == nil:
		return strings.TrimPrefix(err.Error(), "json: ")
	case errors.Is(serr.Err, strconv.ErrRange):
		return fmt.Sprintf("want %s, got %s: out of range", goKindName(serr.GoType), serr.JSONValue)
	case errors.Is(serr.Err, strconv.ErrSyntax):
		return fmt.Sprintf("want %s, got %s", goKindName(serr.GoType), serr.JSONValue)
	default:
		return serr.Err.Error()
	}
}

// readsUndecoded reports whether a problem is about the undecoded field f
// or read it (the decoder's error says it first); one placed at an object
// holding f, naming in Uses the members it read, read only those.
func readsUndecoded(p matrixgen.Problem, f string) bool {
	if slices.ContainsFunc(p.Uses, func(u string) bool { return related(f, u) }) {
		return true
	}
	if holds(p.Field, f) && slices.ContainsFunc(p.Uses, func(u string) bool { return holds(p.Field, u) }) {
		return false
	}
	return related(f, p.Field)
}

// holds reports whether the field path inner lies inside outer.
func holds(outer, inner string) bool {
	return len(inner) > len(outer) && related(outer, inner)
}

// related reports whether one field path is the other or holds it.
func related(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == "" || a == b || strings.HasPrefix(b, a) && (b[len(a)] == '.' || b[len(a)] == '[')
}

// decodesItself reports whether t reads itself from a string (a time).
func decodesItself(t reflect.Type) bool {
	return t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// fieldsOf maps a struct's JSON names to its fields' indexes.
func fieldsOf(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		out[cmp.Or(name, f.Name)] = i
	}
	return out
}

// jsonKind is the kind of JSON value a Go type reads from.
func jsonKind(t reflect.Type) jsontext.Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case decodesItself(t) || t.Kind() == reflect.String:
		return '"'
	case t.Kind() == reflect.Bool:
		return 't'
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return '{'
	case t.Kind() == reflect.Slice:
		return '['
	}
	return '0'
}

// goKindName says what a Go type wants, in the words of an error.
func goKindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return jsonKindName(jsonKind(t))
}

var kindNames = map[jsontext.Kind]string{
	'{': "an object", '[': "an array", '"': "a string",
	't': "true or false", 'f': "true or false", '0': "a number",
}

func jsonKindName(k jsontext.Kind) string { return cmp.Or(kindNames[k], "null") }
