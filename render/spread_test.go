package render

import (
	"bytes"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// noisyCell is a valid cell of 30 seconds whose tokens swing by swing
// around 1,000 a second.
func noisyCell(swing int) matrixgen.Decode {
	d := matrixgen.Decode{ContextTokens: 8192, Concurrency: 4, Status: matrixgen.StatusValid, TotalTokS: new(1000.0)}
	for i := range 30 {
		d.PerSecondTokens = append(d.PerSecondTokens, 1000+swing*((i*7)%5-2))
	}
	return d
}

// TestSpreadShown: a cell with samples shows its interval in its details,
// the matrix cell's title, the measurements table and the CSV; one wider
// than ±5 % is marked; a cell without samples shows none (the seed run,
// which keeps none, renders as before: the golden pages hold that).
func TestSpreadShown(t *testing.T) {
	narrow, wide, bare := noisyCell(5), noisyCell(200), noisyCell(0)
	bare.PerSecondTokens = nil
	run := &matrixgen.Run{Decode: []matrixgen.Decode{narrow}}

	if f := newCellDetail(&narrow).Figures[0]; !strings.Contains(f, "95 % interval") {
		t.Errorf("details: %q", f)
	}
	if c := cell(narrow, true, 0, 2000); !strings.Contains(c.Title, "95 % interval") || c.Spread != "" {
		t.Errorf("narrow matrix cell: %+v", c)
	}
	if c := cell(wide, true, 0, 2000); !strings.HasPrefix(c.Spread, "±") || strings.Contains(c.Spread, "(") {
		t.Errorf("wide matrix cell not marked: %+v", c)
	}
	if c := cell(bare, true, 0, 2000); c.Spread != "" || strings.Contains(c.Title, "interval") {
		t.Errorf("a cell without samples: %+v", c)
	}
	row := measurementRows(run)[0].Rows[0]
	if !strings.HasPrefix(row.Total, "1,000.0 ±") || strings.HasSuffix(row.Total, wideMark) || strings.Contains(row.Total, "(") {
		t.Errorf("table: %q", row.Total)
	}
	wideRow := measurementRows(&matrixgen.Run{Decode: []matrixgen.Decode{wide}})[0].Rows[0]
	if !strings.HasSuffix(wideRow.Total, wideMark) {
		t.Errorf("wide table row: %q", wideRow.Total)
	}
	csv := csvRows(run)[0]
	low, errLow := strconv.ParseFloat(csv[len(csv)-3], 64)
	high, errHigh := strconv.ParseFloat(csv[len(csv)-2], 64)
	if errLow != nil || errHigh != nil || low >= 1000 || high <= 1000 || csv[len(csv)-1] != "0.95" {
		t.Errorf("CSV low %q high %q level %q", csv[len(csv)-3], csv[len(csv)-2], csv[len(csv)-1])
	}
	if header := csvHeader[len(csvHeader)-3:]; !slices.Equal(header, []string{"low", "high", "level"}) {
		t.Errorf("CSV header ends %q", header)
	}
}

// TestSpreadView: a run whose cells kept samples gets a matrix view of
// their spread; one without (the seed run) does not.
func TestSpreadView(t *testing.T) {
	cells := func(ds ...matrixgen.Decode) []orderedCell {
		var out []orderedCell
		for i := range ds {
			out = append(out, orderedCell{id: cellID(ds[i]), d: &ds[i]})
		}
		return out
	}
	narrow, wide := noisyCell(5), noisyCell(200)
	wide.Concurrency = 8
	var names []string
	for _, v := range matrixViews(cells(narrow, wide)) {
		names = append(names, v.Name)
		if v.Name == "spread" && (len(v.Cells) != 2 || !strings.HasPrefix(v.Cells[1].Value[0], "±")) {
			t.Errorf("spread view cells: %+v", v.Cells)
		}
	}
	if !strings.Contains(strings.Join(names, " "), "spread") {
		t.Errorf("views %v lack the spread", names)
	}
	narrow.PerSecondTokens, wide.PerSecondTokens = nil, nil
	for _, v := range matrixViews(cells(narrow, wide)) {
		if v.Name == "spread" {
			t.Error("a run without samples has a spread view")
		}
	}
}

// TestSpreadOfRepeats: a cell measured three times shows the interval over
// its repeats, at the confidence three allow, and says that level wherever
// the interval is shown (details, the matrix cell's title and mark, the
// measurements table, the spread view, the CSV); its details say how many
// repeats of how long.
func TestSpreadOfRepeats(t *testing.T) {
	repeated := func(rates ...float64) matrixgen.Decode {
		var d matrixgen.Decode
		for _, rate := range rates {
			r := noisyCell(5)
			r.TotalTokS, r.WindowSeconds = new(rate), new(30.0)
			d.AddRepeat(r)
		}
		return d
	}
	d, wide := repeated(1005, 1006, 1007), repeated(900, 1000, 1100)
	wide.Concurrency = 8
	detail := newCellDetail(&d)
	if f := detail.Figures[0]; !strings.Contains(f, "75 % interval 1,005.0–1,007.0") {
		t.Errorf("details of a repeated cell: %q", f)
	}
	if f := detail.Figures[slices.Index(detailLabels, "Measured for")]; f != "3 repeats × 30.0 s; the figures are the median repeat's" {
		t.Errorf("measured for: %q", f)
	}
	if c := cell(d, true, 0, 2000); !strings.Contains(c.Title, "75 % interval") {
		t.Errorf("matrix cell's title: %q", c.Title)
	}
	if c := cell(wide, true, 0, 2000); c.Spread != "±10.0 % (75 %)" {
		t.Errorf("a wide repeated cell's mark: %q", c.Spread)
	}
	run := &matrixgen.Run{Decode: []matrixgen.Decode{d, wide}}
	if row := measurementRows(run)[0].Rows[0]; row.Total != "1,006.0 ±0.1 % (75 %)" {
		t.Errorf("measurements table: %q", row.Total)
	}
	if csv := csvRows(run)[0]; csv[len(csv)-1] != "0.75" {
		t.Errorf("CSV level %q", csv[len(csv)-1])
	}
	for _, v := range matrixViews([]orderedCell{{cellID(d), &d}, {cellID(wide), &wide}}) {
		if v.Name == "spread" {
			if v.Cells[0].Value[0] != "±0.1 % (75 %)" || !strings.Contains(v.Label, "interval") {
				t.Errorf("spread view: %q, cells %+v", v.Label, v.Cells)
			}
		}
	}
}

// TestRepeatsAreNamed: a run that measured each cell three times says so
// in its page's Run panel and in a comparison's settings ("3,
// interleaved"); a run measured once has no such row, as before.
func TestRepeatsAreNamed(t *testing.T) {
	row := func(r *matrixgen.Run) string {
		for _, p := range runPanels(r) {
			for _, row := range p.Rows {
				if row.Label == "Repeats" {
					return row.Value
				}
			}
		}
		return ""
	}
	setting := func(r *matrixgen.Run) string {
		for _, s := range compareSettings(r) {
			if s.Label == "Repeats" {
				return s.Text
			}
		}
		return "no row"
	}
	repeated, once := &matrixgen.Run{Sweep: matrixgen.Sweep{Repeats: 3}}, &matrixgen.Run{Sweep: matrixgen.Sweep{Repeats: 1}}
	if got := row(repeated); got != "3, interleaved" {
		t.Errorf("Run panel of a -repeat 3 run: %q", got)
	}
	if got := setting(repeated); got != "3, interleaved" {
		t.Errorf("compare settings of a -repeat 3 run: %q", got)
	}
	if row(once) != "" || setting(once) != "" {
		t.Errorf("a run measured once: panel %q, setting %q", row(once), setting(once))
	}
}

// TestMethodologyExplainsRepeatedIntervals: the methodology page has a
// section on the interval of a repeated decode cell, with its rule and its
// level for few repeats, in words a newcomer can follow.
func TestMethodologyExplainsRepeatedIntervals(t *testing.T) {
	page := read(t, filepath.Join(buildSample(t, Site{}), "methodology.html"))
	for _, want := range []string{"Interval of a repeated decode cell", "r₍ₖ₎ to r₍ₙ₋ₖ₊₁₎", "2 · P(B ≤ k − 1)",
		"<strong>75 % for 3 repeats</strong>", "1 − 2 · (½)ⁿ", "<code>level</code> column"} {
		if !strings.Contains(page, want) {
			t.Errorf("methodology.html lacks %q", want)
		}
	}
}

// TestStoredIntervalIsShown: a cell whose file stores its interval shows
// that one, not one computed again; a run page from a file that stores
// every interval is byte for byte the page from the same run without them
// (an older file, whose intervals the build computes from the samples).
func TestStoredIntervalIsShown(t *testing.T) {
	d := noisyCell(5)
	d.Interval = &matrixgen.Interval{Low: 900, High: 1100, Level: 0.9}
	if got, want := decodeSpread(d).long(), "90 % interval 900.0–1,100.0 (±10.0 %)"; got != want {
		t.Errorf("stored interval shown as %q, want %q", got, want)
	}

	b, err := NewRenderer(Site{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	page := func(r *matrixgen.Run) []byte {
		t.Helper()
		p, err := b.newRunPage(runfile.Entry{ID: "r", Run: r})
		if err != nil {
			t.Fatal(err)
		}
		html, err := execute(b.run, p)
		if err != nil {
			t.Fatal(err)
		}
		return append(html, measurementsCSV(r)...)
	}
	stored := testrun.Full(3)
	older := testrun.Full(3)
	n := 0
	for i := range older.Decode {
		if older.Decode[i].Interval != nil {
			n++
		}
		older.Decode[i].Interval = nil
	}
	if n == 0 {
		t.Fatal("testrun.Full stores no interval")
	}
	if !bytes.Equal(page(stored), page(older)) {
		t.Error("the page from stored intervals differs from the page that computes them")
	}
}

// TestLevelText: a level is written as a whole percent only where it is
// one; a level a hair under one shows a tenth rather than round up to it.
func TestLevelText(t *testing.T) {
	for _, tt := range []struct {
		level float64
		want  string
	}{
		{0.95, "95 %"}, {0.9, "90 %"}, {0.75, "75 %"}, {0.5, "50 %"},
		{0.875, "87.5 %"}, {0.9375, "93.8 %"},
		{0.94999, "94.9 %"}, {0.9999, "99.9 %"}, {0.99999999, "99.9 %"}, {0.9499999, "94.9 %"},
	} {
		if got := levelText(tt.level); got != tt.want {
			t.Errorf("levelText(%v) = %q, want %q", tt.level, got, tt.want)
		}
	}
}
