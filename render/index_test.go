package render

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	xhtml "golang.org/x/net/html"

	"github.com/matrixgen/matrixgen/internal/browser"
	"github.com/matrixgen/matrixgen/internal/sitesize"
)

// Models, GPUs and engines of generated runs, in cycles of lengths with no
// common factor, so that each filter, and each pair of them, picks its own
// set of runs.
var (
	manyModels  = 37
	manyGPUs    = 13
	manyEngines = []string{"vllm", "sglang", "llama.cpp", "ollama"}
)

// manyRows are n generated runs' index rows, newest first, as the index
// orders them: a run an hour, its figures varying, a tenth with GPU
// telemetry, one in seven simulated.
func manyRows(n int) []indexRow {
	rows := make([]indexRow, n)
	newest := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		started := newest.Add(-time.Duration(i) * time.Hour)
		best, peak := 20+float64(i%997)/10, 400+float64(i%1009)
		r := indexRow{ID: fmt.Sprintf("run-%06d", i), CachedRow: CachedRow{
			Model: fmt.Sprintf("model-%02d", i%manyModels), GPU: fmt.Sprintf("GPU %d", i%manyGPUs),
			EngineName: manyEngines[i%len(manyEngines)], Quantization: []string{"FP8", "NVFP4", dash}[i%3],
			Date: date(started), BestSingle: decimal1(best), Peak: decimal1(peak),
			BestValue: rawIfOK(true, best), PeakValue: rawIfOK(true, peak), Simulated: i%7 == 0, Started: started,
		}}
		r.Engine, r.Href = r.EngineName+" 1.0", "runs/"+r.ID+"/index.html"
		if i%10 == 0 {
			r.BestPerWatt = strconv.FormatFloat(1+float64(i%17)/10, 'f', 2, 64)
		}
		rows[i] = r
	}
	return rows
}

// manyRunsIndex is n generated runs' rows, newest first, the compare
// pairs they make (one run of each model and GPU against the one before),
// and a Renderer for their index.
func manyRunsIndex(t *testing.T, n int) ([]indexRow, []Pair, *Renderer) {
	t.Helper()
	rows := manyRows(n)
	pairs, err := comparePairs(nil, rows)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRenderer(Site{Title: "A lab's runs"})
	if err != nil {
		t.Fatal(err)
	}
	return rows, pairs, b
}

var (
	rowIDs      = regexp.MustCompile(`<tr data-id="([^"]+)"`)
	pagerLink   = regexp.MustCompile(`<a href="([^"]+)"(?: rel="(prev|next)")?>([^<]+)</a>`)
	currentPage = regexp.MustCompile(`<span aria-current="page">(\d+)</span>`)
)

// chunkSummaries reads a chunk script back: its number and its runs'
// summaries.
func chunkSummaries(t *testing.T, script string) (int, [][]any) {
	t.Helper()
	head, rest, ok := strings.Cut(script, ", ")
	n, err := strconv.Atoi(strings.TrimPrefix(head, "matrixgenIndexChunk("))
	if !ok || err != nil || !strings.HasSuffix(rest, ");\n") {
		t.Fatalf("a chunk reads %.80q…", script)
	}
	var runs [][]any
	if err := json.Unmarshal([]byte(strings.TrimSuffix(rest, ");\n")), &runs); err != nil {
		t.Fatal(err)
	}
	return n, runs
}

