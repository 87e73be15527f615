package jsonw

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendString holds AppendString to encoding/json's quoting, with
// and without HTML escaping.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\u2028\u2029", "\xff\xfe", "\x00\x1f\x7f\b\f", `"\`, "é😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			if got := AppendString(nil, s, html); string(got) != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
				t.Fatalf("%q, html %v: got %s, want %s", s, html, got, want.Bytes())
			}
		}
	})
}
