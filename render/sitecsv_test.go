package render

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/sitesize"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// FuzzSiteCSVFromMeasurements: a run's rows of runs.csv, made as a build
// makes them (its prefix before each record of its measurements.csv), are
// the bytes encoding/csv writes for the whole rows, whatever text the run
// carries: quotes, commas and line ends inside a field included.
func FuzzSiteCSVFromMeasurements(f *testing.F) {
	for _, s := range []string{"", "plain", `a "quoted" word`, "a,b", "line\nbreak", "cr\r\n", `"`, `""`, "\"\n\"", " leading", "=SUM(A1)"} {
		f.Add(s, "model")
	}
	f.Fuzz(func(t *testing.T, reason, name string) {
		r := &matrixgen.Run{
			Model:    matrixgen.Model{Name: name},
			Hardware: matrixgen.Hardware{GPU: name, Given: []string{"gpu"}},
			Engine:   matrixgen.Engine{Name: name, Version: reason, Quantization: name},
			Prefill:  []matrixgen.Prefill{{ContextTokens: 8192, Status: matrixgen.StatusError, Reason: reason}},
			Decode: []matrixgen.Decode{
				{ContextTokens: 8192, Concurrency: 1, Status: matrixgen.StatusError, Reason: reason},
				{ContextTokens: 8192, Concurrency: 2, Status: matrixgen.StatusLooped, Reason: name},
			},
		}
		want := csvBytes(nil, siteCSVRows("run", r, csvRows(r)))
		records := csvRecords(measurementsCSV(r))
		if len(records) != 1+len(r.Prefill)+len(r.Decode) {
			t.Fatalf("%d records in measurements.csv, want a header and %d rows", len(records), len(r.Prefill)+len(r.Decode))
		}
		var got []byte
		for _, rec := range records[1:] {
			got = append(append(got, siteCSVPrefix("run", r)...), rec...)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("runs.csv rows from measurements.csv:\n%q\nwant\n%q", got, want)
		}
	})
}

// TestSiteCSVIsEveryRunsMeasurements: runs.csv, written by reading each
// run's measurements.csv back, holds exactly every run's rows, in the
// index's order (newest first), and fits a spreadsheet, so it is not split.
func TestSiteCSVIsEveryRunsMeasurements(t *testing.T) {
	entries := monthsOfRuns(6)
	out := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(entries, Site{}, out); err != nil {
		t.Fatal(err)
	}
	got := read(t, filepath.Join(out, "runs.csv"))
	if want := string(expectedSiteCSV(entries)); got != want {
		t.Errorf("runs.csv is not every run's rows in the index's order:\n%.600s\nwant\n%.600s", got, want)
	}
	if parts, _ := filepath.Glob(filepath.Join(out, "runs-*.csv")); len(parts) > 0 {
		t.Errorf("runs.csv fits a spreadsheet, yet the site has %v", parts)
	}
}

// TestSiteCSVSplitByMonth: past what a spreadsheet opens, runs.csv is
// offered split by month too (each part its month's runs, with the
// header; runs without a date in a part of their own), the index links
// every part, and serve's in-place update writes them as a build does.
func TestSiteCSVSplitByMonth(t *testing.T) {
	entries := monthsOfRuns(6)
	perRun := len(entries[0].Run.Prefill) + len(entries[0].Run.Decode)
	defer func(old int) { sitesize.SpreadsheetRows = old }(sitesize.SpreadsheetRows)
	sitesize.SpreadsheetRows = 3 * perRun // a site of 6 runs is too long
	out := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(entries, Site{}, out); err != nil {
		t.Fatal(err)
	}
	byMonth := map[string]Entries{}
	for _, e := range entries {
		m := "undated"
		if !e.Run.StartedAt.IsZero() {
			m = e.Run.StartedAt.UTC().Format("2006-01")
		}
		byMonth[m] = append(byMonth[m], e)
	}
	index := read(t, filepath.Join(out, "index.html"))
	for m, es := range byMonth {
		name := "runs-" + m + ".csv"
		if got, want := read(t, filepath.Join(out, name)), string(expectedSiteCSV(es)); got != want {
			t.Errorf("%s:\n%.400s\nwant\n%.400s", name, got, want)
		}
		if !strings.Contains(index, `href="`+name+`"`) {
			t.Errorf("the index does not link %s", name)
		}
	}
	if parts, _ := filepath.Glob(filepath.Join(out, "runs-*.csv")); len(parts) != len(byMonth) {
		t.Errorf("parts %v, want one for each of %d months", parts, len(byMonth))
	}
	if got, want := read(t, filepath.Join(out, "runs.csv")), string(expectedSiteCSV(entries)); got != want {
		t.Error("runs.csv, split too, is not every run's rows")
	}
}

// expectedSiteCSV is runs.csv for entries as encoding/csv writes the whole
// table at once, newest first.
func expectedSiteCSV(entries Entries) []byte {
	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(x, y runfile.Entry) int {
		if c := y.Run.StartedAt.Compare(x.Run.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	var rows [][]string
	for _, e := range sorted {
		rows = append(rows, siteCSVRows(e.ID, e.Run, csvRows(e.Run))...)
	}
	return csvBytes(siteCSVHeader, rows)
}

// TestBuildHoldsASummaryPerRun: what a build keeps of each run after
// writing its pages is its summary, not its CSV rows, its entry or its
// pages. The heap writeRuns leaves, after collection, is bounded per run:
// the summary is well under a kilobyte; holding a full run's rows of
// runs.csv (17 KB) was the build's growth with its runs.
func TestBuildHoldsASummaryPerRun(t *testing.T) {
	const n, perRunBound = 150, 4 << 10
	runs := t.TempDir()
	for i := range n {
		writeRunFile(t, runs, fmt.Sprintf("run-%03d", i), testrun.Full(uint64(i)), "Some *notes*.")
	}
	files, err := runfile.Files(runs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRenderer(Site{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	b.ctx, b.cache = context.Background(), reuseNone{} // so run files are read as a build that reuses pages reads them
	dir := t.TempDir()
	heap := func() uint64 {
		// The cells' intervals are remembered up to maxMemo cells, a
		// bound whatever the runs (spread.go): not a run's share.
		spreads.mu.Lock()
		spreads.m = nil
		spreads.mu.Unlock()
		runtime.GC()
		runtime.GC() // and the pools' victims
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// What a first page costs once (the JSON library's and the
	// templates' caches, the chart's option) is not a run's.
	if _, err := b.writeRuns(dirFolder(t.TempDir()), Files(files[:5])); err != nil {
		t.Fatal(err)
	}
	before := heap()
	rows, err := b.writeRuns(dirFolder(dir), Files(files))
	if err != nil {
		t.Fatal(err)
	}
	after := heap()
	runtime.KeepAlive(rows)
	if len(rows) != n {
		t.Fatalf("%d summaries for %d runs", len(rows), n)
	}
	if perRun := (int64(after) - int64(before)) / n; perRun > perRunBound {
		t.Errorf("the build holds %d bytes a run after writing its pages, want at most %d", perRun, perRunBound)
	} else {
		t.Logf("%d bytes a run", perRun)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "run-000", "measurements.csv")); err != nil {
		t.Error(err)
	}
}

// monthsOfRuns are n full runs over three months and one without a date.
func monthsOfRuns(n int) Entries { return testrun.Months(n) }
