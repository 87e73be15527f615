package matrixgen

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// decoder reads a run file in one pass: JSON syntax, the run's structure
// (every key known and present once) and Go types together, each problem
// placed at its line, column and field. A build reads every run file of a
// site, and one pass over the bytes, with no intermediate form, is most of
// what makes it fast: reading with a structure walk and then encoding/json
// took four times as long.
//
// When places is set it also notes where every field starts, so problems
// Validate finds later can be placed too.
type decoder struct {
	src    source
	data   []byte
	pos    int
	depth  int
	path   []segment
	places map[string]int64

	// floats and ints back the run's many optional numbers (*float64,
	// *int): one allocation for dozens of them instead of one each.
	floats []float64
	ints   []int
}

// segment is one step of a field path: a key, or an index when key is nil.
type segment struct {
	key   []byte
	index int
	at    int // where the key (or element) starts
}

// shape is how a Go type is read from JSON.
type shape uint8

const (
	shapeString shape = iota
	shapeBool
	shapeInt
	shapeFloat
	shapeText // decodes itself from a string: Status, time.Time
	shapeStruct
	shapeSlice
	shapePointer
)

// plan is what the decoder knows of a Go type, worked out once per type
// rather than looked up by reflection at every value.
type plan struct {
	shape  shape
	typ    reflect.Type
	elem   *plan       // slices and pointers
	fields []fieldPlan // structs, by their JSON names
	index  map[string]int
}

type fieldPlan struct {
	name  string
	index int // the field's index in its struct
	plan  *plan
}

// maxFields bounds a struct's fields: the decoder marks the ones it has
// seen in one machine word.
const maxFields = 64

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// runPlan is the plan of Run, made on first use.
var runPlan = sync.OnceValues(func() (*plan, error) {
	return planFor(reflect.TypeFor[Run](), map[reflect.Type]*plan{})
})

// planFor works out how to read t. Kinds a run file does not use are an
// error: the decoder would not know how to read them strictly.
func planFor(t reflect.Type, made map[reflect.Type]*plan) (*plan, error) {
	if p, ok := made[t]; ok {
		return p, nil
	}
	p := &plan{typ: t}
	made[t] = p
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		p.shape = shapeText
		return p, nil
	}
	var err error
	switch t.Kind() {
	case reflect.String:
		p.shape = shapeString
	case reflect.Bool:
		p.shape = shapeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.shape = shapeInt
	case reflect.Float32, reflect.Float64:
		p.shape = shapeFloat
	case reflect.Slice:
		p.shape = shapeSlice
		p.elem, err = planFor(t.Elem(), made)
	case reflect.Pointer:
		p.shape = shapePointer
		p.elem, err = planFor(t.Elem(), made)
	case reflect.Struct:
		p.shape = shapeStruct
		err = p.planFields(made)
	default:
		err = fmt.Errorf("run files have no %s values (%s)", t.Kind(), t)
	}
	return p, err
}

func (p *plan) planFields(made map[reflect.Type]*plan) error {
	p.index = map[string]int{}
	for name, f := range jsonFields(p.typ) {
		fp, err := planFor(f.Type, made)
		if err != nil {
			return err
		}
		p.index[name] = len(p.fields)
		p.fields = append(p.fields, fieldPlan{name: name, index: f.Index[0], plan: fp})
	}
	if len(p.fields) > maxFields {
		return fmt.Errorf("%s has %d JSON fields; the decoder reads at most %d", p.typ, len(p.fields), maxFields)
	}
	return nil
}

// jsonFields yields a struct's fields by the names encoding/json gives
// them, but matched exactly: "Schema" is not "schema" here.
func jsonFields(t reflect.Type) func(yield func(string, reflect.StructField) bool) {
	return func(yield func(string, reflect.StructField) bool) {
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
			if !yield(name, f) {
				return
			}
		}
	}
}

