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
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// smallIndex makes the index's pages and chunks a few runs each for the
// test, so a handful of runs make a site of many pages.
func smallIndex(t *testing.T, pageRuns, chunkRuns int) {
	t.Helper()
	page, chunk := indexPageRuns, indexChunkRuns
	indexPageRuns, indexChunkRuns = pageRuns, chunkRuns
	t.Cleanup(func() { indexPageRuns, indexChunkRuns = page, chunk })
}

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
		r := indexRow{
			ID: fmt.Sprintf("run-%06d", i), Model: fmt.Sprintf("model-%02d", i%manyModels), GPU: fmt.Sprintf("GPU %d", i%manyGPUs),
			EngineName: manyEngines[i%len(manyEngines)], Quantization: []string{"FP8", "NVFP4", dash}[i%3],
			Date: date(started), BestSingle: decimal1(best), Peak: decimal1(peak),
			BestValue: rawIfOK(true, best), PeakValue: rawIfOK(true, peak), Simulated: i%7 == 0, started: started,
		}
		r.Engine, r.Href = r.EngineName+" 1.0", "runs/"+r.ID+"/index.html"
		if i%10 == 0 {
			r.BestPerWatt = strconv.FormatFloat(1+float64(i%17)/10, 'f', 2, 64)
			r.PerWattValue = r.BestPerWatt
		}
		rows[i] = r
	}
	return rows
}

