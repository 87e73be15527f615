package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// comparedRuns writes run A and run B, B with its 8K × 1 cell 15 % slower,
// into a runs folder.
func comparedRuns(t *testing.T) string {
	t.Helper()
	runs := t.TempDir()
	a := testrun.Full(1)
	b := testrun.Full(1)
	d := &b.Decode[0]
	d.TotalTokS = new(*d.TotalTokS * 0.85)
	d.OutputTokens = new(int(float64(*d.OutputTokens) * 0.85))
	d.Completed = new(int(float64(*d.Completed) * 0.85))
	for i, n := range d.PerSecondTokens {
		d.PerSecondTokens[i] = int(float64(n) * 0.85)
	}
	for id, r := range map[string]*matrixgen.Run{"before": a, "after": b} {
		if err := matrixgen.SaveRun(filepath.Join(runs, id+".json"), r); err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

func TestCompareCommand(t *testing.T) {
	runs := comparedRuns(t)
	code, out, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after")
	if code != 0 || !strings.Contains(out, "decode 8K×1") || !strings.Contains(out, "-15.0 %") || !strings.Contains(out, "slower") {
		t.Errorf("text: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "Holm") || !strings.Contains(out, "geomean") {
		t.Errorf("text lacks its legend or geomean:\n%s", out)
	}
	// 8K × 2 is the same in both: "~".
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "decode 8K×2 ") && !strings.HasSuffix(strings.TrimSpace(line), "~") {
			t.Errorf("an unchanged cell is not ~: %q", line)
		}
	}

	code, out, _ = matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-format", "markdown")
	if code != 0 || !strings.Contains(out, "| decode 8K×1 |") || !strings.Contains(out, "|---|") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}

	code, out, _ = matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-format", "json")
	var got struct {
		Table struct {
			Rows []struct {
				Ratio       float64 `json:"ratio"`
				Significant bool    `json:"significant"`
			} `json:"rows"`
			Tests int `json:"tests"`
		} `json:"table"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Table.Tests == 0 ||
		!got.Table.Rows[len(testrun.PrefillContexts)].Significant || got.Table.Rows[len(testrun.PrefillContexts)].Ratio != 0.85 {
		t.Errorf("json: exit %d, %v\n%s", code, err, out)
	}

	code, _, errOut = matrixgenCmd(t, "compare", filepath.Join(runs, "before.json"), filepath.Join(runs, "after.json"), "-fail-on", "5%")
	if code != exitFailed || !strings.Contains(errOut, "decode 8K×1") {
		t.Errorf("-fail-on 5%%: exit %d, %s", code, errOut)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-fail-on", "0.2"); code != 0 {
		t.Errorf("-fail-on 0.2 (20 %%): exit %d, %s", code, errOut)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "after", "before", "-fail-on", "5%"); code != 0 {
		t.Errorf("a speed-up failed the gate: exit %d, %s", code, errOut)
	}
}

func TestCompareUsage(t *testing.T) {
	runs := comparedRuns(t)
	for _, args := range [][]string{
		{"compare", "before"},
		{"compare", "-runs", runs, "before", "after", "-format", "xml"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "lots"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "-5%"},
		{"compare", "-runs", runs, "before", "before"},
	} {
		if code, _, errOut := matrixgenCmd(t, args...); code != exitUsage || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want 2 and one line", args, code, errOut)
		}
	}
	if code, out, _ := matrixgenCmd(t, "compare", "-h"); code != 0 || !strings.Contains(out, "-fail-on") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "missing"); code != exitFailed ||
		!strings.Contains(errOut, "no run ") || !strings.Contains(errOut, "missing.json") || strings.Contains(errOut, "openat") {
		t.Errorf("a missing run: exit %d, %s", code, errOut)
	}
}

// TestCompareFromABucket: runs in a bucket (file:// here, as S3 is read
// the same way), by their URLs or by ids with -runs the bucket.
func TestCompareFromABucket(t *testing.T) {
	place := "file://" + filepath.ToSlash(comparedRuns(t))
	code, out, errOut := matrixgenCmd(t, "compare", place+"/before.json", place+"/after.json")
	if code != 0 || !strings.Contains(out, "decode 8K×1") {
		t.Errorf("by URL: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = matrixgenCmd(t, "compare", "-runs", place+"/", "before", "after", "-fail-on", "5%")
	if code != exitFailed || !strings.Contains(errOut, "decode 8K×1") {
		t.Errorf("by id in a bucket: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", place+"/", "before", "missing"); code != exitFailed || !strings.Contains(errOut, "missing.json") {
		t.Errorf("a run the bucket lacks: exit %d, %s", code, errOut)
	}
	if code, _, _ := matrixgenCmd(t, "compare", place+"/", "before"); code != exitUsage {
		t.Errorf("a bucket URL without a file: exit %d, want 2", code)
	}
}

// TestCompareSaysWhatItLeftOut: a cell valid in only one run is named with
// both statuses, never silently missing from the table.
func TestCompareSaysWhatItLeftOut(t *testing.T) {
	runs := comparedRuns(t)
	b, err := matrixgen.LoadFile(filepath.Join(runs, "after.json"))
	if err != nil {
		t.Fatal(err)
	}
	d := &b.Run.Decode[1]
	d.Status, d.Reason = matrixgen.StatusQueued, "the server reported up to 1 request waiting inside the window"
	if err := matrixgen.SaveRun(filepath.Join(runs, "after.json"), b.Run); err != nil {
		t.Fatal(err)
	}
	label := "decode " + matrixgen.ContextLabel(d.ContextTokens) + "×" + strconv.Itoa(d.Concurrency)
	code, out, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after")
	want := label + " (A " + matrixgen.StatusValid.Label() + ", B " + matrixgen.StatusQueued.Label() + ")"
	if code != 0 || !strings.Contains(out, "not compared") || !strings.Contains(out, want) {
		t.Errorf("exit %d: want %q named as left out\n%s%s", code, want, out, errOut)
	}
}
