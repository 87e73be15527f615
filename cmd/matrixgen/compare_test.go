package main

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/stats"
)

// comparedRuns writes run A and run B, B with its 8K × 1 cell 15 % slower,
// into a runs folder.
func comparedRuns(t *testing.T) string {
	t.Helper()
	return comparedRunsBy(t, 0.85)
}

// comparedRunsBy writes run A and run B, B's 8K × 1 cell at share of A's.
func comparedRunsBy(t *testing.T, share float64) string {
	t.Helper()
	runs := t.TempDir()
	a := testrun.Full(1)
	b := testrun.Full(1)
	d := &b.Decode[0]
	d.TotalTokS = new(*d.TotalTokS * share)
	d.OutputTokens = new(int(float64(*d.OutputTokens) * share))
	d.Completed = new(int(math.Ceil(float64(*d.Completed) * share))) // as many requests made its tokens
	for i, n := range d.PerSecondTokens {
		d.PerSecondTokens[i] = int(float64(n) * share)
	}
	for id, r := range map[string]*matrixgen.Run{"before": a, "after": b} {
		if err := runfile.Save(filepath.Join(runs, id+".json"), r); err != nil {
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
				Ratio     float64  `json:"ratio"`
				Differ    bool     `json:"differ"`
				InFamily  bool     `json:"in_family"`
				PAdjusted *float64 `json:"p_adjusted"`
				Holm      bool     `json:"significant_after_holm"`
			} `json:"rows"`
			Family int `json:"family"`
		} `json:"table"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Table.Family == 0 {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	if r := got.Table.Rows[len(testrun.PrefillContexts)]; !r.Differ || !r.InFamily || !r.Holm || r.PAdjusted == nil || r.Ratio != 0.85 {
		t.Errorf("json: the slower cell reads %+v", r)
	}

	code, _, errOut = matrixgenCmd(t, "compare", filepath.Join(runs, "before.json"), filepath.Join(runs, "after.json"), "-fail-on", "5%")
	if code != exitFailed || !strings.Contains(errOut, "decode 8K×1") {
		t.Errorf("-fail-on 5%%: exit %d, %s", code, errOut)
	}
	for _, beyond := range []string{"20", "20%", " 20 %", "15.5"} {
		if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-fail-on", beyond); code != 0 {
			t.Errorf("-fail-on %q: exit %d, %s", beyond, code, errOut)
		}
	}
	// 0.2 is 0.2 %, not 20 %: a percentage with or without its sign.
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-fail-on", "0.2"); code != exitFailed {
		t.Errorf("-fail-on 0.2 (0.2 %%): exit %d, %s", code, errOut)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "after", "before", "-fail-on", "5%"); code != 0 {
		t.Errorf("a speed-up failed the gate: exit %d, %s", code, errOut)
	}
}

func TestCompareUsage(t *testing.T) {
	runs := comparedRuns(t)
	// A copy under another id is the same measurement.
	before, err := os.ReadFile(filepath.Join(runs, "before.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runs, "copy-of-before.json"), before, 0o644); err != nil {
		t.Fatal(err)
	}
	// So is a copy laid out anew (minified on its way through CI): it
	// passed the gate against itself (found by a newcomer).
	var compact bytes.Buffer
	if err := stdjson.Compact(&compact, before); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runs, "minified.json"), compact.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "minified", "-fail-on", "5"); code != exitUsage || !strings.Contains(errOut, "one measurement") {
		t.Errorf("a minified copy: exit %d, %s", code, errOut)
	}
	for _, args := range [][]string{
		{"compare", "before"},
		{"compare", "-runs", runs, "before", "after", "-format", "xml"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "lots"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "-5%"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "100"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "100%"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "5%%"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "NaN"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "Inf%"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "%"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "0x10"},
		// Given but empty (a CI variable never set), or −0: a gate that
		// would never run is a mistake, not a pass.
		{"compare", "-runs", runs, "before", "after", "-fail-on", ""},
		{"compare", "-runs", runs, "before", "after", "-fail-on="},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "  "},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "-0"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "-0%"},
		{"compare", "-runs", runs, "before", "after", "-fail-on", "-0.0"},
		{"compare", "-runs", runs, "before", "before"},
		// One file by two names, or an id and its file.
		{"compare", filepath.Join(runs, "before.json"), runs + string(filepath.Separator) + "." + string(filepath.Separator) + "before.json"},
		{"compare", "-runs", runs, "before", filepath.Join(runs, "before.json")},
		{"compare", "-runs", runs, "before", "copy-of-before"},
	} {
		code, _, errOut := matrixgenCmd(t, args...)
		if code != exitUsage || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want 2 and one line", args, code, errOut)
		}
		if slices.Contains(args, "-fail-on") && (!strings.Contains(errOut, "-fail-on") || !strings.Contains(errOut, "percentage from 0 up to 100")) {
			t.Errorf("%q: %q names neither the flag nor what it wants", args, errOut)
		}
	}
	if code, out, _ := matrixgenCmd(t, "compare", "-h"); code != 0 || !strings.Contains(out, "-fail-on") || !strings.Contains(out, "Exit status") ||
		!strings.Contains(out, "3  -fail-on given but nothing could be tested") || !strings.Contains(out, "4  a run could not be read") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "missing"); code != exitUnreadable ||
		!strings.Contains(errOut, "no run ") || !strings.Contains(errOut, "missing.json") || strings.Contains(errOut, "openat") {
		t.Errorf("a missing run: exit %d, %s", code, errOut)
	}
	// A path that is not there is named whole, not as a system call's
	// last part; an id typed with .json is the runs folder's file.
	missing := filepath.Join(runs, "sub", "nope.json")
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, missing, "before"); code != exitUnreadable ||
		!strings.Contains(errOut, "no run file "+missing) || strings.Contains(errOut, "openat") {
		t.Errorf("a missing path: exit %d, %s", code, errOut)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before.json", "after.json"); code != 0 {
		t.Errorf("ids typed with .json: exit %d, %s", code, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema": 1,`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", bad); code != exitUnreadable || !strings.Contains(errOut, "bad.json:1:") {
		t.Errorf("a malformed run: exit %d, %s", code, errOut)
	}
}

