package render

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// FuzzCSV holds appendCSV to encoding/csv's output, field for field.
func FuzzCSV(f *testing.F) {
	for _, s := range []string{"", "plain", `a "quoted" word`, "a,b", "line\nbreak", "cr\r", " leading", "\u00a0nbsp", `\.`, "=SUM(A1)"} {
		f.Add(s, "x", "")
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		if err := w.Write([]string{a, b, c}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if got := appendCSV(nil, []string{a, b, c}); string(got) != want.String() {
			t.Fatalf("%q %q %q:\n got %q\nwant %q", a, b, c, got, want.String())
		}
	})
}