// manyRunsIndex is n generated runs' rows, newest first, the compare
// pairs they make (one run of each model and GPU against the one before),
// and a builder for their index.
func manyRunsIndex(t *testing.T, n int) ([]indexRow, []Pair, *builder) {
	t.Helper()
	rows := manyRows(n)
	pairs, err := comparePairs(nil, rows)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBuilder(Site{Title: "A lab's runs"})
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

// TestIndexPages: ten runs at three a page make four pages, newest first,
// each listing its runs and linking the others; the chunks of four hold
// every run's summary, in the index's order, escaped for a script.
func TestIndexPages(t *testing.T) {
	smallIndex(t, 3, 4)
	rows := manyRows(10)
	rows[4].Model = `</script><b>"odd" & model`
	b, err := newBuilder(Site{Title: "Many"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := b.writeIndex(dir, rows, []Pair{{A: rows[9].ID, B: rows[8].ID}, {A: rows[2].ID, B: rows[4].ID}}); err != nil {
		t.Fatal(err)
	}
	for page := 1; page <= 4; page++ {
		html := read(t, filepath.Join(dir, indexPageName(page)))
		var ids []string
		for _, m := range rowIDs.FindAllStringSubmatch(html, -1) {
			ids = append(ids, m[1])
		}
		var want []string
		for _, r := range rows[(page-1)*3 : min(page*3, len(rows))] {
			want = append(want, r.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("page %d lists %q, want %q", page, ids, want)
		}
		if m := currentPage.FindStringSubmatch(html); m == nil || m[1] != strconv.Itoa(page) {
			t.Errorf("page %d's pager marks %q as the page", page, m)
		}
		links := map[string]string{}
		for _, m := range pagerLink.FindAllStringSubmatch(html, -1) {
			links[m[3]] = m[1]
			if m[2] != "" {
				links[m[2]] = m[1]
			}
		}
		if page > 1 && links["prev"] != indexPageName(page-1) || page < 4 && links["next"] != indexPageName(page+1) ||
			page == 1 && links["prev"] != "" || page == 4 && links["next"] != "" {
			t.Errorf("page %d links newer %q and older %q", page, links["prev"], links["next"])
		}
		if links["1"] == "" && page != 1 || links["4"] == "" && page != 4 {
			t.Errorf("page %d does not link the first and the last page: %q", page, links)
		}
		for _, c := range []struct {
			page int
			href string
		}{{1, "compare/run-000002--run-000004/"}, {3, "compare/run-000009--run-000008/"}} {
			if strings.Contains(html, c.href) != (c.page == page) {
				t.Errorf("page %d: the pair %s is listed on page %d alone", page, c.href, c.page)
			}
		}
		if strings.Contains(html, "<b>") {
			t.Errorf("page %d holds a model's markup unescaped", page)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "index-5.html")); err == nil {
		t.Error("ten runs at three a page made a fifth page")
	}
	var ids []string
	for chunk := 1; chunk <= 3; chunk++ {
		script := read(t, filepath.Join(dir, indexChunkName(chunk)))
		if strings.Contains(script, "</script>") || strings.Contains(script, "<b>") {
			t.Errorf("chunk %d holds markup unescaped", chunk)
		}
		n, runs := chunkSummaries(t, script)
		if n != chunk {
			t.Errorf("chunk %d calls itself %d", chunk, n)
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
}

func TestPagerNumbers(t *testing.T) {
	for _, c := range []struct {
		page, pages int
		want        []int
	}{
		{1, 1, []int{1}},
		{1, 3, []int{1, 2, 3}},
		{1, 1000, []int{1, 2, 3, 0, 1000}},
		{6, 1000, []int{1, 0, 4, 5, 6, 7, 8, 0, 1000}},
		{4, 7, []int{1, 2, 3, 4, 5, 6, 7}},
		{1000, 1000, []int{1, 0, 998, 999, 1000}},
	} {
		if got := pagerNumbers(c.page, c.pages); !slices.Equal(got, c.want) {
			t.Errorf("page %d of %d: %v, want %v", c.page, c.pages, got, c.want)
		}
	}
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
	// index.html and index-2…1000, 100 chunks, values scripts (100,000
	// models at 5,000 a script; one each for GPUs, engines, quantizations),
	// the compared buckets (every one holds a pair) and their list.
	if kinds["index.html"] != 1 || kinds["index"] != 999 || kinds["assets/index/chunk"] != 100 ||
		kinds["assets/index/values"] != 20+1+1+1 || kinds["assets/compared"] != comparedBuckets+1 {
		t.Errorf("100,000 runs make %d index files %v", len(files), kinds)
	}
}

// TestFilterOptionsBounded: whatever the number of distinct values, a page
// of the index lists at most indexFilterValues of each filter's, the most
// frequent, with their runs, and its size does not grow with the runs;
// every value is in the values scripts with its count.
func TestFilterOptionsBounded(t *testing.T) {
	size := func(n int) (int, indexLayout, []byte) {
		rows, pairs, b := manyRunsIndex(t, n)
		for i := range rows {
			rows[i].Model = fmt.Sprintf("model-of-its-own-%06d", i)
			if i%3 == 0 {
				rows[i].Model = "shared model" // the most frequent: listed
			}
		}
		l := newIndexLayout(rows, pairs)
		page, err := b.indexPageHTML(l, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(page), l, page
	}
	small, _, _ := size(300)
	large, l, page := size(4000)
	t.Logf("index.html: %d bytes at 300 runs, %d at 4,000 with a model each", small, large)
	if large > small+small/10 {
		t.Errorf("index.html grows from %d bytes at 300 runs to %d at 4,000: its filters grow with the runs", small, large)
	}
	models := regexp.MustCompile(`(?s)<select name="model">(.*?)</select>`).FindSubmatch(page)
	if models == nil {
		t.Fatal("no model filter")
	}
	if n := strings.Count(string(models[1]), "<option"); n != indexFilterValues+1 {
		t.Errorf("the model filter lists %d options, want %d and all", n, indexFilterValues+1)
	}
	if !strings.Contains(string(models[1]), `<option value="shared model">shared model (1,334)</option>`) {
		t.Errorf("the most frequent model is not listed with its runs: %.300s", models[1])
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

// TestFilterOptionValues: every option of the index's filters has its
// value written out, so a value of spaces, with spaces around it, quotes,
// markup or a NUL is the value the box gives (an option without one gives
// its text with spaces trimmed and collapsed), as the HTML parser reads it.
func TestFilterOptionValues(t *testing.T) {
	odd := []string{" ", "   ", "\t", " lead", "trail ", "two  spaces", "a\x00b", `"quoted"`, "<b>&amp;</b>", "line\nbreak", "é ü", "'"}
	rows := manyRows(len(odd) * 3)
	for i := range rows {
		rows[i].Model = odd[i%len(odd)]
		rows[i].GPU = odd[(i+1)%len(odd)]
	}
	b, err := newBuilder(Site{Title: "Odd"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := b.indexPageHTML(newIndexLayout(rows, nil), 0)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := xhtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for n := range doc.Descendants() {
		if n.Type != xhtml.ElementNode || n.Data != "option" {
			continue
		}
		sel := n.Parent
		name := ""
		for _, a := range sel.Attr {
			if a.Key == "name" {
				name = a.Val
			}
		}
		value, has := "", false
		for _, a := range n.Attr {
			if a.Key == "value" {
				value, has = a.Val, true
			}
		}
		if !has {
			t.Errorf("an option of %s has no value attribute", name)
		}
		if (name == "model" || name == "gpu") && value != "" {
			got[name] = append(got[name], value)
		}
	}
	var want []string
	for _, v := range odd {
		// As the page's HTML gives it back: a NUL is U+FFFD.
		want = append(want, strings.ReplaceAll(v, "\x00", "\uFFFD"))
	}
	slices.Sort(want)
	for _, name := range []string{"model", "gpu"} {
		slices.Sort(got[name])
		if !slices.Equal(got[name], want) {
			t.Errorf("the %s filter's values read back as %q, want %q", name, got[name], want)
		}
	}
}

// TestLiveIndexPages: serving a site of many index pages, a changed run
// rewrites its own folder, the one page of the index it is on and its
// chunk, no other; a run added or removed moves the pages after it, and
// a page no longer needed goes. After each, the site is a fresh build's.
func TestLiveIndexPages(t *testing.T) {
	smallIndex(t, 2, 3)
	runs := t.TempDir()
	site := Site{Title: "Live", BaseURL: "https://example.org/"}
	var files []string
	for i := range 7 {
		files = append(files, writeRunFile(t, runs, fmt.Sprintf("run-%d", i), testrun.Full(uint64(i)), ""))
	}
	out := filepath.Join(t.TempDir(), "public")
	live, _, err := NewLive(context.Background(), files, site, out)
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: run-6 run-5 | run-4 run-3 | run-2 run-1 | run-0, in
	// chunks run-6 run-5 run-4 | run-3 run-2 run-1 | run-0.
	index := []string{"index.html", "index-2.html", "index-3.html", "index-4.html",
		"assets/index/chunk-0001.js", "assets/index/chunk-0002.js", "assets/index/chunk-0003.js"}
	// Every file's time is set back, so a rewrite shows whatever the clock.
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range index {
		if err := os.Chtimes(filepath.Join(out, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	update := liveUpdater(t, live, runs, out, site)
	changed := testrun.Full(3)
	changed.Engine.Version = "0.31.0"
	writeRunFile(t, runs, "run-3", changed, "")
	if s := update("a changed run"); s.Pages != 2 {
		t.Errorf("a changed run rewrote %d pages, want its own and its page of the index", s.Pages)
	}
	for _, f := range index {
		info, err := os.Stat(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		rewritten := !info.ModTime().Equal(old)
		if want := f == "index-2.html" || f == "assets/index/chunk-0002.js"; rewritten != want {
			t.Errorf("after run-3 changed, %s rewritten: %v, want %v", f, rewritten, want)
		}
	}
	writeRunFile(t, runs, "run-9", testrun.Full(9), "")
	if s := update("a run added"); s.Pages != 1+4 {
		t.Errorf("a run added on top rewrote %d pages, want its own and every page of the index", s.Pages)
	}
	for _, id := range []string{"run-9", "run-6", "run-5"} {
		if err := os.Remove(filepath.Join(runs, id+".json")); err != nil {
			t.Fatal(err)
		}
	}
	update("three runs removed")
	if _, err := os.Stat(filepath.Join(out, "index-4.html")); err == nil {
		t.Error("five runs at two a page left a fourth page")
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
	path, err := browser.Find()
	if err != nil {
		if os.Getenv("MATRIXGEN_REQUIRE_BROWSER") != "" {
			t.Fatal(err)
		}
		t.Skipf("SKIPPED, not passed: %v", err)
	}
	rows, pairs, bld := manyRunsIndex(t, indexBrowserRuns())
	dir := t.TempDir()
	start := time.Now()
	err = errors.Join(copyAssets(embedded, dir), writeFile(dir, "assets/bins.css", []byte(binsCSS())), bld.writeIndex(dir, rows, pairs))
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
	profile, err := os.MkdirTemp("", "matrixgen-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	b, err := browser.Start(path, profile)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

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
		open("index-2.html")
		list, count = shown(where)
		check(where+", index-2.html", list, count, page(ids(every), 2), all)
		var links []string
		eval(where, `[...document.querySelectorAll("#pager a")].map(a => a.getAttribute("href") + " " + a.textContent)`, &links)
		if want := []string{"index.html ← Newer", "index.html 1", "index-3.html 3", "index-4.html 4", indexPageName(len(rows)/100) + " " + strconv.Itoa(len(rows)/100), "index-3.html Older →"}; !slices.Equal(links, want) {
			t.Errorf("%s: index-2.html's pager links %q, want %q", where, links, want)
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
		for _, v := range []struct{ name, address string }{{"index", "index-2.html"}, {"index-gpu7", "index.html?gpu=GPU+7&p=3"}} {
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