// TestFailOnExactlyBeyond: a cell exactly 5 % slower (95 against 100, in
// floating point a hair past 0.05) does not fail -fail-on 5%; it fails
// -fail-on 4.9, and a cell 5.1 % slower fails 5 %.
func TestFailOnExactlyBeyond(t *testing.T) {
	runs := comparedRunsBy(t, 0.95)
	if code, out, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-fail-on", "5%"); code != 0 {
		t.Errorf("5 %% slower, -fail-on 5%%: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-fail-on", "4.9"); code != exitFailed || !strings.Contains(errOut, "decode 8K×1") {
		t.Errorf("5 %% slower, -fail-on 4.9: exit %d, %s", code, errOut)
	}
	runs = comparedRunsBy(t, 0.949)
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-fail-on", "5"); code != exitFailed {
		t.Errorf("5.1 %% slower, -fail-on 5: exit %d, %s", code, errOut)
	}
}

// TestStoresWithoutADriverAreRefused: gs:// and azblob:// places are
// command-line mistakes (exit 2) in one line that says only s3:// (and
// S3-compatible endpoints) is read and how to reach the store, before any
// work; the URL's query (a key, perhaps) is not repeated.
func TestStoresWithoutADriverAreRefused(t *testing.T) {
	runs := comparedRuns(t)
	for _, args := range [][]string{
		{"compare", "-runs", "gs://lab/runs/?token=SECRETVALUE", "before", "after"},
		{"compare", "gs://lab/runs/before.json", "azblob://lab/runs/after.json"},
		{"compare", "-runs", runs, "before", "azblob://lab/runs/after.json?sig=SECRETVALUE"},
		{"build", "-runs", "gs://lab/runs/", "-o", t.TempDir()},
		{"build", "-runs", "azblob://lab/runs/?sig=SECRETVALUE", "-o", t.TempDir()},
		{"build", "-runs", runs, "-o", "gs://lab/site/"},
		{"validate", "gs://lab/runs/"},
	} {
		code, out, errOut := matrixgenCmd(t, args...)
		if code != exitUsage || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "only s3:// (AWS S3 and S3-compatible stores)") ||
			!strings.Contains(errOut, "endpoint=") || strings.Contains(errOut, "SECRETVALUE") || out != "" {
			t.Errorf("%q: exit %d, %q%q; want 2 and one line naming s3:// and how", args, code, out, errOut)
		}
		if strings.Contains(strings.Join(args, " "), "gs://") && !strings.Contains(errOut, "storage.googleapis.com") {
			t.Errorf("%q: %q does not say how to reach GCS", args, errOut)
		}
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
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", place+"/", "before", "missing"); code != exitUnreadable || !strings.Contains(errOut, "missing.json") {
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
	b, err := runfile.Load(filepath.Join(runs, "after.json"))
	if err != nil {
		t.Fatal(err)
	}
	d := &b.Run.Decode[1]
	d.Status, d.Reason = matrixgen.StatusQueued, "the server reported up to 1 request waiting inside the window"
	if err := runfile.Save(filepath.Join(runs, "after.json"), b.Run); err != nil {
		t.Fatal(err)
	}
	label := "decode " + matrixgen.ContextLabel(d.ContextTokens) + "×" + strconv.Itoa(d.Concurrency)
	code, out, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after")
	want := label + " (B " + matrixgen.StatusQueued.Label() + ": the server reported up to 1 request waiting inside the window)"
	if code != 0 || !strings.Contains(out, "lost in B") || !strings.Contains(out, want) {
		t.Errorf("exit %d: want %q named as lost in B\n%s%s", code, want, out, errOut)
	}
	// One valid in B only is left out, named with both statuses.
	code, out, errOut = matrixgenCmd(t, "compare", "-runs", runs, "after", "before")
	want = label + " (A " + matrixgen.StatusQueued.Label() + ", B " + matrixgen.StatusValid.Label() + ")"
	if code != 0 || !strings.Contains(out, "not compared") || !strings.Contains(out, want) {
		t.Errorf("exit %d: want %q named as left out\n%s%s", code, want, out, errOut)
	}
}

