package render

import (
	"bytes"
	"flag"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const sampleID = "nemotron-3.5-lightning-nvfp4-rtx-pro-6000-vllm"

func loadSample(t testing.TB) matrixgen.Entry {
	t.Helper()
	e, err := matrixgen.LoadFile(filepath.Join("..", "runs", sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// buildSample builds the site of the sample run into a temp folder.
func buildSample(t *testing.T, site Site) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "public")
	if _, err := Build(Entries{loadSample(t)}, site, out); err != nil {
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
		"assets/bins.css",
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

// tableRows returns a table's body rows as the text of their cells.
func tableRows(table string) [][]string {
	body := table[strings.Index(table, "<tbody>"):]
	var rows [][]string
	for _, r := range bodyRow.FindAllStringSubmatch(body, -1) {
		var cells []string
		for _, c := range cellEl.FindAllStringSubmatch(r[1], -1) {
			cells = append(cells, html.UnescapeString(tag.ReplaceAllString(c[1], "")))
		}
		rows = append(rows, cells)
	}
	return rows
}

// seedRows reads the seed page's tables (testdata holds them as the seed
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

// TestSeedMeasurementsAppear checks every one of the seed's 73 measurements
// is on the page, every column formatted as the seed formats it.
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
// seed's: figure, status and TTFT in the same words and formats.
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
	csv := string(MeasurementsCSV(loadSample(t).Run))
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
	if _, err := Build(Entries{e}, Site{}, out); err != nil {
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
	if _, err := Build(Entries{e}, Site{}, out); err != nil {
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
		{ID: "a1", Model: "m", GPU: "g", started: day(1)},
		{ID: "a3", Model: "m", GPU: "g", started: day(3)},
		{ID: "a2", Model: "m", GPU: "g", started: day(2)},
		{ID: "b1", Model: "m", GPU: "other", started: day(1)},
		{ID: "c1", Model: "m", GPU: Dash, started: day(1)},
		{ID: "c2", Model: "m", GPU: Dash, started: day(2)},
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
