package render

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// TestJSONBlocksAreEncodingJSONs holds the page's JSON blocks, written by
// json v2 with scriptJSONOptions, to what encoding/json wrote before them,
// byte for byte, on runs with every part a detail can have: power traces
// with missing clocks and extreme numbers, server metrics, loop evidence,
// and strings that need escaping. (Invalid UTF-8, which no decoded run
// holds, is FuzzScriptJSON's.)
func TestJSONBlocksAreEncodingJSONs(t *testing.T) {
	hostile := "<script>&\"\\ \u2028\u2029 \x01\b\f\n\r\t \x7f é😀 end"
	runs := []*matrixgen.Run{testrun.Full(1), testrun.Full(7), withEverything(testrun.Full(3), hostile)}
	for i, r := range runs {
		r = r.Sorted()
		cells := cellOrder(r)
		d := cellDetails(r, cells)
		got, err := scriptJSON(d)
		if err != nil {
			t.Fatal(err)
		}
		// The reference maps ids to cells as the page's script reads them,
		// built from the run, not from cellOrder.
		type details struct {
			Labels []string              `json:"labels"`
			Cells  map[string]cellDetail `json:"cells"`
			Charts cellCharts            `json:"charts"`
		}
		ref := details{Labels: d.Labels, Cells: map[string]cellDetail{}, Charts: d.Charts}
		for j := range r.Decode {
			if c := &r.Decode[j]; c.Status != matrixgen.StatusNotRun {
				ref.Cells[cellID(*c)] = newCellDetail(c)
			}
		}
		want, err := json.Marshal(ref)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("run %d: cell details differ from encoding/json's:\n got %s\nwant %s", i, got, want)
		}

		type view struct {
			Name   string               `json:"name"`
			Label  string               `json:"label"`
			Legend []legendBin          `json:"legend"`
			Cells  map[string][2]string `json:"cells"`
		}
		var refViews []view
		views := matrixViews(cells)
		for _, v := range views {
			rv := view{v.Name, v.Label, v.Legend, map[string][2]string{}}
			for _, c := range v.Cells {
				rv.Cells[c.ID] = c.Value
			}
			refViews = append(refViews, rv)
		}
		want, _ = json.Marshal(refViews)
		if got, err := scriptJSON(views); err != nil || string(got) != string(want) {
			t.Errorf("run %d: matrix views differ from encoding/json's:\n got %s\nwant %s", i, got, want)
		}
	}
}

// withEverything gives every decode cell power, a trace, server metrics and
// a reason.
func withEverything(r *matrixgen.Run, text string) *matrixgen.Run {
	extremes := []float64{0, math.Copysign(0, -1), 1e-7, 1e21, 123.456, 5e-324, math.MaxFloat64, 1e20, 0.000001}
	for i := range r.Decode {
		d := &r.Decode[i]
		d.Reason = text
		d.Power = &matrixgen.Power{EnergyJoules: 1234.5, MeanPowerW: 300, TokSPerW: new(2.5),
			GPUs: []matrixgen.GPUWindow{{Index: 0, Samples: 3, MeanPowerW: new(300.0), PeakPowerW: new(350.0)}}}
		for j, x := range extremes {
			p := matrixgen.PowerPoint{AtSeconds: float64(j) / 2, PowerW: x}
			if j%2 == 0 {
				p.SMClockMHz = new(x)
			}
			d.Power.Trace = append(d.Power.Trace, p)
		}
		d.ServerMetrics = []matrixgen.MetricsSample{{AtSeconds: 1, Running: new(3.0), KVCacheUsage: new(0.5)}, {AtSeconds: 2, Waiting: new(1.0)}}
		if d.Loop != nil {
			d.Loop.Excerpt = text
		}
	}
	return r
}

// TestJSONFloatsAreEncodingJSONs: a block's numbers are written as
// encoding/json wrote them (the shortest form that reads back, exponents
// only for the very small or large), and a figure that is no number
// fails the page rather than writing what a browser cannot read.
func TestJSONFloatsAreEncodingJSONs(t *testing.T) {
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1.5e300, 5e-324, math.MaxFloat64, 0.1 + 0.2} {
		want, _ := json.Marshal([]*float64{&x, nil})
		got, err := scriptJSON([]*float64{&x, nil})
		if err != nil || string(got) != string(want) {
			t.Errorf("%v: got %s (%v), want %s", x, got, err, want)
		}
	}
	for _, x := range []float64{math.NaN(), math.Inf(1)} {
		if got, err := scriptJSON([]*float64{&x}); err == nil {
			t.Errorf("%v written as %s; encoding/json refuses it", x, got)
		}
	}
}

// FuzzScriptJSON: whatever text a run carries, its JSON block cannot end the
// <script> it sits in or be read as markup (no <, >, & or line separators
// raw), reads back as that text (invalid UTF-8 as U+FFFD, one a byte), and
// is, for valid text, byte for byte what encoding/json writes.
func FuzzScriptJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "</script><script>alert(1)</script>", "<!--", "a&b", "\u2028\u2029", "\xff\xfe", "\x00\x1f\x7f\b\f", `"\`, "é😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		detail := cellDetail{Heading: s, Reason: s, Figures: []string{s}}
		got, err := scriptJSON(detail)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.IndexAny(string(got), "<>&\u2028\u2029"); i >= 0 {
			t.Fatalf("%q: the block holds %q raw: %s", s, string(got)[i:], got)
		}
		var back cellDetail
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatalf("%q: the block does not read back: %v", s, err)
		}
		if want := string([]rune(s)); back.Reason != want || back.Heading != want || back.Figures[0] != want {
			t.Fatalf("%q read back as %q", s, back.Reason)
		}
		if utf8.ValidString(s) {
			if want, _ := json.Marshal(detail); string(got) != string(want) {
				t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
			}
		}
	})
}

// BenchmarkJSONBlocks writes a full run page's two JSON blocks, the cell
// details and the matrix views.
func BenchmarkJSONBlocks(b *testing.B) {
	r := testrun.Full(1).Sorted()
	cells := cellOrder(r)
	details, views := cellDetails(r, cells), matrixViews(cells)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := scriptJSON(details); err != nil {
			b.Fatal(err)
		}
		if _, err := scriptJSON(views); err != nil {
			b.Fatal(err)
		}
	}
}