// TestCompareNotComparedIsOneLine: however many cells only one run has
// valid, they are one line, counted, the first few named.
func TestCompareNotComparedIsOneLine(t *testing.T) {
	runs := comparedRuns(t)
	b, err := runfile.Load(filepath.Join(runs, "after.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 { // 9 contexts × 408 levels: within a sweep's 4,096 cells
		b.Run.Decode = append(b.Run.Decode, matrixgen.Decode{ContextTokens: 1 << 20, Concurrency: 1000 + i, Status: matrixgen.StatusError, Reason: "x"})
		b.Run.Sweep.Concurrency = append(b.Run.Sweep.Concurrency, 1000+i)
	}
	b.Run.Sweep.Contexts = append(b.Run.Sweep.Contexts, 1<<20)
	if err := runfile.Save(filepath.Join(runs, "after.json"), b.Run); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown"} {
		_, out, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-format", format)
		var lines []string
		for line := range strings.Lines(out) {
			if strings.Contains(line, "not compared") {
				lines = append(lines, line)
			}
		}
		if len(lines) != 1 || strings.Count(out, "\n") > 200 || !regexp.MustCompile(`: 4[01]\d cells: .*; and 4[01]\d more`).MatchString(lines[0]) {
			t.Errorf("%s: %d lines in all, not compared: %q%s", format, strings.Count(out, "\n"), lines, errOut)
		}
	}
}

// TestCompareExitCodes: 3, with a reason, where -fail-on was given and no
// cell could reach p < 0.05 (runs without per-second samples or requests,
// and runs with 3 a side, which never can); 0 for the same runs without
// -fail-on.
func TestCompareExitCodes(t *testing.T) {
	for name, keep := range map[string]int{"no samples": 0, "3 a side": 3} {
		runs := t.TempDir()
		for _, id := range []string{"before", "after"} {
			r := testrun.Full(1)
			r.Engine.Version += "-" + id // two runs, not one file twice
			for i := range r.Decode {
				r.Decode[i].PerSecondTokens = r.Decode[i].PerSecondTokens[:min(keep, len(r.Decode[i].PerSecondTokens))]
			}
			for i := range r.Prefill {
				r.Prefill[i].Requests = r.Prefill[i].Requests[:min(keep, len(r.Prefill[i].Requests))]
			}
			if err := runfile.Save(filepath.Join(runs, id+".json"), r); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-fail-on", "5")
		if code != exitUntestable || !strings.Contains(errOut, "nothing could be tested") || !strings.Contains(errOut, "p < 0.05") {
			t.Errorf("%s: exit %d, %q", name, code, errOut)
		}
		if !strings.Contains(out, "family of 0 cells") {
			t.Errorf("%s: the table does not say its family is empty:\n%s", name, out)
		}
		if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after"); code != 0 {
			t.Errorf("%s without -fail-on: exit %d, %q", name, code, errOut)
		}
	}
}

