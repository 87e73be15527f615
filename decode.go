package matrixgen

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxDepth bounds nesting in a run file. The format nests four deep; anything
// far deeper is hostile input, refused before it can exhaust the stack.
const maxDepth = 32

// DecodeError is one problem in a run file, placed so a person can go to it:
// file, line, column, and the field's path (decode[3].total_tok_s).
type DecodeError struct {
	File  string
	Line  int // 1-based; 0 when the problem has no single place.
	Col   int // 1-based byte column.
	Field string
	Msg   string
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// DecodeRun reads a run file strictly. Unknown or duplicate fields, wrong
// types, trailing data, invalid UTF-8 and impossible values are all errors
// naming file, line:column and field; several problems come back joined.
//
// It reads in three passes: a structural walk that knows every field's place,
// encoding/json for the types, and Validate for values. Only the first pass
// keeps positions, and the others look theirs up in it.
func DecodeRun(file string, data []byte) (*Run, error) {
	src := source{file: file, data: data}
	if i := invalidUTF8(data); i >= 0 {
		return nil, src.errAt(int64(i), "", "invalid UTF-8")
	}
	w := walker{src: src, dec: json.NewDecoder(bytes.NewReader(data)), places: map[string]int64{}}
	w.dec.UseNumber()
	if err := w.document(reflect.TypeFor[Run]()); err != nil {
		return nil, err
	}
	var run Run
	if err := json.Unmarshal(data, &run); err != nil {
		return nil, src.jsonErr(err, w.places)
	}
	if problems := run.Validate(); len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = src.errAt(w.place(p.Field), p.Field, p.Msg)
		}
		return nil, errors.Join(errs...)
	}
	return &run, nil
}

// source is a file's name and bytes, for turning offsets into line:column.
type source struct {
	file string
	data []byte
}

func (s source) errAt(off int64, field, msg string) *DecodeError {
	e := &DecodeError{File: s.file, Field: field, Msg: msg}
	if off >= 0 {
		e.Line, e.Col = lineCol(s.data, off)
	}
	return e
}

// jsonErr places an encoding/json error. Type errors carry an offset just
// past the bad value; the walker's places give the field's own start.
func (s source) jsonErr(err error, places map[string]int64) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field, off := lastPlaceBefore(places, typeErr.Offset)
		msg := fmt.Sprintf("want %s, got %s", kindName(typeErr.Type), typeErr.Value)
		return s.errAt(off, field, msg)
	case errors.As(err, &syntaxErr):
		return s.errAt(syntaxErr.Offset, "", syntaxErr.Error())
	}
	// The walker has already placed every error it can; what is left has no
	// single place.
	return s.errAt(-1, "", strings.TrimPrefix(err.Error(), "json: "))
}

// lastPlaceBefore finds the field that starts last before off: the one
// encoding/json was reading when it stopped, with its array indices.
func lastPlaceBefore(places map[string]int64, off int64) (field string, at int64) {
	at = -1
	for f, o := range places {
		if o < off && (o > at || o == at && len(f) > len(field)) {
			field, at = f, o
		}
	}
	return field, at
}

// lineCol turns a byte offset into a 1-based line and byte column.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// walker checks a document's structure against a Go type: every key known
// and present once, nesting bounded, nothing after the value. It records
// where each field starts so later passes can place their errors.
type walker struct {
	src    source
	dec    *json.Decoder
	places map[string]int64
	depth  int
}

func (w *walker) document(t reflect.Type) error {
	if err := w.value("", t); err != nil {
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return w.src.errAt(w.start(), "", "unexpected data after the run object")
	}
	return nil
}

// place returns where a field starts, or where its nearest recorded parent
// does, so a missing field is reported at the object that lacks it.
func (w *walker) place(field string) int64 {
	for {
		if off, ok := w.places[field]; ok {
			return off
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			return w.places[""]
		}
		field = field[:i]
	}
}

// start is the offset of the next token, past whitespace and separators.
func (w *walker) start() int64 {
	off := w.dec.InputOffset()
	for off < int64(len(w.src.data)) && strings.IndexByte(" \t\r\n,:", w.src.data[off]) >= 0 {
		off++
	}
	return off
}

