// Package importer converts other benchmark tools' result files into run
// files: figures as the tools measured them, converted only in units, what
// a format lacks left out, and notes saying where they came from.
package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/runfile"
)

// Result is an imported run and the notes that say what was done to it.
type Result struct {
	Run   *matrixgen.Run
	Notes []string
}

// object is a decoded JSON object, read leniently: other tools add fields
// from version to version, and a missing one is simply left out.
type object map[string]any

func (o object) num(key string) (float64, bool) {
	switch v := o[key].(type) {
	case float64:
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

func (o object) intField(key string) (int, bool) {
	f, ok := o.num(key)
	if !ok || f != math.Trunc(f) || f < 0 || f > 1<<40 {
		return 0, false
	}
	return int(f), true
}

func (o object) str(key string) string {
	switch v := o[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func (o object) boolField(key string) bool {
	b, _ := o[key].(bool)
	return b
}

func (o object) obj(key string) object {
	m, _ := o[key].(map[string]any)
	return m
}

// positive is v, for an optional figure or count, when the source had it,
// not negative.
func positive[T int | float64](v T, ok bool) *T {
	if !ok || v < 0 {
		return nil
	}
	return &v
}

// decodeObject reads another tool's result file: a repeated key is an
// error, placed; invalid UTF-8 is read as U+FFFD, as encoding/json did.
func decodeObject(name string, data []byte) (object, error) {
	var members map[string]jsontext.Value
	err := json.Unmarshal(data, &members, jsontext.AllowInvalidUTF8(true))
	if err == nil {
		return materialize(members)
	}
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return nil, fmt.Errorf("%s: the key %q appears twice in one object; which one is meant?", place(name, data, syn.ByteOffset, syn.JSONPointer), syn.JSONPointer.LastToken())
	case errors.As(err, &syn) && errors.Is(syn.Err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%s: unexpected end of file", place(name, data, syn.ByteOffset, syn.JSONPointer))
	case errors.As(err, &syn):
		return nil, fmt.Errorf("%s: %v", place(name, data, syn.ByteOffset, syn.JSONPointer), syn.Err)
	case errors.As(err, &sem) && sem.JSONPointer != "":
		return nil, fmt.Errorf("%s: %v", place(name, data, sem.ByteOffset, sem.JSONPointer), sem.Err)
	}
	return nil, fmt.Errorf("%s: want a JSON object: %v", name, err)
}

// maxMemberValues bounds the JSON values of the top-level members read into
// Go values, all together (boxed, 60 MB of numbers took 800 MB): the
// sections read hold a few thousand; larger ones (vLLM's itls) stay bytes.
const maxMemberValues = 1_000_000

// oversized stands for a member too large to read: its count of values,
// for the format that needs it to say so.
type oversized int

// materialize reads each top-level member into Go values, but those past
// maxMemberValues, which stay oversized.
func materialize(members map[string]jsontext.Value) (object, error) {
	o := make(object, len(members))
	budget := maxMemberValues // for the whole file: 33 members of a million each took 1.1 GB
	for _, key := range slices.Sorted(maps.Keys(members)) {
		raw := members[key]
		n := countValues(raw, budget)
		if n > budget {
			o[key] = oversized(n)
			continue
		}
		budget -= n
		var v any
		if err := json.Unmarshal(raw, &v, jsontext.AllowInvalidUTF8(true)); err != nil {
			return nil, err
		}
		o[key] = v
	}
	return o, nil
}

// countValues counts the JSON values in raw, up to one past limit.
func countValues(raw jsontext.Value, limit int) int {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	n := 0
	for n <= limit {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		if k := tok.Kind(); k != ']' && k != '}' {
			n++
		}
	}
	return n
}

// tooLarge says which of the members a format reads were too large to read.
func (o object) tooLarge(name string, keys ...string) error {
	for _, k := range keys {
		if n, big := o[k].(oversized); big {
			return fmt.Errorf("%s: %q holds more than %d values (%d+): not a result file of the tool's", name, k, maxMemberValues, int(n))
		}
	}
	return nil
}

// place names where in a file something is: file:line:col, and the field
// path when there is one (results[3].aggregate_tps).
func place(name string, data []byte, offset int64, ptr jsontext.Pointer) string {
	line, col := runfile.LineCol(data, offset)
	at := fmt.Sprintf("%s:%d:%d", name, line, col)
	if _, field := runfile.Locate(data, ptr); field != "" {
		at += ": " + field
	}
	return at
}

// parseTime reads the timestamps tools write: RFC 3339, "2006-01-02
// 15:04:05", vLLM's "20060102-150405", or Unix seconds.
func parseTime(v any) time.Time {
	switch t := v.(type) {
	case float64:
		if t > 1e9 && t < 1e11 {
			return time.Unix(int64(t), 0).UTC()
		}
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "20060102-150405"} {
			if p, err := time.Parse(layout, t); err == nil {
				return p.UTC()
			}
		}
	}
	return time.Time{}
}

// negativeFigures finds a negative number among the fields of the objects
// at the given places: every figure these formats hold is at least zero.
func negativeFigures(name string, data []byte, objs map[jsontext.Pointer]object) error {
	for _, at := range slices.Sorted(maps.Keys(objs)) {
		for _, key := range slices.Sorted(maps.Keys(objs[at])) {
			if v, ok := objs[at][key].(float64); ok && v < 0 {
				off, _ := runfile.Locate(data, at.AppendToken(key))
				return fmt.Errorf("%s: %g is negative; a speed, time or count cannot be", place(name, data, off, at.AppendToken(key)), v)
			}
		}
	}
	return nil
}