// TestIndexPages: ten runs at three a page make four pages numbered from
// the oldest, the newest (what is left, one run) index.html, each listing
// its runs newest first and linking the newest, newer, older and oldest
// pages; the chunks of four, also from the oldest, hold every run's
// summary, escaped for a script; a page lists the pairs whose newer run it
// holds.
func TestIndexPages(t *testing.T) {
	smallIndex(t, 3, 4)
	rows := manyRows(10)
	rows[4].Model = `</script><b>"odd" & model`
	b, err := NewRenderer(Site{Title: "Many"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := b.writeIndex(dirFolder(dir), rows, []Pair{{A: rows[9].ID, B: rows[8].ID}, {A: rows[2].ID, B: rows[4].ID}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file                         string
		runs                         []indexRow
		newest, newer, older, oldest string
		pair                         string
	}{
		{"index-1.html", rows[7:10], "index.html", "index-2.html", "", "", "compare/run-000009--run-000008/"},
		{"index-2.html", rows[4:7], "index.html", "index-3.html", "index-1.html", "", ""},
		{"index-3.html", rows[1:4], "", "index.html", "index-2.html", "index-1.html", "compare/run-000002--run-000004/"},
		{"index.html", rows[0:1], "", "", "index-3.html", "index-1.html", ""},
	} {
		html := read(t, filepath.Join(dir, c.file))
		var ids, want []string
		for _, m := range rowIDs.FindAllStringSubmatch(html, -1) {
			ids = append(ids, m[1])
		}
		for _, r := range c.runs {
			want = append(want, r.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s lists %q, want %q", c.file, ids, want)
		}
		links := map[string]string{}
		pager := html[strings.Index(html, `<nav class="pager" id="pager"`):]
		for _, m := range pagerLink.FindAllStringSubmatch(pager[:strings.Index(pager, "</nav>")], -1) {
			links[m[3]] = m[1]
		}
		if links["Newest"] != c.newest || links["← Newer"] != c.newer || links["Older →"] != c.older || links["Oldest"] != c.oldest || len(links) > 4 {
			t.Errorf("%s's pager links %q, want newest %q, newer %q, older %q, oldest %q", c.file, links, c.newest, c.newer, c.older, c.oldest)
		}
		// The days the page holds, in words that stay true as runs are added.
		oldest, newest := c.runs[len(c.runs)-1].Date, c.runs[0].Date
		span := "Runs from " + oldest + " to " + newest
		if oldest == newest {
			span = "Runs of " + newest
		}
		if !strings.Contains(html, `<span class="range">`+span+`</span>`) {
			t.Errorf("%s's pager does not say %q", c.file, span)
		}
		if title := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(html); c.file != "index.html" && title[1] != span+" · Many" || c.file == "index.html" && title[1] != "Many" {
			t.Errorf("%s is titled %q", c.file, title[1])
		}
		if m := regexp.MustCompile(`<script type="application/json" id="index-data">([^<]*)</script>`).FindStringSubmatch(html); m == nil ||
			m[1] != fmt.Sprintf(`{"page":%s,"site":"assets/index/site.js"}`, map[bool]string{true: "4", false: c.file[6:7]}[c.file == "index.html"]) {
			t.Errorf("%s's data: %q", c.file, m)
		}
		for _, pair := range []string{"compare/run-000009--run-000008/", "compare/run-000002--run-000004/"} {
			if strings.Contains(html, pair) != (pair == c.pair) {
				t.Errorf("%s: the pair %s listed: %v, want %v", c.file, pair, !(pair == c.pair), pair == c.pair)
			}
		}
		if strings.Contains(html, "<b>") {
			t.Errorf("%s holds a model's markup unescaped", c.file)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "index-4.html")); err == nil {
		t.Error("the newest page is also index-4.html")
	}
	// The chunks from the oldest, each newest first: read from the last,
	// every run newest first.
	var ids []string
	for chunk := 3; chunk >= 1; chunk-- {
		script := read(t, filepath.Join(dir, indexChunkName(chunk)))
		if strings.Contains(script, "</script>") || strings.Contains(script, "<b>") {
			t.Errorf("chunk %d holds markup unescaped", chunk)
		}
		n, runs := chunkSummaries(t, script)
		if n != chunk {
			t.Errorf("chunk %d calls itself %d", chunk, n)
		}
		if want := map[int]int{1: 4, 2: 4, 3: 2}[chunk]; len(runs) != want {
			t.Errorf("chunk %d holds %d runs, want %d", chunk, len(runs), want)
		}
		for _, s := range runs {
			ids = append(ids, s[0].(string))
			if s[0] == rows[4].ID && s[1] != rows[4].Model {
				t.Errorf("chunk %d gives the odd model as %q", chunk, s[1])
			}
		}
	}
	var want []string
	for _, r := range rows {
		want = append(want, r.ID)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("the chunks hold %q, want every run newest first %q", ids, want)
	}
	site := siteScript(t, read(t, filepath.Join(dir, indexSiteName)))
	if site.Runs != 10 || site.Chunks != 3 || site.PageRuns != 3 || site.ChunkRuns != 4 || len(site.Filters) != 4 {
		t.Errorf("site.js says %+v", site)
	}
}

// siteScript reads site.js back.
func siteScript(t *testing.T, script string) indexSite {
	t.Helper()
	js, ok := strings.CutPrefix(script, "matrixgenIndexSite(")
	var site indexSite
	if !ok || json.Unmarshal([]byte(strings.TrimSuffix(js, ");\n")), &site) != nil {
		t.Fatalf("site.js reads %.80q…", script)
	}
	return site
}

// TestIndexAt100000Runs: the first page of a 100,000-run index, each run
// of a model of its own and with a compare pair for every run, stays under
// 500 KB, and so does every chunk, values script and compared bucket.
func TestIndexAt100000Runs(t *testing.T) {
	rows, pairs, b := manyRunsIndex(t, 100_000)
	for i := range rows {
		rows[i].Model = fmt.Sprintf("vendor/a-long-model-name-of-its-own-%06d-Instruct-FP8", i)
	}
	files := b.indexFiles(rows, pairs)
	kinds := map[string]int{}
	for _, f := range files {
		kind, _, _ := strings.Cut(f.rel, "-")
		if strings.HasPrefix(kind, "assets/compared/") {
			kind = "assets/compared"
		}
		kinds[kind]++
		if f.rel != "index.html" && !strings.HasPrefix(f.rel, "assets/") {
			continue
		}
		data, err := f.make()
		if err != nil {
			t.Fatal(err)
		}
		if f.rel == "index.html" {
			t.Logf("100,000 runs (%d compare pairs): index.html %d bytes", len(pairs), len(data))
		}
		if len(data) > 500_000 {
			t.Errorf("%s is %d bytes, want at most 500 KB", f.rel, len(data))
		}
	}
	// index.html (the newest page) and index-1…999, site.js, 100 chunks,
	// values scripts (100,000
	// models at 5,000 a script; one each for GPUs, engines, quantizations),
	// the compared buckets (every one holds a pair) and their list.
	if kinds["index.html"] != 1 || kinds["index"] != 999 || kinds[indexSiteName] != 1 || kinds["assets/index/chunk"] != 100 ||
		kinds["assets/index/values"] != 20+1+1+1 || kinds["assets/compared"] != comparedBuckets+1 {
		t.Errorf("100,000 runs make %d index files %v", len(files), kinds)
	}
}

// TestFilterOptionsBounded: whatever the number of distinct values, the
// index's site.js lists at most indexFilterValues of each filter's, the
// most frequent (of those as frequent, the newest runs'), with their
// runs, and neither it nor a page grows with the
// runs; every value is in the values scripts with its count.
func TestFilterOptionsBounded(t *testing.T) {
	size := func(n int) (int, indexLayout, []byte) {
		rows, pairs, b := manyRunsIndex(t, n)
		for i := range rows {
			rows[i].Model = fmt.Sprintf("model-of-its-own-%06d", n-i) // older first by name
			if i%3 == 0 {
				rows[i].Model = "shared model" // the most frequent: listed
			}
		}
		l := newIndexLayout(rows, pairs)
		// The newest page but one: a full page.
		page, err := b.indexPageHTML(l, l.pages-2)
		if err != nil {
			t.Fatal(err)
		}
		site, err := scriptJSON(l.siteData())
		if err != nil {
			t.Fatal(err)
		}
		return len(page) + len(site), l, []byte(site)
	}
	small, _, _ := size(300)
	large, l, site := size(4000)
	t.Logf("a page and site.js: %d bytes at 300 runs, %d at 4,000 with a model each", small, large)
	if large > small+small/10 {
		t.Errorf("a page and site.js grow from %d bytes at 300 runs to %d at 4,000: the filters grow with the runs", small, large)
	}
	var data indexSite
	if err := json.Unmarshal(site, &data); err != nil {
		t.Fatal(err)
	}
	models := data.Filters[1]
	if models.Name != "model" || len(models.Shown) != indexFilterValues || models.Values != 4000-1334+1 {
		t.Errorf("the model filter lists %d values of %d, want %d of %d", len(models.Shown), models.Values, indexFilterValues, 4000-1334+1)
	}
	if !slices.ContainsFunc(models.Shown, func(v []any) bool { return v[0] == "shared model" && v[1] == 1334.0 }) {
		t.Errorf("the most frequent model is not listed with its runs: %.300v", models.Shown)
	}
	// Of the models of one run each, the box lists the newest runs' (rows
	// come newest first), not the first by name: those were the oldest runs'.
	want := []string{"shared model"}
	for i := 0; len(want) < indexFilterValues; i++ {
		if i%3 != 0 {
			want = append(want, fmt.Sprintf("model-of-its-own-%06d", 4000-i))
		}
	}
	for _, v := range models.Shown {
		if !slices.Contains(want, v[0].(string)) {
			t.Errorf("the model box lists %q, not of the %d newest runs' models", v[0], indexFilterValues)
		}
	}
	f := l.filters[1]
	seen := 0
	for chunk := 1; chunk <= f.chunks(); chunk++ {
		js, err := indexValues(f, chunk)
		if err != nil {
			t.Fatal(err)
		}
		prefix := `matrixgenIndexValues("model", ` + strconv.Itoa(chunk) + ", "
		if !strings.HasPrefix(string(js), prefix) {
			t.Fatalf("a values script begins %.60q", js)
		}
		var values [][2]any
		if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(string(js), prefix), ");\n")), &values); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			seen++
			if want := map[bool]float64{true: 1334, false: 1}[v[0] == "shared model"]; v[1] != want {
				t.Errorf("values script says %v runs of %q, want %v", v[1], v[0], want)
			}
		}
	}
	if want := 4000 - 1334 + 1; seen != want {
		t.Errorf("the values scripts hold %d models, want %d", seen, want)
	}
}

