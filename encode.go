package matrixgen

import (
	"bytes"
	"encoding/json"
)

// EncodeRun writes a run as the canonical run file: indented, measurements
// in page order, HTML characters left readable. The same run always encodes
// to the same bytes.
func EncodeRun(r *Run) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Sorted()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