func (w *walker) token() (json.Token, int64, error) {
	off := w.start()
	tok, err := w.dec.Token()
	if err != nil {
		var syntaxErr *json.SyntaxError
		if errors.As(err, &syntaxErr) {
			off = syntaxErr.Offset
		}
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			msg = "unexpected end of file"
		}
		return nil, off, w.src.errAt(off, "", msg)
	}
	return tok, off, nil
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

func (w *walker) value(path string, t reflect.Type) error {
	tok, off, err := w.token()
	if err != nil {
		return err
	}
	if _, keyed := w.places[path]; !keyed {
		w.places[path] = off // array elements and the root; object keys are placed already
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && reflect.PointerTo(t).Implements(textUnmarshaler) {
		return w.text(path, off, tok, t)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // scalars are typed by the next pass
	}
	if w.depth++; w.depth > maxDepth {
		return w.src.errAt(off, path, fmt.Sprintf("nested more than %d deep", maxDepth))
	}
	defer func() { w.depth-- }()
	switch delim {
	case '{':
		return w.object(path, t)
	case '[':
		return w.array(path, t)
	}
	return w.src.errAt(off, path, fmt.Sprintf("unexpected %q", delim))
}

// text checks a value that decodes itself from a string (a status, a time)
// here, where its place is known; encoding/json would report it placeless.
func (w *walker) text(path string, off int64, tok json.Token, t reflect.Type) error {
	off = w.places[path]
	s, ok := tok.(string)
	if !ok {
		if _, isDelim := tok.(json.Delim); isDelim {
			return w.src.errAt(off, path, "want a string")
		}
		if tok == nil {
			return nil // null leaves the zero value, as encoding/json does
		}
		return w.src.errAt(off, path, fmt.Sprintf("want a string, got %v", tok))
	}
	v := reflect.New(t).Interface().(encoding.TextUnmarshaler)
	if err := v.UnmarshalText([]byte(s)); err != nil {
		return w.src.errAt(off, path, err.Error())
	}
	return nil
}

func (w *walker) object(path string, t reflect.Type) error {
	var fields map[string]reflect.Type
	switch {
	case t == nil, t.Kind() == reflect.Map, t.Kind() == reflect.Interface:
	case t.Kind() == reflect.Struct:
		fields = jsonFields(t)
	default:
		return w.src.errAt(w.places[path], path, fmt.Sprintf("want %s, got an object", kindName(t)))
	}
	seen := map[string]bool{}
	for w.dec.More() {
		tok, off, err := w.token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		field := joinPath(path, key)
		if seen[key] {
			return w.src.errAt(off, field, "field appears twice")
		}
		seen[key] = true
		var ft reflect.Type
		switch {
		case fields != nil:
			var known bool
			if ft, known = fields[key]; !known {
				return w.src.errAt(off, field, "unknown field")
			}
		case t != nil && t.Kind() == reflect.Map:
			ft = t.Elem()
		}
		w.places[field] = off // the key, not its value, is where a person looks
		if err := w.value(field, ft); err != nil {
			return err
		}
	}
	_, _, err := w.token() // '}'
	return err
}

func (w *walker) array(path string, t reflect.Type) error {
	var elem reflect.Type
	if t != nil {
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array && t.Kind() != reflect.Interface {
			return w.src.errAt(w.places[path], path, fmt.Sprintf("want %s, got an array", kindName(t)))
		}
		if t.Kind() != reflect.Interface {
			elem = t.Elem()
		}
	}
	for i := 0; w.dec.More(); i++ {
		if err := w.value(path+"["+strconv.Itoa(i)+"]", elem); err != nil {
			return err
		}
	}
	_, _, err := w.token() // ']'
	return err
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	}
	return t.Kind().String()
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps a struct's JSON names to field types, as encoding/json
// would name them, but matched exactly: "Schema" is not "schema" here.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	fieldCache.Store(t, m)
	return m
}
