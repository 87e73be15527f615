package matrixgen

import (
	"strings"
	"testing"
)

func measured(rate float64) Decode {
	return Decode{ContextTokens: 8192, Concurrency: 2, Status: StatusValid, TotalTokS: new(rate)}
}

// TestAddRepeat: the cell's figures are always its median repeat's (the
// lower middle of an even number), failed repeats aside, and every repeat
// is kept in order.
func TestAddRepeat(t *testing.T) {
	var d Decode
	for i, tt := range []struct {
		rate, want float64
	}{{400, 400}, {380, 380}, {420, 400}, {410, 400}, {430, 410}} {
		d.AddRepeat(measured(tt.rate))
		if len(d.Repeats) != i+1 || *d.TotalTokS != tt.want {
			t.Fatalf("after %d repeats: %d kept, figure %g, want %g", i+1, len(d.Repeats), *d.TotalTokS, tt.want)
		}
	}
	failed := Decode{ContextTokens: 8192, Concurrency: 2, Status: StatusError, Reason: "lost"}
	d.AddRepeat(failed)
	if *d.TotalTokS != 410 || d.Status != StatusValid {
		t.Errorf("a failed repeat moved the figure: %g, %s", *d.TotalTokS, d.Status)
	}
	var none Decode
	none.AddRepeat(failed)
	if none.Status != StatusError || len(none.Repeats) != 1 {
		t.Errorf("a cell of one failed repeat: %s, %d", none.Status, len(none.Repeats))
	}
	if MedianRepeat(nil) != -1 {
		t.Error("no repeats have a median")
	}
}

// TestValidateRepeats: repeats must be of their own cell, without repeats
// of their own, no more than the sweep made, and valid cells themselves.
func TestValidateRepeats(t *testing.T) {
	base := func() *Run {
		r := &Run{Schema: SchemaVersion, Tool: Tool{Name: "t"}, Engine: Engine{Name: "e"}, Model: Model{Name: "m"},
			Sweep: Sweep{DecodeTest: DecodeFixedDuration, PrefillMode: PrefillWarmed, Repeats: 2}}
		var d Decode
		d.AddRepeat(measured(400))
		d.AddRepeat(measured(410))
		r.Decode = []Decode{d}
		return r
	}
	if p := base().Validate(); len(p) != 0 {
		t.Fatalf("a good repeated run: %v", p)
	}
	for _, tt := range []struct {
		name, want string
		spoil      func(r *Run)
	}{
		{"another cell", "decode[0].repeats[1]", func(r *Run) { r.Decode[0].Repeats[1].Concurrency = 4 }},
		{"nested", "decode[0].repeats[0].repeats", func(r *Run) { r.Decode[0].Repeats[0].Repeats = []Decode{measured(1)} }},
		{"too many", "decode[0].repeats", func(r *Run) { r.Sweep.Repeats = 1 }},
		{"a bad figure", "decode[0].repeats[1].total_tok_s", func(r *Run) { r.Decode[0].Repeats[1].TotalTokS = new(-1.0) }},
		{"too many repeats planned", "sweep.repeats", func(r *Run) { r.Sweep.Repeats = MaxRepeats + 1 }},
	} {
		r := base()
		tt.spoil(r)
		var fields []string
		for _, p := range r.Validate() {
			fields = append(fields, p.Field)
		}
		if !strings.Contains(strings.Join(fields, " "), tt.want) {
			t.Errorf("%s: problems %v, want one at %s", tt.name, fields, tt.want)
		}
	}
}