// TestFilterOptionValues: the values a filter's box offers are in
// site.js exactly as the runs have them, so a value of spaces, with spaces
// around it, quotes, markup or a NUL is the value the script's option
// gives; and every option the page's HTML writes has its value written
// out (an option without one gives its text with spaces trimmed and
// collapsed), as the HTML parser reads it.
func TestFilterOptionValues(t *testing.T) {
	odd := []string{" ", "   ", "\t", " lead", "trail ", "two  spaces", "a\x00b", `"quoted"`, "<b>&amp;</b>", "line\nbreak", "é ü", "'"}
	rows := manyRows(len(odd) * 3)
	for i := range rows {
		rows[i].Model = odd[i%len(odd)]
		rows[i].GPU = odd[(i+1)%len(odd)]
		rows[i].ID = fmt.Sprintf(" run %d ", i)
	}
	b, err := NewRenderer(Site{Title: "Odd"})
	if err != nil {
		t.Fatal(err)
	}
	l := newIndexLayout(rows, nil)
	js, err := scriptJSON(l.siteData())
	if err != nil {
		t.Fatal(err)
	}
	var site indexSite
	if err := json.Unmarshal([]byte(js), &site); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(odd)
	slices.Sort(want)
	for _, f := range site.Filters[:2] {
		var got []string
		for _, v := range f.Shown {
			got = append(got, v[0].(string))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("the %s filter's values read back as %q, want %q", f.Name, got, want)
		}
	}
	page, err := b.indexPageHTML(l, l.pages-1)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := xhtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for n := range doc.Descendants() {
		if n.Type != xhtml.ElementNode || n.Data != "option" {
			continue
		}
		value, has := "", false
		for _, a := range n.Attr {
			if a.Key == "value" {
				value, has = a.Val, true
			}
		}
		if !has {
			t.Errorf("an option (%q) has no value attribute", n.FirstChild.Data)
		}
		if strings.HasPrefix(value, " run ") {
			runs = append(runs, value)
		}
	}
	// The compare pickers, A and B, offer each run by its id as it is.
	if len(runs) != 2*len(rows) || runs[0] != rows[0].ID {
		t.Errorf("the pickers offer %d runs, the first %q; want %d, %q", len(runs), runs[0], 2*len(rows), rows[0].ID)
	}
}

