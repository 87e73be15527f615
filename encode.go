package matrixgen

import (
	"bytes"
	"encoding/json"
)

// EncodeRun writes a run as the canonical run file: indented, measurements
// in page order, HTML characters left readable. The same run always encodes
// to the same bytes.
func EncodeRun(r *Run) ([]byte, error) {
	sorted := *r
	sorted.Prefill = append([]Prefill(nil), r.Prefill...)
	sorted.Decode = append([]Decode(nil), r.Decode...)
	sorted.SortMeasurements()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&sorted); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
