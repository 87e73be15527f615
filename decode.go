package matrixgen

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
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
// It reads the file in one pass (parse.go) and then checks values with
// Validate; only when Validate finds a problem is the file read again,
// noting where each field starts, to place it.
func DecodeRun(file string, data []byte) (*Run, error) {
	src := source{file: file, data: data}
	if i := invalidUTF8(data); i >= 0 {
		return nil, src.errAt(int64(i), "", "invalid UTF-8")
	}
	p, err := runPlan()
	if err != nil {
		return nil, err
	}
	var run Run
	if err := (&decoder{src: src, data: data}).document(reflect.ValueOf(&run).Elem(), p); err != nil {
		return nil, err
	}
	if problems := run.Validate(); len(problems) > 0 {
		places := src.places(p)
		errs := make([]error, len(problems))
		for i, pr := range problems {
			errs[i] = src.errAt(place(places, pr.Field), pr.Field, pr.Msg)
		}
		return nil, errors.Join(errs...)
	}
	return &run, nil
}

// places maps every field path of a document that decodes to where it
// starts. It is built only when there is an error to place.
func (s source) places(p *plan) map[string]int64 {
	d := &decoder{src: s, data: s.data, places: map[string]int64{}}
	var scratch Run
	_ = d.document(reflect.ValueOf(&scratch).Elem(), p) // the document already decoded
	return d.places
}

// place returns where a field starts, or where its nearest recorded parent
// does, so a missing field is reported at the object that lacks it.
func place(places map[string]int64, field string) int64 {
	for {
		if off, ok := places[field]; ok {
			return off
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			return places[""]
		}
		field = field[:i]
	}
}

// source is a file's name and bytes, for turning offsets into line:column.
type source struct {
	file string
	data []byte
}

func (s source) errAt(off int64, field, msg string) *DecodeError {
	e := &DecodeError{File: s.file, Field: field, Msg: msg}
	if off >= 0 {
		e.Line, e.Col = LineCol(s.data, off)
	}
	return e
}

// LineCol turns a byte offset into a 1-based line and byte column: where
// an error in a file the reader can open is placed.
func LineCol(data []byte, off int64) (line, col int) {
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