// document reads the whole file into v, which p describes.
func (d *decoder) document(v reflect.Value, p *plan) error {
	if d.places != nil {
		d.places[""] = int64(d.skipSpace())
	}
	if err := d.value(v, p); err != nil {
		return err
	}
	if d.skipSpace() < len(d.data) {
		return d.fail(d.pos, "unexpected data after the run object")
	}
	return nil
}

func (d *decoder) skipSpace() int {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\r', '\n':
			d.pos++
		default:
			return d.pos
		}
	}
	return d.pos
}

// value reads one value into v.
func (d *decoder) value(v reflect.Value, p *plan) error {
	start := d.skipSpace()
	if start >= len(d.data) {
		return d.fail(start, "unexpected end of file")
	}
	c := d.data[start]
	if c == 'n' {
		// null leaves a value as it was and empties a pointer or a
		// slice, as encoding/json does.
		if err := d.literal("null"); err != nil {
			return err
		}
		if p.shape == shapePointer || p.shape == shapeSlice {
			v.SetZero()
		}
		return nil
	}
	switch p.shape {
	case shapePointer:
		if v.IsNil() {
			d.allocate(v, p.elem.typ)
		}
		return d.value(v.Elem(), p.elem)
	case shapeStruct:
		if c != '{' {
			return d.mismatch(start, p)
		}
		return d.object(v, p)
	case shapeSlice:
		if c != '[' {
			return d.mismatch(start, p)
		}
		return d.array(v, p)
	case shapeText:
		return d.text(v, start)
	case shapeString:
		if c != '"' {
			return d.mismatch(start, p)
		}
		s, err := d.str()
		if err != nil {
			return err
		}
		v.SetString(string(s))
	case shapeBool:
		switch c {
		case 't':
			v.SetBool(true)
			return d.literal("true")
		case 'f':
			v.SetBool(false)
			return d.literal("false")
		}
		return d.mismatch(start, p)
	case shapeInt:
		if c != '-' && (c < '0' || c > '9') {
			return d.mismatch(start, p)
		}
		return d.integer(v)
	case shapeFloat:
		if c != '-' && (c < '0' || c > '9') {
			return d.mismatch(start, p)
		}
		return d.float(v)
	}
	return nil
}

// allocate points v at a new zero value of t, taken from a shared backing
// array for the run's common optional numbers.
func (d *decoder) allocate(v reflect.Value, t reflect.Type) {
	switch t {
	case reflect.TypeFor[float64]():
		if len(d.floats) == cap(d.floats) {
			d.floats = make([]float64, 0, 128)
		}
		d.floats = d.floats[:len(d.floats)+1]
		v.Set(reflect.ValueOf(&d.floats[len(d.floats)-1]))
	case reflect.TypeFor[int]():
		if len(d.ints) == cap(d.ints) {
			d.ints = make([]int, 0, 64)
		}
		d.ints = d.ints[:len(d.ints)+1]
		v.Set(reflect.ValueOf(&d.ints[len(d.ints)-1]))
	default:
		v.Set(reflect.New(t))
	}
}

// mismatch reports a value of the wrong kind at its field, or says what
// is there when it is no JSON value at all.
func (d *decoder) mismatch(start int, p *plan) error {
	var got string
	switch c := d.data[start]; {
	case c == '{':
		got = "an object"
	case c == '[':
		got = "an array"
	case c == '"':
		got = "a string"
	case c == 't' || c == 'f':
		got = "true or false"
	case c == '-' || c >= '0' && c <= '9':
		got = "a number"
	default:
		r, _ := utf8.DecodeRune(d.data[start:])
		return d.fail(start, fmt.Sprintf("invalid character %q looking for a value", r))
	}
	return d.failField(start, fmt.Sprintf("want %s, got %s", kindName(p.typ), got))
}