// TestCompareWarnsOfUnrelatedRuns: runs of another model, GPU, engine or
// set of contexts are compared with a warning naming each difference, on
// stderr and in Markdown; runs of one setup get none.
func TestCompareWarnsOfUnrelatedRuns(t *testing.T) {
	runs := comparedRuns(t)
	if _, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after"); strings.Contains(errOut, "warning") {
		t.Errorf("one setup warned: %q", errOut)
	}
	b, err := runfile.Load(filepath.Join(runs, "after.json"))
	if err != nil {
		t.Fatal(err)
	}
	b.Run.Model.Name, b.Run.Hardware.GPU, b.Run.Engine.Name = "other-model", "other-gpu", "other-engine"
	b.Run.Decode = append(b.Run.Decode, matrixgen.Decode{ContextTokens: 3 << 20, Concurrency: b.Run.Sweep.Concurrency[0], Status: matrixgen.StatusError, Reason: "x"})
	b.Run.Sweep.Contexts = append(b.Run.Sweep.Contexts, 3<<20)
	if err := runfile.Save(filepath.Join(runs, "after.json"), b.Run); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-format", "markdown")
	for _, what := range []string{"model (", "other-model", "GPU (", "other-gpu", "engine (", "other-engine", "contexts ("} {
		if !strings.Contains(errOut, what) {
			t.Errorf("stderr does not name %q: %q", what, errOut)
		}
	}
	if !strings.HasPrefix(errOut, "warning: ") || !strings.Contains(out, "\nWarning: A and B are runs of different setups") {
		t.Errorf("stderr %q; markdown:\n%s", errOut, out)
	}
}

// TestCompareColumnsOneFormat: down every column of the text and Markdown
// tables each value has one form: tok/s with one decimal, changes as
// signed percentages with one, p with three (or <0.001, or – outside the
// family), samples as m+n, a verdict word, a gate mark; over generated
// pairs of runs of every sample size.
func TestCompareColumnsOneFormat(t *testing.T) {
	forms := []*regexp.Regexp{
		regexp.MustCompile(`^(decode \S+×\d+|prefill \S+|geomean)$`),
		regexp.MustCompile(`^(\d+\.\d|)$`), regexp.MustCompile(`^(\d+\.\d|)$`),
		regexp.MustCompile(`^([+-]\d+\.\d %|no ratio)$`),
		regexp.MustCompile(`^(0\.\d\d\d|1\.000|<0\.001|–|)$`),
		regexp.MustCompile(`^(t|U|–|)$`),
		regexp.MustCompile(`^(\d+\+\d+|)$`),
		regexp.MustCompile(`^(faster|slower|~|~ \(against\)|untested|)$`),
		regexp.MustCompile(`^(!|\*|–|)$`),
	}
	for seed := range uint64(6) {
		a, b := testrun.Full(100+seed), testrun.Full(200+seed)
		withSamples(a, seed)
		withSamples(b, seed+50)
		rep := compareReport{Table: stats.CompareRuns(a, b), Gate: true, Beyond: 0.02}
		rows := rep.compareRows()
		if len(rows) < 10 {
			t.Fatalf("seed %d: %d rows", seed, len(rows))
		}
		for _, row := range rows {
			for i, c := range row {
				if !forms[i].MatchString(c) {
					t.Errorf("seed %d, column %q: %q", seed, compareHeader()[i], c)
				}
			}
		}
		var text, md strings.Builder
		if err := writeCompareText(&text, rep); err != nil {
			t.Fatal(err)
		}
		if err := writeCompareMarkdown(&md, rep); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if !strings.Contains(md.String(), "| "+strings.Join(r, " | ")+" |") {
				t.Errorf("seed %d: markdown lacks the row %q", seed, r)
			}
		}
		// Right-aligned figures: in the text table every row's "change"
		// ends in one column.
		ends := map[int]bool{}
		for line := range strings.Lines(text.String()) {
			if i := strings.Index(line, " %"); i > 0 && (strings.HasPrefix(line, "decode") || strings.HasPrefix(line, "prefill") || strings.HasPrefix(line, "geomean")) {
				ends[len([]rune(line[:i]))] = true
			}
		}
		if len(ends) != 1 {
			t.Errorf("seed %d: the change column ends at %v", seed, ends)
		}
	}
}

