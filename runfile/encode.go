package runfile

import (
	"bytes"
	"encoding/json"

	"github.com/matrixgen/matrixgen"
)

// Encode writes a run as the canonical run file, the same bytes for the
// same run: indented, measurements in page order, HTML characters kept.
func Encode(r *matrixgen.Run) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Sorted()); err != nil {
		return nil, err
	}
	return joinScalarArrays(buf.Bytes()), nil
}

// joinScalarArrays puts each array that holds only numbers, strings and
// literals on one line: a cell's 30 per-second counts are not 30 lines.
func joinScalarArrays(in []byte) []byte {
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		out = append(out, c)
		switch c {
		case '"':
			end := stringEnd(in, i)
			out = append(out, in[i+1:end]...)
			i = end - 1
		case '[':
			if end, ok := scalarArrayEnd(in, i); ok {
				out = appendJoined(out, in[i+1:end])
				i = end - 1
			}
		}
	}
	return out
}

// stringEnd returns the index just past the string starting at in[i].
func stringEnd(in []byte, i int) int {
	for j := i + 1; j < len(in); j++ {
		switch in[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(in)
}

// scalarArrayEnd finds the ']' closing the array at in[i], if nothing in
// between opens an object or another array.
func scalarArrayEnd(in []byte, i int) (int, bool) {
	for j := i + 1; j < len(in); j++ {
		switch in[j] {
		case '"':
			j = stringEnd(in, j) - 1
		case '[', '{':
			return 0, false
		case ']':
			return j, true
		}
	}
	return 0, false
}

// appendJoined appends an array's elements separated by ", ".
func appendJoined(out, elems []byte) []byte {
	for i := 0; i < len(elems); i++ {
		switch c := elems[i]; c {
		case ' ', '\n', '\t', '\r':
		case ',':
			out = append(out, ',', ' ')
		case '"':
			end := stringEnd(elems, i)
			out = append(out, elems[i:end]...)
			i = end - 1
		default:
			out = append(out, c)
		}
	}
	return out
}
