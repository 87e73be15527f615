package render

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
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

	if f := newCellDetail(&narrow).Figures[0]; !strings.Contains(f, "95.0 % interval") {
		t.Errorf("details: %q", f)
	}
	if c := cell(narrow, true, 0, 2000); !strings.Contains(c.Title, "95.0 % interval") || c.Spread != "" {
		t.Errorf("narrow matrix cell: %+v", c)
	}
	if c := cell(wide, true, 0, 2000); !strings.HasPrefix(c.Spread, "±") {
		t.Errorf("wide matrix cell not marked: %+v", c)
	}
	if c := cell(bare, true, 0, 2000); c.Spread != "" || strings.Contains(c.Title, "interval") {
		t.Errorf("a cell without samples: %+v", c)
	}
	row := measurementRows(run)[0].Rows[0]
	if !strings.HasPrefix(row.Total, "1,000.0 ±") || strings.HasSuffix(row.Total, wideMark) {
		t.Errorf("table: %q", row.Total)
	}
	wideRow := measurementRows(&matrixgen.Run{Decode: []matrixgen.Decode{wide}})[0].Rows[0]
	if !strings.HasSuffix(wideRow.Total, wideMark) {
		t.Errorf("wide table row: %q", wideRow.Total)
	}
	csv := csvRows(run)[0]
	low, errLow := strconv.ParseFloat(csv[len(csv)-2], 64)
	high, errHigh := strconv.ParseFloat(csv[len(csv)-1], 64)
	if errLow != nil || errHigh != nil || low >= 1000 || high <= 1000 {
		t.Errorf("CSV low %q high %q", csv[len(csv)-2], csv[len(csv)-1])
	}
	if header := csvHeader[len(csvHeader)-2:]; header[0] != "low" || header[1] != "high" {
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
// its repeats, at the confidence three allow.
func TestSpreadOfRepeats(t *testing.T) {
	var d matrixgen.Decode
	for _, swing := range []int{5, 6, 7} {
		r := noisyCell(swing)
		r.TotalTokS = new(1000.0 + float64(swing))
		d.AddRepeat(r)
	}
	if f := newCellDetail(&d).Figures[0]; !strings.Contains(f, "75.0 % interval 1,005.0–1,007.0") {
		t.Errorf("details of a repeated cell: %q", f)
	}
}

// TestStoredIntervalIsShown: a cell whose file stores its interval shows
// that one, not one computed again; a run page from a file that stores
// every interval is byte for byte the page from the same run without them
// (an older file, whose intervals the build computes from the samples).
func TestStoredIntervalIsShown(t *testing.T) {
	d := noisyCell(5)
	d.Interval = &matrixgen.Interval{Low: 900, High: 1100, Level: 0.9}
	if got, want := decodeSpread(d).long(), "90.0 % interval 900.0–1,100.0 (±10.0 %)"; got != want {
		t.Errorf("stored interval shown as %q, want %q", got, want)
	}

	b, err := newBuilder(Site{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	page := func(r *matrixgen.Run) []byte {
		t.Helper()
		p, err := b.newRunPage(matrixgen.Entry{ID: "r", Run: r})
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