// TestCompareVerdictIsTheCellsOwn: over 6 generated pairs of runs (every
// sample size, ties, both sides of 5 %), the CLI's verdict of each row is
// what the compare page calls the cell (pageVerdict and prefillVerdict,
// which TestSignificanceAgreesWithGo holds the page's script to): faster
// for gain, slower for loss, ~ for same (tested, not significant),
// untested where the page says no test could be made; and the JSON's
// differ is that verdict, its p null exactly where it is untested.
func TestCompareVerdictIsTheCellsOwn(t *testing.T) {
	page := map[string]string{"gain": "faster", "loss": "slower", "same": "~", "against": "~ (against)", "untested": "untested", "": "untested"}
	seen := map[string]int{}
	for seed := range uint64(6) {
		a, b := testrun.Full(100+seed), testrun.Full(200+seed)
		withSamples(a, seed)
		withSamples(b, seed+50)
		want := expectedVerdicts(a, b)
		rep := compareReport{Table: stats.CompareRuns(a, b)}
		rows := rep.compareRows()
		for i, r := range rep.Table.Rows {
			key := "prefill " + matrixgen.ContextLabel(r.Cell.Context)
			if r.Cell.Phase == stats.PhaseDecode {
				key = fmt.Sprintf("%dx%d", r.Cell.Context, r.Cell.Concurrency)
			}
			w, ok := want[key]
			if !ok {
				t.Fatalf("seed %d: %s is not on the page", seed, key)
			}
			got := rows[i][7]
			if page[w] != got {
				t.Errorf("seed %d, %s: the CLI says %q, the page %q", seed, key, got, w)
			}
			if r.Differ != (got == "faster" || got == "slower") || r.Verdict != got || (r.P == nil) != (got == "untested") {
				t.Errorf("seed %d, %s: differ %v, p %v, verdict %q (JSON's %q)", seed, key, r.Differ, r.P, got, r.Verdict)
			}
			seen[got]++
		}
	}
	t.Logf("verdicts: %v", seen)
	for _, v := range []string{"faster", "slower", "~", "untested"} {
		if seen[v] < 10 {
			t.Errorf("only %d rows called %q: the generated runs do not reach it", seen[v], v)
		}
	}
}

