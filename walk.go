package matrixgen

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// walker checks a JSON document's structure against a Go type, byte by
// byte: every key known and present once, nesting bounded, strings that
// decode themselves (statuses, times) valid, nothing after the value. It
// allocates nothing on a good document; when asked to record (only after a
// problem is found), it also notes where every field starts so errors from
// later passes can be placed.
//
// It is deliberately lenient about what encoding/json checks anyway (number
// syntax, string escapes): json.Unmarshal runs next and reports those.
type walker struct {
	src    source
	data   []byte
	pos    int
	depth  int
	path   []segment
	record bool
	places map[string]int64
}

// segment is one step of a field path: a key, or an index when key is nil.
type segment struct {
	key   []byte
	index int
	at    int // where the key (or element) starts
}

func newWalker(src source, record bool) *walker {
	w := &walker{src: src, data: src.data}
	if record {
		w.record, w.places = true, map[string]int64{}
	}
	return w
}

// pathString renders the current path: decode[3].total_tok_s.
func (w *walker) pathString() string {
	var b strings.Builder
	for _, s := range w.path {
		if s.key == nil {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(s.key)
	}
	return b.String()
}

// failField reports a problem with the current field's value at the field's
// key, where a person reading the file looks for it.
func (w *walker) failField(off int, msg string) error {
	if len(w.path) > 0 {
		off = w.path[len(w.path)-1].at
	}
	return w.fail(off, msg)
}

func (w *walker) fail(off int, msg string) error {
	return w.src.errAt(int64(off), w.pathString(), msg)
}

func (w *walker) document(t reflect.Type) error {
	if w.record {
		w.places[""] = int64(w.skipSpace())
	}
	if err := w.value(t); err != nil {
		return err
	}
	if w.skipSpace() < len(w.data) {
		return w.fail(w.pos, "unexpected data after the run object")
	}
	return nil
}

func (w *walker) skipSpace() int {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\r', '\n':
			w.pos++
		default:
			return w.pos
		}
	}
	return w.pos
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// value reads one value of type t (nil: any type, unchecked).
func (w *walker) value(t reflect.Type) error {
	start := w.skipSpace()
	if start >= len(w.data) {
		return w.fail(start, "unexpected end of file")
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	c := w.data[start]
	if t != nil && reflect.PointerTo(t).Implements(textUnmarshaler) && c != 'n' {
		return w.text(t, start)
	}
	switch {
	case c == '{':
		return w.nested(start, func() error { return w.object(t) })
	case c == '[':
		return w.nested(start, func() error { return w.array(t) })
	case c == '"':
		_, err := w.str()
		return err
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		w.number()
		return nil
	}
	r, _ := utf8.DecodeRune(w.data[start:])
	return w.fail(start, fmt.Sprintf("invalid character %q looking for a value", r))
}

func (w *walker) nested(start int, read func() error) error {
	if w.depth++; w.depth > maxDepth {
		return w.fail(start, fmt.Sprintf("nested more than %d deep", maxDepth))
	}
	err := read()
	w.depth--
	return err
}

// text checks a value that decodes itself from a string (a status, a time)
// here, where its place is known; encoding/json would report it placeless.
func (w *walker) text(t reflect.Type, start int) error {
	if w.data[start] != '"' {
		return w.failField(start, "want a string")
	}
	s, err := w.str()
	if err != nil {
		return err
	}
	v := reflect.New(t).Interface().(encoding.TextUnmarshaler)
	if err := v.UnmarshalText(s); err != nil {
		return w.failField(start, err.Error())
	}
	return nil
}

// str reads a string at pos and returns its contents, unescaped only when
// it has escapes (keys and statuses rarely do).
func (w *walker) str() ([]byte, error) {
	start := w.pos
	w.pos++ // opening quote
	escaped := false
	for w.pos < len(w.data) {
		switch c := w.data[w.pos]; {
		case c == '\\':
			escaped = true
			w.pos += 2
		case c == '"':
			w.pos++
			raw := w.data[start:w.pos]
			if !escaped {
				return raw[1 : len(raw)-1], nil
			}
			s, err := strconv.Unquote(string(raw))
			if err != nil {
				// JSON escapes that Go's syntax lacks (\/) or surrogate pairs:
				// encoding/json will judge them; compare the raw text here.
				return raw[1 : len(raw)-1], nil
			}
			return []byte(s), nil
		case c < 0x20:
			return nil, w.fail(w.pos, "control character in a string")
		default:
			w.pos++
		}
	}
	return nil, w.fail(start, "unterminated string")
}

func (w *walker) literal(lit string) error {
	if !bytes.HasPrefix(w.data[w.pos:], []byte(lit)) {
		return w.fail(w.pos, "invalid literal; want "+lit)
	}
	w.pos += len(lit)
	return nil
}

func (w *walker) number() {
	for w.pos < len(w.data) && strings.IndexByte("+-0123456789.eE", w.data[w.pos]) >= 0 {
		w.pos++
	}
}

// expect consumes the separator c, or says what was there instead.
func (w *walker) expect(c byte, what string) error {
	at := w.skipSpace()
	if at >= len(w.data) {
		return w.fail(at, "unexpected end of file")
	}
	if w.data[at] != c {
		return w.fail(at, fmt.Sprintf("invalid character %q %s", w.data[at], what))
	}
	w.pos++
	return nil
}

func (w *walker) object(t reflect.Type) error {
	open := w.pos
	w.pos++ // '{'
	var fields map[string]reflect.Type
	switch {
	case t == nil, t.Kind() == reflect.Map, t.Kind() == reflect.Interface:
	case t.Kind() == reflect.Struct:
		fields = jsonFields(t)
	default:
		return w.failField(open, fmt.Sprintf("want %s, got an object", kindName(t)))
	}
	if w.skipSpace() < len(w.data) && w.data[w.pos] == '}' {
		w.pos++
		return nil
	}
	var seen [][]byte
	for {
		at := w.skipSpace()
		if at >= len(w.data) || w.data[at] != '"' {
			return w.expectKey(at)
		}
		key, err := w.str()
		if err != nil {
			return err
		}
		w.path = append(w.path, segment{key: key, at: at})
		for _, k := range seen {
			if bytes.Equal(k, key) {
				return w.fail(at, "field appears twice")
			}
		}
		seen = append(seen, key)
		var ft reflect.Type
		switch {
		case fields != nil:
			var known bool
			if ft, known = fields[string(key)]; !known {
				return w.fail(at, "unknown field")
			}
		case t != nil && t.Kind() == reflect.Map:
			ft = t.Elem()
		}
		if w.record {
			w.places[w.pathString()] = int64(at) // the key is where a person looks
		}
		if err := w.expect(':', "after object key"); err != nil {
			return err
		}
		if err := w.value(ft); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
		if done, err := w.nextOrEnd('}', "after object value"); done || err != nil {
			return err
		}
	}
}

func (w *walker) expectKey(at int) error {
	if at >= len(w.data) {
		return w.fail(at, "unexpected end of file")
	}
	return w.fail(at, fmt.Sprintf("invalid character %q looking for an object key", w.data[at]))
}

// nextOrEnd consumes a ',' (more to come) or the closing delimiter (done).
func (w *walker) nextOrEnd(end byte, what string) (done bool, err error) {
	at := w.skipSpace()
	switch {
	case at >= len(w.data):
		return true, w.fail(at, "unexpected end of file")
	case w.data[at] == ',':
		w.pos++
		return false, nil
	case w.data[at] == end:
		w.pos++
		return true, nil
	}
	return true, w.fail(at, fmt.Sprintf("invalid character %q %s", w.data[at], what))
}

func (w *walker) array(t reflect.Type) error {
	open := w.pos
	w.pos++ // '['
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			elem = t.Elem()
		case reflect.Interface:
		default:
			return w.failField(open, fmt.Sprintf("want %s, got an array", kindName(t)))
		}
	}
	if w.skipSpace() < len(w.data) && w.data[w.pos] == ']' {
		w.pos++
		return nil
	}
	for i := 0; ; i++ {
		w.path = append(w.path, segment{index: i, at: w.skipSpace()})
		if w.record {
			w.places[w.pathString()] = int64(w.skipSpace())
		}
		if err := w.value(elem); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
		if done, err := w.nextOrEnd(']', "after array element"); done || err != nil {
			return err
		}
	}
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
