package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/matrixgen/matrixgen"
)

// places reads a JSON document's structure: where every value starts, by
// its path ("results[3].aggregate_tps"), and the first key an object
// repeats, which encoding/json would let the last one win silently.
func places(name string, data []byte) (map[string]int64, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	at := map[string]int64{}
	type frame struct {
		path  string
		array bool
		index int
		keys  map[string]bool
		key   string // the key whose value comes next, in an object
	}
	var stack []*frame
	// child is the path of the value about to be read.
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.array {
			return f.path + "[" + strconv.Itoa(f.index) + "]"
		}
		if f.path == "" {
			return f.key
		}
		return f.path + "." + f.key
	}
	expectKey := func() bool {
		if len(stack) == 0 {
			return false
		}
		f := stack[len(stack)-1]
		return !f.array && f.key == ""
	}
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		f := stack[len(stack)-1]
		if f.array {
			f.index++
		} else {
			f.key = ""
		}
	}
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return at, nil
		}
		if err != nil {
			return nil, err // encoding/json reports it again, placed
		}
		if key, ok := tok.(string); ok && expectKey() {
			f := stack[len(stack)-1]
			f.key = key
			if f.keys[key] {
				line, col := matrixgen.LineCol(data, off)
				return nil, fmt.Errorf("%s:%d:%d: %s: the key %q appears twice in one object; which one is meant?", name, line, col, child(), key)
			}
			f.keys[key] = true
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			path := child()
			at[path] = skipSpaceAt(data, off)
			stack = append(stack, &frame{path: path, array: tok == json.Delim('['), keys: map[string]bool{}})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			at[child()] = skipSpaceAt(data, off)
			valueDone()
		}
	}
}

// skipSpaceAt moves an offset past whitespace and a separator to where the
// value itself starts.
func skipSpaceAt(data []byte, off int64) int64 {
	for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,:"), data[off]) >= 0 {
		off++
	}
	return off
}