// TestCompareTestsRepeatsByT: two -repeat 3 runs of the sim have every
// decode cell tested over its 3 repeats a side (t, n 3+3), the prefill rows
// by their requests; JSON names each row's test and its degrees of
// freedom; the legend says which test is used when.
func TestCompareTestsRepeatsByT(t *testing.T) {
	a, b := filepath.Join("testdata", "repeat", "sim-repeat-a.json"), filepath.Join("testdata", "repeat", "sim-repeat-b.json")
	code, out, errOut := matrixgenCmd(t, "compare", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	decode := 0
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "decode ") {
			decode++
			if !regexp.MustCompile(`  t  +3\+3  `).MatchString(line) {
				t.Errorf("a decode cell of two -repeat 3 runs is not tested by t over 3+3: %q", line)
			}
		}
	}
	if decode != 6 || !strings.Contains(out, "test: t, Student's two-sample t (variance pooled) over the cell's repeats, where both runs measured it 2 times or more") {
		t.Errorf("%d decode rows; legend:\n%s", decode, out)
	}
	_, out, _ = matrixgenCmd(t, "compare", a, b, "-format", "json")
	var got struct {
		Table struct {
			Rows []struct {
				Cell     stats.Cell `json:"cell"`
				Test     string     `json:"test"`
				DF       int        `json:"df"`
				InFamily bool       `json:"in_family"`
			} `json:"rows"`
		} `json:"table"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Table.Rows {
		want, df := stats.TestRepeats, 4
		if r.Cell.Phase == stats.PhasePrefill {
			want, df = stats.TestSamples, 0
		}
		if !r.InFamily { // too few requests to test: the row names no test, as the text's "–"
			want, df = stats.TestNone, 0
		}
		if r.Test != want || r.DF != df {
			t.Errorf("%v: test %q with %d df, want %q with %d", r.Cell, r.Test, r.DF, want, df)
		}
	}
}

// TestCompareLastLine: the output's last line says in plain words how
// many cells differ, how many could not be tested and, with -fail-on, the
// gate's answer; in text and in Markdown.
func TestCompareLastLine(t *testing.T) {
	a, b := filepath.Join("testdata", "repeat", "sim-repeat-a.json"), filepath.Join("testdata", "repeat", "sim-repeat-b.json")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 0, "3 of 8 cells differ, 2 untested; no gate (-fail-on not given)"},
		{[]string{"-fail-on", "30"}, 0, "3 of 8 cells differ, 2 untested; none slower by more than 30 % after Holm's correction: pass"},
		{[]string{"-fail-on", "5%"}, exitFailed, "3 of 8 cells differ, 2 untested; 2 slower by more than 5 % after Holm's correction: fail"},
		{[]string{"-fail-on", "2.5", "-format", "markdown"}, exitFailed, "**3 of 8 cells differ, 2 untested; 2 slower by more than 2.5 % after Holm's correction: fail**"},
	} {
		code, out, errOut := matrixgenCmd(t, append([]string{"compare", a, b}, c.args...)...)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if code != c.code || lines[len(lines)-1] != c.want {
			t.Errorf("%q: exit %d, last line %q, want %d and %q\n%s", c.args, code, lines[len(lines)-1], c.code, c.want, errOut)
		}
	}
}

// jsonRowFields are the names of a JSON row, in the order README.md
// documents them; a row without a ratio has no "ratio".
var jsonRowFields = []string{"cell", "a", "b", "test", "df", "samples_a", "samples_b", "ratio", "p", "differ", "against",
	"min_p", "in_family", "p_adjusted", "significant_after_holm", "verdict"}

// TestCompareJSONFieldsInOrder: each JSON row's fields come in the
// documented order (README.md lists them), p is null exactly where the
// verdict is untested, and the verdicts are the text table's words.
func TestCompareJSONFieldsInOrder(t *testing.T) {
	a, b := filepath.Join("testdata", "repeat", "sim-repeat-a.json"), filepath.Join("testdata", "repeat", "sim-repeat-b.json")
	_, out, _ := matrixgenCmd(t, "compare", a, b, "-format", "json")
	var got struct {
		Table struct {
			Rows []jsontext.Value `json:"rows"`
		} `json:"table"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Table.Rows) != 8 {
		t.Fatalf("%v, %d rows:\n%s", err, len(got.Table.Rows), out)
	}
	verdicts := map[string]int{}
	for _, raw := range got.Table.Rows {
		var names []string
		var p jsontext.Value
		var verdict string
		dec := jsontext.NewDecoder(bytes.NewReader(raw))
		dec.ReadToken() // {
		for dec.PeekKind() != '}' {
			token, _ := dec.ReadToken()
			name := token.String()
			value, err := dec.ReadValue()
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
			switch name {
			case "p":
				p = value.Clone()
			case "verdict":
				verdict = strings.Trim(string(value), `"`)
			}
		}
		if !slices.Equal(names, jsonRowFields) {
			t.Errorf("a row's fields %q, want %q", names, jsonRowFields)
		}
		if (string(p) == "null") != (verdict == stats.VerdictUntested) {
			t.Errorf("p %s with the verdict %q", p, verdict)
		}
		verdicts[verdict]++
	}
	if verdicts["untested"] != 2 || verdicts["slower"] != 3 || verdicts["~"] != 3 {
		t.Errorf("verdicts %v, want the prefill rows untested, 3 slower and 3 ~", verdicts)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "`" + strings.Join(jsonRowFields, "`, `") + "`"; !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), want) {
		t.Errorf("README.md does not list a JSON row's fields in order: %s", want)
	}
}

