package runfile

import (
	"bytes"
	"encoding/json"
	"slices"

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
// The encoder writes each element on a line of its own, and no string
// holds a raw newline, so an element's line starting with '[' or '{'
// opens one.
func joinScalarArrays(in []byte) []byte {
	out := make([]byte, 0, len(in))
	lines := slices.Collect(bytes.Lines(in))
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i]...)
		if !bytes.HasSuffix(lines[i], []byte("[\n")) {
			continue
		}
		var elems [][]byte
		j := i + 1
		for ; j < len(lines); j++ {
			e := bytes.TrimSpace(lines[j])
			if len(e) == 0 || bytes.IndexByte([]byte("[{]"), e[0]) >= 0 {
				break
			}
			elems = append(elems, e)
		}
		if j < len(lines) && bytes.HasPrefix(bytes.TrimSpace(lines[j]), []byte("]")) {
			out = append(bytes.TrimSuffix(out, []byte("\n")), bytes.Join(elems, []byte(" "))...)
			out = append(out, bytes.TrimLeft(lines[j], " ")...)
			i = j
		}
	}
	return out
}
