package render

import (
	"bytes"
	"flag"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const sampleID = "nemotron-3.5-lightning-nvfp4-rtx-pro-6000-vllm"

func loadSample(t testing.TB) runfile.Entry {
	t.Helper()
	e, err := runfile.Load(filepath.Join("..", "runs", sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// buildSample builds the site of the sample run into a temp folder.
func buildSample(t *testing.T, site Site) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(Entries{loadSample(t)}, site, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGolden compares the sample run's pages with the committed ones, so a
// diff shows exactly what a change did to a page. Run with -update to accept.
func TestGolden(t *testing.T) {
	out := buildSample(t, Site{Title: "Speed test matrices", BaseURL: "https://example.org/bench/"})
	for _, f := range []string{
		"index.html",
		"runs/" + sampleID + "/index.html",
		"runs/" + sampleID + "/measurements.csv",
		"runs/" + sampleID + "/compare.js",
		"compare.html",
		"assets/bins.css",
		"assets/index/chunk-0001.js",
	} {
		got := read(t, filepath.Join(out, f))
		golden := filepath.Join("testdata", "golden", strings.ReplaceAll(f, "/", "__"))
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want := read(t, golden); got != want {
			t.Errorf("%s differs from %s; run go test ./render -update and review the diff", f, golden)
		}
	}
}

var (
	allTable = regexp.MustCompile(`(?s)<table class="all">.*?</table>`)
	matrixEl = regexp.MustCompile(`(?s)<table class="matrix">.*?</table>`)
	bodyRow  = regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`)
	cellEl   = regexp.MustCompile(`(?s)<t[dh][^>]*>(.*?)</t[dh]>`)
	tag      = regexp.MustCompile(`<[^>]*>`)
)

// tableRows returns a table's body rows as the text of their cells. A row
// of one cell heads a group (the phase of the all-measurements table): the
// rows under it begin with its text.
func tableRows(table string) [][]string {
	body := table[strings.Index(table, "<tbody>"):]
	var rows [][]string
	group := ""
	for _, r := range bodyRow.FindAllStringSubmatch(body, -1) {
		var cells []string
		for _, c := range cellEl.FindAllStringSubmatch(r[1], -1) {
			cells = append(cells, html.UnescapeString(tag.ReplaceAllString(c[1], "")))
		}
		if len(cells) == 1 {
			group = cells[0]
			continue
		}
		if group != "" {
			cells = append([]string{group}, cells...)
		}
		rows = append(rows, cells)
	}
	return rows
}

// seedRows reads the sample run's source page's tables (testdata holds them as the page
// printed them: "| a | b |").
func seedRows(t *testing.T, name string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(read(t, filepath.Join("testdata", name))), "\n") {
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "| "), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}

// TestSeedMeasurementsAppear checks every one of the source page's 73 measurements
// is on the page, every column formatted as that page formats it.
func TestSeedMeasurementsAppear(t *testing.T) {
	page := read(t, filepath.Join(buildSample(t, Site{}), "runs", sampleID, "index.html"))
	got := tableRows(allTable.FindString(page))
	want := seedRows(t, "seed-measurements.txt")
	if len(want) != 73 || len(got) != len(want) {
		t.Fatalf("page has %d measurement rows, seed has %d (want 73)", len(got), len(want))
	}
	for i := range want {
		if strings.Join(got[i], " | ") != strings.Join(want[i], " | ") {
			t.Errorf("row %d:\n got  %q\n want %q", i+1, got[i], want[i])
		}
	}
}

// TestSeedMatrixAppears checks the decode matrix cell by cell against the
// source page's: figure, status and TTFT in the same words and formats.
func TestSeedMatrixAppears(t *testing.T) {
	page := read(t, filepath.Join(buildSample(t, Site{}), "runs", sampleID, "index.html"))
	got := tableRows(matrixEl.FindString(page))
	want := seedRows(t, "seed-matrix.txt")
	if len(got) != len(want) {
		t.Fatalf("matrix has %d rows, seed has %d", len(got), len(want))
	}
	marks := strings.NewReplacer("⋯ ", "", "↻ ", "", "✕ ", "", "! ", "", "· ", "")
	for i := range want {
		for j := range want[i] {
			if g := marks.Replace(got[i][j]); g != want[i][j] {
				t.Errorf("matrix row %d column %d: got %q, want %q", i+1, j, g, want[i][j])
			}
		}
	}
}

func TestCSV(t *testing.T) {
	csv := string(measurementsCSV(loadSample(t).Run))
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 74 {
		t.Fatalf("%d CSV lines, want a header and 73 rows", len(lines))
	}
	for _, want := range []string{
		"prefill,16384,16K,1,valid,,33000,,491,",
		"decode,8192,8K,1,valid,,445.7,457.2,256,,,2.2,,,1,3,13370,30,,",
		"decode,524288,512K,2,queued,,489.5,",
		"decode,8192,8K,2,looped,,,,,,,,,,,0,0,,,",
	} {
		if !strings.Contains(csv, want) {
			t.Errorf("CSV lacks %q", want)
		}
	}
	if got := csvSafe("=HYPERLINK(1)"); got != "'=HYPERLINK(1)" {
		t.Errorf("csvSafe left a formula: %q", got)
	}
}

// TestDeterministic builds twice and compares every file byte for byte.
func TestDeterministic(t *testing.T) {
	a, b := buildSample(t, Site{}), buildSample(t, Site{})
	err := filepath.Walk(a, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		other, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			return err
		}
		mine, _ := os.ReadFile(p)
		if !bytes.Equal(mine, other) {
			t.Errorf("%s differs between two builds", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNotesAreMarkdownWithoutRawHTML(t *testing.T) {
	e := loadSample(t)
	e.Notes = []byte("**bold** and <script>alert(1)</script> and [x](javascript:alert(1))\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
	out := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(Entries{e}, Site{}, out); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(out, "runs", sampleID, "index.html"))
	notes := page[strings.Index(page, `<section class="notes">`):]
	notes = notes[:strings.Index(notes, "</section>")]
	for _, want := range []string{"<strong>bold</strong>", "<table>", "raw HTML omitted"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	for _, bad := range []string{"<script>alert", `href="javascript:`} {
		if strings.Contains(notes, bad) {
			t.Errorf("notes let %q through:\n%s", bad, notes)
		}
	}
}

// TestSimulatedRunIsMarked: a run measured against `matrixgen sim` says so
// on its page and in the index.
func TestSimulatedRunIsMarked(t *testing.T) {
	e := loadSample(t)
	e.Run.Simulated = true
	e.Raw = nil
	out := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(Entries{e}, Site{}, out); err != nil {
		t.Fatal(err)
	}
	if page := read(t, filepath.Join(out, "runs", sampleID, "index.html")); !strings.Contains(page, "Simulated: measured against") {
		t.Error("the run page does not say the run was simulated")
	}
	if index := read(t, filepath.Join(out, "index.html")); !strings.Contains(index, `<span class="badge">simulated</span>`) {
		t.Error("the index does not mark the run simulated")
	}
}

// TestComparePairs: configured pairs first; then each run of a model and
// GPU against the one before it, not every pair.
func TestComparePairs(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	rows := []indexRow{
		{ID: "a1", CachedRow: CachedRow{Model: "m", GPU: "g", Started: day(1)}},
		{ID: "a3", CachedRow: CachedRow{Model: "m", GPU: "g", Started: day(3)}},
		{ID: "a2", CachedRow: CachedRow{Model: "m", GPU: "g", Started: day(2)}},
		{ID: "b1", CachedRow: CachedRow{Model: "m", GPU: "other", Started: day(1)}},
		{ID: "c1", CachedRow: CachedRow{Model: "m", GPU: dash, Started: day(1)}},
		{ID: "c2", CachedRow: CachedRow{Model: "m", GPU: dash, Started: day(2)}},
	}
	got, err := comparePairs([]Pair{{"b1", "a3"}, {"a2", "a1"}}, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pair{{"b1", "a3"}, {"a2", "a1"}, {"a2", "a3"}}
	if !slices.Equal(got, want) {
		t.Errorf("pairs %v, want %v", got, want)
	}
	if _, err := comparePairs([]Pair{{"a1", "zz"}}, rows); err == nil {
		t.Error("a pair naming a missing run was accepted")
	}
}

// TestLongIDsMakeValidCompareNames: two runs with 128-character ids once
// made a compare folder name past the file name limit.
func TestLongIDsMakeValidCompareNames(t *testing.T) {
	long := func(c string) string { return strings.Repeat(c, 128) }
	a, b := testrun.Full(7), testrun.Full(7) // one model on one GPU: a compare page
	if _, err := writeSite(Entries{{ID: long("a"), Run: a}, {ID: long("b"), Run: b}}, Site{}, filepath.Join(t.TempDir(), "public")); err != nil {
		t.Fatal(err)
	}
	if id := compareID(Pair{A: long("a"), B: long("b")}); len(id) > maxCompareID {
		t.Errorf("compare id of %d bytes", len(id))
	}
	if compareID(Pair{A: long("a"), B: long("b")}) == compareID(Pair{A: long("a"), B: long("b") + "c"}) {
		t.Error("two long pairs share a name")
	}
}

// TestPathologicalNotesAndNames: notes of "*a_" repeated took Markdown
// minutes (120 KB: 6.9 s; 900 KB: still running at 120 s), and a 60 MB
// model name made a 1.6 GB site. Such notes are shown as plain text, long
// strings are cut on pages and kept whole in run.json.
func TestPathologicalNotesAndNames(t *testing.T) {
	r := testrun.Full(1)
	r.Model.Name = strings.Repeat("m", 5<<20)
	r.Decode[0].Reason = strings.Repeat("why ", 100000)
	notes := []byte(strings.Repeat("*a_", 300000))
	out := filepath.Join(t.TempDir(), "public")
	start := time.Now()
	if _, err := writeSite(Entries{{ID: "a", Run: r, Notes: notes}}, Site{}, out); err != nil {
		t.Fatal(err)
	}
	t.Logf("built in %v", time.Since(start)) // logged, not asserted: the machine is shared
	page, err := os.ReadFile(filepath.Join(out, "runs", "a", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if len(page) > 2<<20 || !strings.Contains(string(page), "These notes are shown as plain text") {
		t.Errorf("page of %d bytes; plain-text notice %v", len(page), strings.Contains(string(page), "shown as plain text"))
	}
	runJSON, _ := os.ReadFile(filepath.Join(out, "runs", "a", "run.json"))
	if !strings.Contains(string(runJSON), r.Model.Name) {
		t.Error("run.json lost the whole model name")
	}
	if r.Model.Name != strings.Repeat("m", 5<<20) {
		t.Error("the entry's run was cut in place")
	}
}

func TestTooHardForMarkdown(t *testing.T) {
	for _, tt := range []struct {
		src  string
		hard bool
	}{
		{"# Notes\n\nSome *emphasis*, a [link](https://example.org), a list:\n\n- a\n  - b\n", false},
		{strings.Repeat("*a_", 3000), true},
		{strings.Repeat("[a](", 5000), true},
		{strings.Repeat(" ", 300) + "- deep", true},
		{strings.Repeat("| a | b |\n", 10000), false}, // tables cost their length
		{strings.Repeat("> - ", 80000), true},         // 42 s of goldmark
		{strings.Repeat("+ ", 33) + "x", true},
		{strings.Repeat("1. ", 33) + "x", true},
		{strings.Repeat("> ", 31) + "- x\n" + strings.Repeat("  ", 90) + "x", false},
		{"- a\n- b\n\n1) c\n2) d\n\n> quote\n> - in it\n>   1. deeper\n", false},
		{"-1 is not a list, 2024. is a year\n", false},
	} {
		if got := tooHardForMarkdown([]byte(tt.src)) != ""; got != tt.hard {
			t.Errorf("%.40q…: too hard %v, want %v", tt.src, got, tt.hard)
		}
	}
}

// TestGeneratedDeepNotesAreShownPlain: lines nested past the budget by any
// mix of block quotes, bullets and numbered items, with any spacing, at any
// line of a note, are shown as plain text; notes within it, of the same
// pieces, as Markdown. Each is built into a page whose notes, either way,
// cost no more than their length: the benchmark beside it measures that.
func TestGeneratedDeepNotesAreShownPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 7))
	markers := []string{">", "> ", "-", "- ", "*", "* ", "+", "+ ", "1.", "1. ", "12)", "  ", "\t"}
	line := func(depth int) string {
		var b strings.Builder
		for n := 0; n < depth; {
			m := markers[rng.IntN(len(markers))]
			if strings.TrimSpace(m) == "" {
				b.WriteString(m)
				continue
			}
			b.WriteString(m + " ")
			n++
		}
		return b.String() + "text"
	}
	for range 2000 {
		deep := maxNesting + 1 + rng.IntN(200)
		var doc []string
		for range rng.IntN(20) {
			doc = append(doc, line(rng.IntN(4)))
		}
		at := rng.IntN(len(doc) + 1)
		doc = append(doc[:at], append([]string{line(deep)}, doc[at:]...)...)
		if why := tooHardForMarkdown([]byte(strings.Join(doc, "\n"))); why == "" {
			t.Fatalf("%d levels at line %d shown as Markdown:\n%.200q", deep, at+1, doc[at])
		}
		shallow := line(rng.IntN(8))
		if why := tooHardForMarkdown([]byte(shallow)); why != "" {
			t.Fatalf("%.80q: %s", shallow, why)
		}
	}
}

// BenchmarkHostileNotes measures one run page with each of the notes that
// took goldmark seconds or minutes (a megabyte of "> - ", "+ ", "1. ", of
// lines indented ever deeper), and of the costliest notes within the
// budgets. Goal: each under a second, so Ctrl-C stops a build within two.
func BenchmarkHostileNotes(b *testing.B) {
	bld, err := NewRenderer(Site{Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	indented := func() string {
		var s strings.Builder
		for i := 0; s.Len() < runfile.MaxNotesBytes-400; i++ {
			s.WriteString(strings.Repeat(" ", 2*(i%100)) + "- a\n")
		}
		return s.String()
	}()
	fill := func(unit string) string { return strings.Repeat(unit, runfile.MaxNotesBytes/len(unit)) }
	for _, notes := range []struct{ name, text string }{
		{"quote-list", fill("> - ")}, {"plus", fill("+ ")}, {"numbered", fill("1. ")}, {"indented", indented},
		{"empty-items", fill("-\n")}, {"headings", fill("# a\n")}, {"html", fill("<a ")}, {"code", fill("    a\n")},
	} {
		e := runfile.Entry{ID: "a", Run: testrun.Full(1), Notes: []byte(notes.text)}
		e.Raw, _ = e.JSON()
		b.Run(notes.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := bld.renderRun(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestIndexBestTokSPerWatt: a site with GPU telemetry shows each run's best
// tok/s per watt; one without shows no such column.
func TestIndexBestTokSPerWatt(t *testing.T) {
	withPower := testrun.Full(1)
	for i := range withPower.Decode {
		if d := &withPower.Decode[i]; d.Status == matrixgen.StatusValid {
			d.Power = &matrixgen.Power{EnergyJoules: 9000, MeanPowerW: 300, TokSPerW: new(*d.TotalTokS / 300)}
		}
	}
	best, _ := withPower.PeakTotal()
	out := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(Entries{{ID: "a", Run: withPower}, {ID: "b", Run: testrun.Full(2)}}, Site{}, out); err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))
	want := strconv.FormatFloat(best/300, 'f', 2, 64)
	if !strings.Contains(string(index), "Best tok/s per watt") || !strings.Contains(string(index), ">"+want+"<") {
		t.Errorf("the index lacks the column or the figure %s", want)
	}
	out2 := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(Entries{{ID: "b", Run: testrun.Full(2)}}, Site{}, out2); err != nil {
		t.Fatal(err)
	}
	if index, _ := os.ReadFile(filepath.Join(out2, "index.html")); strings.Contains(string(index), "per watt") {
		t.Error("a site without telemetry shows a tok/s per watt column")
	}
}

// TestMatrixViews: each view colours the cells by its own figure and scale;
// for TTFT and joules the smallest figure takes the best colour; views a
// run has no figures for are left out.
func TestMatrixViews(t *testing.T) {
	r := testrun.Full(1)
	views := matrixViews(cellOrder(r))
	names := []string{}
	for _, v := range views {
		names = append(names, v.Name)
	}
	if strings.Join(names, ",") != "total,per-request,ttft,spread" {
		t.Fatalf("views %v, want total, per-request, ttft and spread (no telemetry; samples kept)", names)
	}
	ttft := views[2]
	fastest, slowest := "", ""
	lo, hi := 0.0, 0.0
	for _, d := range r.Decode {
		if showsFigure(d) && d.TTFTMs != nil {
			if fastest == "" || d.TTFTMs.P50 < lo {
				fastest, lo = cellID(d), d.TTFTMs.P50
			}
			if slowest == "" || d.TTFTMs.P50 > hi {
				slowest, hi = cellID(d), d.TTFTMs.P50
			}
		}
	}
	shown := map[string][2]string{}
	for _, c := range ttft.Cells {
		shown[c.ID] = c.Value
	}
	if shown[fastest][1] != binClass(binCount-1) || shown[slowest][1] != binClass(0) {
		t.Errorf("TTFT: fastest %s is %q, slowest %s is %q; want the best colour for the fastest", fastest, shown[fastest][1], slowest, shown[slowest][1])
	}
	if shown[fastest][0] != millis(lo) {
		t.Errorf("TTFT figure %q, want %q", shown[fastest][0], millis(lo))
	}
	for i := range r.Decode {
		if d := &r.Decode[i]; showsFigure(*d) {
			d.Power = &matrixgen.Power{MeanPowerW: 300, TokSPerW: new(*d.TotalTokS / 300), JoulesPer1KTokens: new(300 / *d.TotalTokS * 1000)}
		}
	}
	if got := len(matrixViews(cellOrder(r))); got != 6 {
		t.Errorf("with telemetry %d views, want 6", got)
	}
	if matrixViews(cellOrder(&matrixgen.Run{})) != nil {
		t.Error("a run without cells offers views")
	}
}

// TestPrefillBarsCarryTheirFigures: every prefill bar is labelled with its
// tok/s and TTFT (seconds from ten on), so a screenshot or print carries
// them, and the axis labels stay inside the chart.
func TestPrefillBarsCarryTheirFigures(t *testing.T) {
	r := testrun.Full(1).Sorted()
	option, _ := prefillChart(r)
	text := marshal(t, option)
	for _, p := range r.Prefill {
		if p.PromptTokS == nil {
			continue
		}
		want := tokS(*p.PromptTokS) + "\\n" + ttftText(*p.TTFTMs)
		if !strings.Contains(text, `"formatter":"`+want+`"`) {
			t.Errorf("prefill %s: no bar label %q", matrixgen.ContextLabel(p.ContextTokens), want)
		}
	}
	if !strings.Contains(text, `"containLabel":true`) {
		t.Error("the chart's axis labels may fall outside it")
	}
	for _, tt := range []struct {
		ms   float64
		want string
	}{{491, "491 ms"}, {9999, "9,999 ms"}, {15700, "15.7 s"}, {170400, "170 s"}} {
		if got := ttftText(tt.ms); got != tt.want {
			t.Errorf("ttftText(%g) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}

// TestCompareNamesAreUnambiguous: "m--m" vs "n" and "m" vs "m--n" got one
// compare page's name. Over generated pairs of ids heavy in '-' (and the
// reported ones), no two pairs share a name, and every name is one folder
// within the file system's limit.
func TestCompareNamesAreUnambiguous(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 6))
	pieces := []string{"m", "n", "-", "--", "---", ".", "_", "1"}
	randomID := func() string {
		for {
			var b strings.Builder
			for n := 1 + rng.IntN(6); n > 0; n-- {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			if rng.IntN(20) == 0 {
				b.WriteString(strings.Repeat("x-", 40)) // a long one
			}
			if id := b.String(); matrixgen.ValidID(id) {
				return id
			}
		}
	}
	pairs := []Pair{{"m--m", "n"}, {"m", "m--n"}, {"m-", "n"}, {"m", "-n"}, {"m", "n"}}
	for range 50000 {
		pairs = append(pairs, Pair{randomID(), randomID()})
	}
	seen := map[string]Pair{}
	for _, p := range pairs {
		if !matrixgen.ValidID(p.A) || !matrixgen.ValidID(p.B) {
			continue
		}
		name := compareID(p)
		if other, ok := seen[name]; ok && other != p {
			t.Fatalf("%v and %v share the compare page %q", other, p, name)
		}
		seen[name] = p
		if len(name) > maxCompareID || !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) {
			t.Fatalf("%v: compare page %q", p, name)
		}
	}
}

// FuzzTooHardForMarkdown: whatever a note holds, the budget check answers
// (it is linear in the note), and a note it passes nests no line past the
// budget.
func FuzzTooHardForMarkdown(f *testing.F) {
	f.Add([]byte("# Notes\n\n- a\n  - b\n> c\n"))
	f.Add([]byte(strings.Repeat("> - ", 40)))
	f.Add([]byte("1) 2. 3) - * + x\n\t\t>"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if tooHardForMarkdown(src) != "" {
			return
		}
		for line := range bytes.Lines(src) {
			if depth, width := containers(line); depth > maxNesting || width > maxIndent {
				t.Fatalf("passed a line %d deep, %d wide: %q", depth, width, line)
			}
		}
	})
}

// TestSummaryFitsItsRoom measures what a build keeps of each run (its
// index row and its input's key, as writeRuns keeps them) and holds it to
// SummaryBytes, the room cmd/matrixgen's heap limit gives each run.
func TestSummaryFitsItsRoom(t *testing.T) {
	const n = 2000
	var before, after runtime.MemStats
	var runs [8]*matrixgen.Run
	for i := range runs {
		runs[i] = shownRun(testrun.Full(uint64(i)))
	}
	runtime.GC()
	runtime.ReadMemStats(&before)
	rows := make([]indexRow, n)
	inputs := make([]string, n)
	for i := range rows {
		e := runfile.Entry{ID: fmt.Sprintf("2026-12-04-%04d-nemotron-3-super-120b-a12b-nvfp4-gpubox-%d", i%2400, i), Run: runs[i%len(runs)]}
		rows[i] = newIndexRow(e)
		inputs[i] = fmt.Sprintf("%064x", i) // a SHA-256 in hex, as package site's
	}
	kept := map[string]string{}
	for i, in := range inputs {
		kept[rows[i].ID] = in
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("a run's summary: %d bytes on the heap", per)
	if per > SummaryBytes || per <= 0 {
		t.Errorf("a run's summary takes %d bytes; the build's heap limit gives each run %d", per, SummaryBytes)
	}
	runtime.KeepAlive(rows)
	runtime.KeepAlive(kept)
	runtime.KeepAlive(&runs)
}
