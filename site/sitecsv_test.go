package site

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/matrixgen/matrixgen/internal/sitesize"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
	"github.com/matrixgen/matrixgen/runfile"
)

// monthsOfRuns are n full runs over three months and one without a date.
func monthsOfRuns(n int) render.Entries { return testrun.Months(n) }

// TestLiveSplitsSiteCSV: after serve's in-place update, runs.csv and its
// parts by month are made on request as a build writes them, the folder
// holds none (no stale one, no part of a month whose runs are gone), and
// its marker lists none, so a later build does not take them for files of
// someone's. The folder's name holds a glob's letters: its parts were
// found by a glob, which found none there.
func TestLiveSplitsSiteCSV(t *testing.T) {
	entries := monthsOfRuns(6)
	defer func(old int) { sitesize.SpreadsheetRows = old }(sitesize.SpreadsheetRows)
	sitesize.SpreadsheetRows = 2 * (len(entries[0].Run.Prefill) + len(entries[0].Run.Decode))
	runs := t.TempDir()
	var files []string
	for _, e := range entries {
		files = append(files, writeRunFile(t, runs, e.ID, e.Run, ""))
	}
	out := filepath.Join(t.TempDir(), "public[1]")
	live, _, err := NewLive(context.Background(), files, render.Site{}, out)
	if err != nil {
		t.Fatal(err)
	}
	// run-0 and run-3 started in September: without them, no September.
	os.Remove(filepath.Join(runs, "run-0.json"))
	os.Remove(filepath.Join(runs, "run-3.json"))
	files, err = runfile.Files(runs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Update(files); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "runs-2026-09.csv")); err == nil {
		t.Error("the part of a month without runs is still there")
	}
	if ok, _ := live.SiteCSV(io.Discard, "runs-2026-09.csv"); ok {
		t.Error("the part of a month without runs is still served")
	}
	liveSameAsAFreshBuild(t, live, runs, out, render.Site{})
	if stats, err := Build(Files(files), render.Site{}, out); err != nil || len(stats.Kept) > 0 {
		t.Errorf("a build over the served site: %v, kept %v", err, stats.Kept)
	}
}