// indexBrowserRuns is the size of the site TestIndexInABrowser builds: a
// lab's hundred thousand runs (their index and chunks; no run's own page,
// which the index only links), or, with -short, ten thousand: the same
// pages and chunks, a tenth as many, in a fifth of the time.
func indexBrowserRuns() int {
	if testing.Short() {
		return 10_000
	}
	return 100_000
}

// TestIndexInABrowser opens the index of 100,000 generated runs (-short:
// 10,000) in
// headless Chromium, served and from disk (file://, where browsers refuse
// fetch): the first page is at most 500 KB and lists the newest hundred;
// filtering by GPU, by model and by both, and sorting, show exactly the
// right runs a page at a time, the view's pager and a shared address
// included; a row the script makes is the row the build writes; the
// built pages' pager works without the script. Screenshots at desktop and
// phone sizes, light and dark, are the test's artifacts.
func TestIndexInABrowser(t *testing.T) {
	path := browser.PathForTest(t)
	rows, pairs, bld := manyRunsIndex(t, indexBrowserRuns())
	dir := t.TempDir()
	start := time.Now()
	err := errors.Join(copyAssets(embedded.Static, dirFolder(dir)), dirFolder(dir).WriteFile("assets/bins.css", []byte(binsCSS())), bld.writeIndex(dirFolder(dir), rows, pairs))
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the index of %d runs written in %v; index.html is %d bytes", len(rows), time.Since(start).Round(time.Millisecond), first.Size())
	if first.Size() > 500_000 {
		t.Errorf("index.html is %d bytes, want at most 500 KB", first.Size())
	}
	server := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer server.Close()
	b := browser.StartForTest(t, path)

	ids := func(keep func(indexRow) bool) []string {
		var out []string
		for _, r := range rows {
			if keep(r) {
				out = append(out, r.ID)
			}
		}
		return out
	}
	every := func(indexRow) bool { return true }
	gpu7 := ids(func(r indexRow) bool { return r.GPU == "GPU 7" })
	model5 := ids(func(r indexRow) bool { return r.Model == "model-05" })
	both := ids(func(r indexRow) bool { return r.GPU == "GPU 7" && r.Model == "model-05" })
	byBest := slices.Clone(rows)
	slices.SortStableFunc(byBest, func(x, y indexRow) int {
		a, _ := strconv.ParseFloat(x.BestValue, 64)
		c, _ := strconv.ParseFloat(y.BestValue, 64)
		return cmp.Compare(c, a)
	})
	var bestGPU7 []string
	for _, r := range byBest {
		if r.GPU == "GPU 7" {
			bestGPU7 = append(bestGPU7, r.ID)
		}
	}
	page := func(list []string, n int) []string { return list[min((n-1)*100, len(list)):min(n*100, len(list))] }

	eval := func(where, expr string, out any) {
		t.Helper()
		if err := b.Eval(expr, out); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
	}
	// shown is what the table lists and the count says, once the view has
	// loaded (at most a minute, far past the moment it takes).
	shown := func(where string) ([]string, string) {
		t.Helper()
		var count string
		eval(where, `new Promise(done => { const start = Date.now(); (function wait() {
			const c = document.getElementById("filter-count").textContent;
			if (c && !c.startsWith("loading") || Date.now() - start > 60000) return done(c);
			setTimeout(wait, 50); })(); })`, &count)
		var list []string
		eval(where, `[...document.querySelectorAll("#runs tbody tr")].map(r => r.dataset.id)`, &list)
		return list, count
	}
	choose := func(where, filters string) ([]string, string) {
		t.Helper()
		var ok bool
		eval(where, `(() => { const f = document.getElementById("filters");
			for (const [k, v] of Object.entries(`+filters+`)) f.elements[k].value = v;
			f.dispatchEvent(new Event("change")); return true; })()`, &ok)
		return shown(where)
	}
	check := func(where string, got []string, count string, want []string, wantCount string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s lists %d runs %.60q…, want %d: %.60q…", where, len(got), got, len(want), want)
		}
		if count != wantCount {
			t.Errorf("%s says %q, want %q", where, count, wantCount)
		}
	}
	all := count(len(rows)) + " runs"
	of := func(n int) string { return count(n) + " of " + all }
	// rowHTML is the rows of these runs as the page has them, the best
	// marks aside (they depend on the rows around).
	rowHTML := func(where string, ids ...string) []string {
		var out []string
		eval(where, `[`+quoteAll(ids)+`].map(id => document.querySelector("#runs tr[data-id='" + id + "']").outerHTML.replaceAll(" top", ""))`, &out)
		return out
	}

	for _, root := range []string{server.URL, "file://" + dir} {
		open := func(address string) {
			t.Helper()
			if err := b.Navigate(context.Background(), root+"/"+address); err != nil {
				t.Fatalf("%s: %v", address, err)
			}
		}
		where := "the index at " + root
		open("index.html")
		list, count := shown(where)
		check(where, list, count, page(ids(every), 1), all)
		built := rowHTML(where, "run-000000", "run-000037", "run-000074")
		chose := time.Now()
		list, count = choose(where+", GPU 7", `{gpu: "GPU 7"}`)
		t.Logf("%s: the first filter, every chunk loaded, shown in %v", where, time.Since(chose).Round(time.Millisecond))
		check(where+", GPU 7", list, count, page(gpu7, 1), of(len(gpu7)))
		var address string
		eval(where, `location.search`, &address)
		if address != "?gpu=GPU+7" {
			t.Errorf("%s: filtered by GPU, the address reads %q", where, address)
		}
		eval(where, `(() => { document.querySelector("#pager a[rel=next]").click(); return location.search; })()`, &address)
		list, count = shown(where)
		check(where+", GPU 7, the next page", list, count, page(gpu7, 2), of(len(gpu7)))
		if address != "?gpu=GPU+7&p=2" {
			t.Errorf("%s: on the next page the address reads %q", where, address)
		}
		var alike bool
		if eval(where, `document.getElementById("pager-top").innerHTML === document.getElementById("pager").innerHTML`, &alike); !alike {
			t.Errorf("%s: the pagers above and below the table differ", where)
		}
		last := (len(gpu7) + 99) / 100
		eval(where, `(() => { [...document.querySelectorAll("#pager a")].find(a => a.textContent === "`+strconv.Itoa(last)+`").click(); return ""; })()`, &address)
		list, count = shown(where)
		check(where+", GPU 7, the last page", list, count, page(gpu7, last), of(len(gpu7)))
		list, count = choose(where+", model-05", `{gpu: "", model: "model-05"}`)
		check(where+", model-05", list, count, page(model5, 1), of(len(model5)))
		list, count = choose(where+", GPU 7 and model-05", `{gpu: "GPU 7", model: "model-05"}`)
		check(where+", GPU 7 and model-05", list, count, page(both, 1), of(len(both)))
		list, count = choose(where+", GPU 7 by best single-stream", `{model: "", sort: "best"}`)
		check(where+", GPU 7 by best single-stream", list, count, page(bestGPU7, 1), of(len(gpu7)))
		choose(where+", model-00", `{gpu: "", sort: "", model: "model-00"}`)
		if made := rowHTML(where, "run-000000", "run-000037", "run-000074"); !slices.Equal(made, built) {
			t.Errorf("%s: the script makes the rows\n%q\nthe build wrote\n%q", where, made, built)
		}
		list, count = choose(where+", every filter cleared", `{model: ""}`)
		check(where+", every filter cleared", list, count, page(ids(every), 1), all)

		open("index.html?gpu=GPU+7&p=2")
		list, count = shown(where)
		check(where+", a shared address of a view's second page", list, count, page(gpu7, 2), of(len(gpu7)))
		// The second page, newest first: the files are numbered from the
		// oldest, the pager from the newest.
		pages := len(rows) / 100
		open(indexPageName(pages - 1))
		list, count = shown(where)
		check(where+", the second page", list, count, page(ids(every), 2), all)
		var links []string
		eval(where, `[...document.querySelectorAll("#pager a")].map(a => a.getAttribute("href") + " " + a.textContent)`, &links)
		if want := []string{"index.html ← Newer", "index.html 1", indexPageName(pages-2) + " 3", indexPageName(pages-3) + " 4",
			indexPageName(1) + " " + strconv.Itoa(pages), indexPageName(pages-2) + " Older →"}; !slices.Equal(links, want) {
			t.Errorf("%s: the second page's pager links %q, want %q", where, links, want)
		}
		for _, e := range b.Errors() {
			t.Errorf("%s: %s", where, e)
		}
		for _, u := range b.Requests() {
			if !strings.HasPrefix(u, root+"/") && !strings.HasPrefix(u, "data:") {
				t.Errorf("%s asked for %s, outside the site", where, u)
			}
		}
	}

	artifacts := t.ArtifactDir()
	err = b.EachScreen(func(screen, scheme string, _ bool) {
		// Each page at its top and at its pager: a page of a hundred runs
		// is tens of thousands of pixels long on a phone.
		for _, v := range []struct{ name, address string }{{"index", "index.html?p=2"}, {"index-gpu7", "index.html?gpu=GPU+7&p=3"}} {
			if err := b.Navigate(context.Background(), server.URL+"/"+v.address); err != nil {
				t.Fatal(err)
			}
			shown(v.name)
			for _, at := range []struct{ name, scroll string }{{"top", "window.scrollTo(0, 0)"}, {"pager", `document.getElementById("pager").scrollIntoView({block: "center"})`}} {
				var settled bool
				b.Eval(`new Promise(r => { `+at.scroll+`; setTimeout(() => r(true), 400); })`, &settled)
				if err := b.ScreenshotViewport(filepath.Join(artifacts, v.name+"-"+at.name+"-"+screen+"-"+scheme+".png")); err != nil {
					t.Error(err)
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// quoteAll is strings as a JavaScript list's items.
func quoteAll(ss []string) string {
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = strconv.Quote(s)
	}
	return strings.Join(quoted, ", ")
}

// smallIndex makes the index's pages and chunks a few runs each for the
// test, so a handful of runs make a site of many pages.
func smallIndex(t *testing.T, pageRuns, chunkRuns int) {
	t.Helper()
	page, chunk := sitesize.IndexPageRuns, sitesize.IndexChunkRuns
	sitesize.IndexPageRuns, sitesize.IndexChunkRuns = pageRuns, chunkRuns
	t.Cleanup(func() { sitesize.IndexPageRuns, sitesize.IndexChunkRuns = page, chunk })
}