func (d *decoder) object(v reflect.Value, p *plan) error {
	open := d.pos
	if d.depth++; d.depth > maxDepth {
		return d.fail(open, fmt.Sprintf("nested more than %d deep", maxDepth))
	}
	d.pos++ // '{'
	if d.skipSpace() < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return nil
	}
	var seen uint64
	for {
		at := d.skipSpace()
		if at >= len(d.data) || d.data[at] != '"' {
			return d.expectKey(at)
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		d.path = append(d.path, segment{key: key, at: at})
		i, known := p.index[string(key)]
		if !known {
			return d.fail(at, "unknown field")
		}
		if seen&(1<<i) != 0 {
			return d.fail(at, "field appears twice")
		}
		seen |= 1 << i
		if d.places != nil {
			d.places[d.pathString()] = int64(at) // the key is where a person looks
		}
		if err := d.expect(':', "after object key"); err != nil {
			return err
		}
		f := p.fields[i]
		if err := d.value(v.Field(f.index), f.plan); err != nil {
			return err
		}
		d.path = d.path[:len(d.path)-1]
		if done, err := d.nextOrEnd('}', "after object value"); done || err != nil {
			d.depth--
			return err
		}
	}
}

func (d *decoder) array(v reflect.Value, p *plan) error {
	open := d.pos
	if d.depth++; d.depth > maxDepth {
		return d.fail(open, fmt.Sprintf("nested more than %d deep", maxDepth))
	}
	d.pos++ // '['
	v.SetLen(0)
	if d.skipSpace() < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		if v.IsNil() {
			v.Set(reflect.MakeSlice(p.typ, 0, 0))
		}
		return nil
	}
	for i := 0; ; i++ {
		at := d.skipSpace()
		d.path = append(d.path, segment{index: i, at: at})
		if d.places != nil {
			d.places[d.pathString()] = int64(at)
		}
		if i == v.Cap() {
			v.Grow(1)
		}
		v.SetLen(i + 1)
		if err := d.value(v.Index(i), p.elem); err != nil {
			return err
		}
		d.path = d.path[:len(d.path)-1]
		if done, err := d.nextOrEnd(']', "after array element"); done || err != nil {
			d.depth--
			return err
		}
	}
}

// text reads a value that decodes itself from a string (a status, a time)
// and places its complaint at the field.
func (d *decoder) text(v reflect.Value, start int) error {
	if d.data[start] != '"' {
		return d.failField(start, "want a string")
	}
	s, err := d.str()
	if err != nil {
		return err
	}
	if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText(s); err != nil {
		return d.failField(start, err.Error())
	}
	return nil
}

// str reads the string at pos and returns its contents: the document's
// own bytes when it has no escapes, as keys and most values do.
func (d *decoder) str() ([]byte, error) {
	start := d.pos
	for i := start + 1; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return d.data[start+1 : i], nil
		case c == '\\':
			return d.unescape(start, i)
		case c < 0x20:
			return nil, d.fail(i, "control character in a string")
		}
	}
	return nil, d.fail(start, "unterminated string")
}

// unescape finishes a string that has escapes, from the first at i.
func (d *decoder) unescape(start, i int) ([]byte, error) {
	out := append([]byte(nil), d.data[start+1:i]...)
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return out, nil
		case c < 0x20:
			return nil, d.fail(i, "control character in a string")
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(d.data) {
			break
		}
		switch e := d.data[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(d.data[i+2:])
			if !ok {
				return nil, d.fail(i, `invalid \u escape in a string`)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// A pair makes one character; a lone half is U+FFFD, as
				// encoding/json reads it.
				r2, ok := rune(-1), false
				if i+1 < len(d.data) && d.data[i] == '\\' && d.data[i+1] == 'u' {
					r2, ok = hex4(d.data[i+2:])
				}
				if pair := utf16.DecodeRune(r, r2); ok && pair != utf8.RuneError {
					r = pair
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, d.fail(i, fmt.Sprintf("invalid escape %q in a string", d.data[i:i+2]))
		}
		i += 2
	}
	return nil, d.fail(start, "unterminated string")
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (d *decoder) literal(lit string) error {
	if len(d.data)-d.pos < len(lit) || string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return d.fail(d.pos, "invalid literal; want "+lit)
	}
	d.pos += len(lit)
	return nil
}

// number reads a number at pos by JSON's grammar and returns its text,
// and whether it is a whole number without an exponent.
func (d *decoder) number() (text []byte, whole bool, err error) {
	start, i := d.pos, d.pos
	digits := func() int {
		from := i
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
		return i - from
	}
	if d.data[i] == '-' {
		i++
	}
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case digits() == 0:
		return nil, false, d.badNumber(i)
	}
	whole = true
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false, d.badNumber(i)
		}
		whole = false
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false, d.badNumber(i)
		}
		whole = false
	}
	d.pos = i
	return d.data[start:i], whole, nil
}

