package matrixgen

import "testing"

// TestCellIndex: the index finds what Run.Cell finds, the first of two cells
// at one place included, and nothing where the run has no cell.
func TestCellIndex(t *testing.T) {
	r := &Run{Decode: []Decode{
		{ContextTokens: 8192, Concurrency: 1, Status: StatusValid},
		{ContextTokens: 8192, Concurrency: 2, Status: StatusError},
		{ContextTokens: 8192, Concurrency: 2, Status: StatusValid},
	}}
	x := r.CellIndex()
	for _, at := range [][2]int{{8192, 1}, {8192, 2}, {8192, 4}, {16384, 1}} {
		got, gotOK := x.Cell(at[0], at[1])
		want, wantOK := r.Cell(at[0], at[1])
		if gotOK != wantOK || got.Status != want.Status {
			t.Errorf("CellIndex().Cell(%d, %d) = %q, %v; want %q, %v", at[0], at[1], got.Status, gotOK, want.Status, wantOK)
		}
	}
}

// TestRequestText: a request reads the same whatever order its maps were
// built in, and nothing set reads as nothing.
func TestRequestText(t *testing.T) {
	var none *Request
	if none.Text() != "" || (&Request{Extra: map[string]any{}}).Text() != "" {
		t.Error("an empty request has a text")
	}
	q := &Request{Temperature: new(0.0), Extra: map[string]any{"z": 1.0, "a": []any{"x", nil, true}}}
	if got, want := q.Text(), `temperature 0 · extra {"a": ["x", null, true], "z": 1}`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}
