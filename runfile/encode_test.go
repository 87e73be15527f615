package runfile

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/matrixgen/matrixgen"
)

func TestJoinScalarArrays(t *testing.T) {
	tests := []struct{ in, want string }{
		{"[\n  1,\n  2,\n  3\n]", "[1, 2, 3]"},
		{"{\n  \"a\": [\n    \"x ]\",\n    \"y\\\" [\"\n  ]\n}", "{\n  \"a\": [\"x ]\", \"y\\\" [\"]\n}"},
		{"[\n  {\n    \"b\": [\n      true,\n      null\n    ]\n  }\n]", "[\n  {\n    \"b\": [true, null]\n  }\n]"},
		{"[]", "[]"},
		{"\"[1,\\n 2]\"", "\"[1,\\n 2]\""},
	}
	for _, tt := range tests {
		got := string(joinScalarArrays([]byte(tt.in)))
		if got != tt.want {
			t.Errorf("joinScalarArrays(%q) = %q, want %q", tt.in, got, tt.want)
		}
		var a, b bytes.Buffer
		if err := json.Compact(&a, []byte(tt.in)); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&b, []byte(got)); err != nil || a.String() != b.String() {
			t.Errorf("joining changed the JSON of %q: %q vs %q (%v)", tt.in, a.String(), b.String(), err)
		}
	}
}

func TestEncodeRunJoinsCounts(t *testing.T) {
	r := &matrixgen.Run{Schema: matrixgen.SchemaVersion, Tool: matrixgen.Tool{Name: "t"}, Engine: matrixgen.Engine{Name: "e"}, Model: matrixgen.Model{Name: "m"},
		Sweep:  matrixgen.Sweep{Contexts: []int{8192, 16384}},
		Decode: []matrixgen.Decode{{ContextTokens: 8192, Concurrency: 1, Status: matrixgen.StatusValid, TotalTokS: new(1.5), PerSecondTokens: []int{10, 11, 12}}}}
	out, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"contexts": [8192, 16384]`, `"per_second_tokens": [10, 11, 12]`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("encoded run lacks %s:\n%s", want, out)
		}
	}
}