func (d *decoder) badNumber(at int) error {
	if at >= len(d.data) {
		return d.fail(at, "unexpected end of file")
	}
	r, _ := utf8.DecodeRune(d.data[at:])
	return d.fail(at, fmt.Sprintf("invalid character %q in a number", r))
}

func (d *decoder) integer(v reflect.Value) error {
	start := d.pos
	text, whole, err := d.number()
	if err != nil {
		return err
	}
	if !whole {
		return d.failField(start, fmt.Sprintf("want a whole number, got %s", text))
	}
	n, ok := parseInt(text)
	if !ok || v.OverflowInt(n) {
		return d.failField(start, fmt.Sprintf("want a whole number, got %s: out of range", text))
	}
	v.SetInt(n)
	return nil
}

// parseInt reads a whole number's text (JSON grammar, already checked),
// without converting it to a string as strconv would need.
func parseInt(text []byte) (int64, bool) {
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	if len(text) > 18 { // might not fit: let strconv judge
		n, err := strconv.ParseInt(string(text), 10, 64)
		if neg {
			n = -n
		}
		return n, err == nil
	}
	var n int64
	for _, c := range text {
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func (d *decoder) float(v reflect.Value) error {
	start := d.pos
	text, _, err := d.number()
	if err != nil {
		return err
	}
	f, err := strconv.ParseFloat(string(text), v.Type().Bits())
	if err != nil {
		return d.failField(start, fmt.Sprintf("want a number, got %s: out of range", text))
	}
	v.SetFloat(f)
	return nil
}

// expect consumes the separator c, or says what was there instead.
func (d *decoder) expect(c byte, what string) error {
	at := d.skipSpace()
	if at >= len(d.data) {
		return d.fail(at, "unexpected end of file")
	}
	if d.data[at] != c {
		return d.fail(at, fmt.Sprintf("invalid character %q %s", d.data[at], what))
	}
	d.pos++
	return nil
}

func (d *decoder) expectKey(at int) error {
	if at >= len(d.data) {
		return d.fail(at, "unexpected end of file")
	}
	return d.fail(at, fmt.Sprintf("invalid character %q looking for an object key", d.data[at]))
}

// nextOrEnd consumes a ',' (more to come) or the closing delimiter (done).
func (d *decoder) nextOrEnd(end byte, what string) (done bool, err error) {
	at := d.skipSpace()
	switch {
	case at >= len(d.data):
		return true, d.fail(at, "unexpected end of file")
	case d.data[at] == ',':
		d.pos++
		return false, nil
	case d.data[at] == end:
		d.pos++
		return true, nil
	}
	return true, d.fail(at, fmt.Sprintf("invalid character %q %s", d.data[at], what))
}

// pathString renders the current path: decode[3].total_tok_s.
func (d *decoder) pathString() string {
	var b strings.Builder
	for _, s := range d.path {
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
func (d *decoder) failField(off int, msg string) error {
	if len(d.path) > 0 {
		off = d.path[len(d.path)-1].at
	}
	return d.fail(off, msg)
}

func (d *decoder) fail(off int, msg string) error {
	return d.src.errAt(int64(off), d.pathString(), msg)
}

func kindName(t reflect.Type) string {
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	}
	return t.Kind().String()
}