// TestCompareNamesTheSim: a simulated run without a GPU is named as the
// sim in the warning, not as an empty GPU.
func TestCompareNamesTheSim(t *testing.T) {
	runs := comparedRuns(t)
	a, err := runfile.Load(filepath.Join(runs, "before.json"))
	if err != nil {
		t.Fatal(err)
	}
	a.Run.Simulated, a.Run.Hardware.GPU = true, ""
	if err := runfile.Save(filepath.Join(runs, "before.json"), a.Run); err != nil {
		t.Fatal(err)
	}
	_, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after")
	if !strings.Contains(errOut, "GPU (matrixgen sim vs ") || strings.Contains(errOut, "none vs") {
		t.Errorf("stderr: %q", errOut)
	}
}

// TestPercentNeverNegativeZero: a change that rounds to nothing reads
// +0.0 %, not -0.0 % (a newcomer read -0.04 % as a loss); a change of
// 342 tok/s over 1e-300 is short, not a number of 300 digits.
func TestPercentNeverNegativeZero(t *testing.T) {
	for share, want := range map[float64]string{-0.0004: "+0.0 %", 0.0004: "+0.0 %", -0.0006: "-0.1 %", -0.1: "-10.0 %", 0.052: "+5.2 %",
		9999.99: "+999999.0 %", 342e300: "+3.42e+304 %"} {
		if got := percent(share); got != want {
			t.Errorf("percent(%g) = %q, want %q", share, got, want)
		}
	}
}

// TestRunURLAtTheBucketsRoot: a run file at a bucket's root is asked for
// by its key, not as "//r.json" (which no store has).
func TestRunURLAtTheBucketsRoot(t *testing.T) {
	for name, want := range map[string][2]string{
		"s3://bk/r.json?region=eu-west-1":    {"s3://bk/?region=eu-west-1", "r.json"},
		"s3://bk/lab/runs/r.json":            {"s3://bk/lab/runs/", "r.json"},
		"file:///tmp/runs/before.json":       {"file:///tmp/runs/", "before.json"},
		"s3://bk/r.json?endpoint=http://h:1": {"s3://bk/?endpoint=http://h:1", "r.json"},
	} {
		u, err := url.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		if folder, key := splitRunURL(u); folder != want[0] || key != want[1] {
			t.Errorf("%s: folder %q, key %q; want %q, %q", name, folder, key, want[0], want[1])
		}
	}
}

// TestWarningsAreTextInMarkdown: a model's name from a run file is shown
// as written in the Markdown output's warning, never as a link, emphasis
// or HTML in a pull-request comment.
func TestWarningsAreTextInMarkdown(t *testing.T) {
	evil := "x**bold** [link](http://evil) <img src=x onerror=alert(1)> `code` _em_"
	var sb strings.Builder
	if err := writeCompareMarkdown(&sb, compareReport{A: "a", B: "b", Warnings: []string{"different models: " + evil + " vs y"}}); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, markup := range []string{"**bold**", "[link](", " <img", "`code`", "_em_"} {
		if strings.Contains(out, markup) {
			t.Errorf("markup %q left live in:\n%s", markup, out)
		}
	}
	if !strings.Contains(out, `\[link\]\(http://evil\)`) {
		t.Errorf("the name is not escaped as expected:\n%s", out)
	}
}

// TestCompareWarnsOfAnotherRequest: two runs that differ only in what
// their requests carried (thinking on or off) were compared without a
// word; `compare` names the difference as it names another model.
func TestCompareWarnsOfAnotherRequest(t *testing.T) {
	a := &matrixgen.Run{Model: matrixgen.Model{Name: "m"}}
	b := *a
	if w := unrelated(a, &b); w != nil {
		t.Fatalf("the same setup warns %q", w)
	}
	b.Request = &matrixgen.Request{ChatTemplateKwargs: map[string]any{"enable_thinking": false}}
	w := unrelated(a, &b)
	if len(w) != 1 || !strings.Contains(w[0], `request (none vs "chat_template_kwargs {\"enable_thinking\": false}")`) {
		t.Errorf("warnings %q", w)
	}
	c := matrixgen.Run{Hardware: matrixgen.Hardware{GPU: "H200"}}
	if w := unrelated(a, &c); len(w) != 1 || !strings.HasSuffix(w[0], "they differ in model (m vs none), GPU (none vs H200)") {
		t.Errorf("a run without a model and one without a GPU: warnings %q", w)
	}
	b.Request.Extra = map[string]any{"huge": strings.Repeat("x", 1<<20)}
	if w := unrelated(a, &b); len(w) != 1 || len(w[0]) > 2*maxRequestText {
		t.Errorf("a megabyte request makes a warning of %d bytes", len(w[0]))
	}
}

