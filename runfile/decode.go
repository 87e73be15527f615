package runfile

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
)

// Error is one problem in a run file, placed so a person can go to it:
// file, line, column, and the field's path (decode[3].total_tok_s).
type Error struct {
	File  string
	Line  int // 1-based; 0 when the problem has no single place.
	Col   int // 1-based byte column.
	Field string
	Msg   string
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += fmt.Sprintf(":%d:%d", e.Line, e.Col)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// strict is how a run file is read: unknown members, duplicate names,
// invalid UTF-8 and data after the value refused; names match exactly.
var strict = json.JoinOptions(
	json.RejectUnknownMembers(true),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
)

// Decode reads a run file strictly: unknown or duplicate fields, wrong
// types, trailing data, invalid UTF-8 and impossible values are errors
// naming file, line:column and field, all of a file's joined. Only a file
// with a problem is read again, member by member, to find them (diagnose).
func Decode(file string, data []byte) (*matrixgen.Run, error) {
	var run matrixgen.Run
	if err := json.Unmarshal(data, &run, strict); err != nil {
		return nil, diagnose(file, data, err)
	}
	var errs []error
	for _, p := range run.Validate() {
		errs = append(errs, source{file: file, data: data}.problem(p))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &run, nil
}

// Locate finds the value ptr names in a JSON document and returns where a
// person should look for it (the start of its member name or element) and
// its path as errors name it (decode[3].total_tok_s). Where ptr leads past
// what the document holds, the offset is the deepest value on the way.
func Locate(data []byte, ptr jsontext.Pointer) (offset int64, field string) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	offset = nextToken(data, 0)
	var path strings.Builder
	found := true
	for tok := range ptr.Tokens() {
		kind := jsontext.Kind(0)
		if found {
			kind = dec.PeekKind()
		}
		_, numErr := strconv.ParseUint(tok, 10, 64) // nil for an index
		if kind == '[' || kind == 0 && numErr == nil {
			path.WriteString("[" + tok + "]")
		} else {
			if path.Len() > 0 {
				path.WriteByte('.')
			}
			path.WriteString(tok)
		}
		if found {
			found = enter(dec, data, kind, tok, &offset)
		}
	}
	return offset, shortPath(path.String(), ptr)
}

// maxPathText bounds a field path in a message (a file may nest deep).
const maxPathText = 160

// shortPath cuts a long field path in its middle, saying how deep it went.
func shortPath(path string, ptr jsontext.Pointer) string {
	if len(path) <= maxPathText {
		return path
	}
	depth := len(slices.Collect(ptr.Tokens()))
	head, tail := path[:maxPathText/2], path[len(path)-maxPathText/4:]
	for len(head) > 1 && !utf8.RuneStart(path[len(head)]) { // cut before a rune, not inside it
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return fmt.Sprintf("%s…%s (%d levels deep)", head, tail, depth)
}

// enter reads into the object or array at hand up to its member or
// element tok, and says whether it is there.
func enter(dec *jsontext.Decoder, data []byte, kind jsontext.Kind, tok string, offset *int64) bool {
	if kind != '{' && kind != '[' {
		return false
	}
	index, err := strconv.Atoi(tok)
	if kind == '[' && err != nil {
		return false
	}
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	for i := 0; ; i++ {
		if k := dec.PeekKind(); k == 0 || k == '}' || k == ']' {
			return false
		}
		at := nextToken(data, dec.InputOffset())
		if kind == '[' && i == index {
			*offset = at
			return true
		}
		if kind == '{' {
			name, err := dec.ReadToken()
			if err != nil {
				return false
			}
			if name.String() == tok {
				*offset = at
				return true
			}
		}
		if dec.SkipValue() != nil {
			return false
		}
	}
}

// pointerOf turns a field path (decode[3].total_tok_s) into a JSON
// pointer (/decode/3/total_tok_s). The run's names hold no '.' or '['.
func pointerOf(field string) jsontext.Pointer {
	var p jsontext.Pointer
	for part := range strings.FieldsFuncSeq(field, func(r rune) bool { return strings.ContainsRune(".[]", r) }) {
		p = p.AppendToken(part)
	}
	return p
}

// source is a file's name and bytes, for placing its errors.
type source struct {
	file string
	data []byte
}

// problem is p placed at its field, or the nearest one above it the file has.
func (s source) problem(p matrixgen.Problem) *Error {
	off, _ := Locate(s.data, pointerOf(p.Field))
	return s.errAt(off, p.Field, p.Msg)
}

func (s source) errAt(off int64, field, msg string) *Error {
	e := &Error{File: s.file, Field: field, Msg: msg}
	if off >= 0 {
		e.Line, e.Col = LineCol(s.data, off)
	}
	return e
}

// LineCol turns a byte offset into a 1-based line and byte column.
func LineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