// TestGateFailsOnLostCells: B that errs at a cell A served, or stopped
// before it (not run), passed the gate: no ratio, so no slowdown (found
// by a newcomer using compare as a CI gate). A cell B never planned is
// not lost.
func TestGateFailsOnLostCells(t *testing.T) {
	for name, lose := range map[string]func(r *matrixgen.Run){
		"error": func(r *matrixgen.Run) {
			r.Decode[1].Status, r.Decode[1].Reason = matrixgen.StatusError, "HTTP 500: CUDA out of memory"
		},
		"not run": func(r *matrixgen.Run) {
			r.Incomplete = true
			r.Decode[1] = matrixgen.Decode{ContextTokens: r.Decode[1].ContextTokens, Concurrency: r.Decode[1].Concurrency, Status: matrixgen.StatusNotRun}
		},
	} {
		runs := t.TempDir()
		a, b := testrun.Full(1), testrun.Full(1)
		b.Engine.Version += "-b"
		lose(b)
		for id, r := range map[string]*matrixgen.Run{"before": a, "after": b} {
			if err := runfile.Save(filepath.Join(runs, id+".json"), r); err != nil {
				t.Fatal(err)
			}
		}
		cell := fmt.Sprintf("decode %s×%d", matrixgen.ContextLabel(a.Decode[1].ContextTokens), a.Decode[1].Concurrency)
		code, out, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-fail-on", "5")
		if code != exitFailed || !strings.Contains(errOut, "1 cell valid in A not valid in B: "+cell) || !strings.Contains(out, "1 valid in A not valid in B") || !strings.HasSuffix(strings.TrimSpace(out), ": fail") {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errOut)
		}
		if name == "error" && !strings.Contains(errOut, "CUDA out of memory") {
			t.Errorf("the reason is not named: %s", errOut)
		}
		// An interrupted B is named so: its headline figures cover only
		// what it measured.
		if incomplete := strings.Contains(errOut, "warning: run B is incomplete"); incomplete != (name == "not run") {
			t.Errorf("%s: warned of an incomplete B: %v\n%s", name, incomplete, errOut)
		}
		// The output names the lost cell with B's reason, apart from the
		// cells not compared (where it stood, its reason on stderr only).
		for _, format := range []string{"text", "markdown"} {
			_, out, _ := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-format", format)
			lost, _, _ := strings.Cut(out[strings.Index(out, "lost in B"):], "\n")
			if !strings.Contains(lost, "1 cell") || name == "error" && !strings.Contains(lost, "CUDA out of memory") ||
				strings.Contains(out, "A Valid, B ") {
				t.Errorf("%s, %s: the lost cell reads %q in\n%s", name, format, lost, out)
			}
		}
		if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "after", "before", "-fail-on", "5"); code != 0 {
			t.Errorf("%s: B serving a cell A lost failed the gate: exit %d, %s", name, code, errOut)
		}
		if code, _, _ := matrixgenCmd(t, "compare", "-runs", runs, "before", "after"); code != 0 {
			t.Errorf("%s without -fail-on: exit %d", name, code)
		}
	}
	// A smaller sweep: B never planned the cell.
	runs := t.TempDir()
	a, b := testrun.Full(1), testrun.Full(1)
	b.Engine.Version += "-b"
	b.Decode = b.Decode[:len(b.Decode)-1]
	for id, r := range map[string]*matrixgen.Run{"before": a, "after": b} {
		if err := runfile.Save(filepath.Join(runs, id+".json"), r); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errOut := matrixgenCmd(t, "compare", "-runs", runs, "before", "after", "-fail-on", "5"); code != 0 {
		t.Errorf("a cell B never planned failed the gate: exit %d, %s", code, errOut)
	}
}
