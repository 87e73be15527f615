package render

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/matrixgen/matrixgen/internal/parallel"
	"github.com/matrixgen/matrixgen/internal/sitesize"
)

// The index at any size: pages of sitesize.IndexPageRuns runs, newest
// first, with a pager that works without a script; filters and sorting
// reach every run through summaries in chunks of sitesize.IndexChunkRuns
// (scripts, as browsers refuse fetch from file://). Pages and chunks are
// numbered from the oldest run, so a run added changes only index.html, the
// last chunk and site.js; each file's fingerprint (indexFile.print) lets
// `matrixgen serve` rewrite only what a change reaches (update.go).

// indexFile is one file of the index: a page or a chunk.
type indexFile struct {
	rel   string
	print uint64 // a fingerprint of all the file is made of: the same print, the same bytes
	make  func() ([]byte, error)
}

// madeFile is the file rel already made (data, or err): its print is its
// bytes'.
func madeFile(rel string, data []byte, err error) indexFile {
	return indexFile{rel: rel, print: maphash.Bytes(printSeed, data),
		make: func() ([]byte, error) { return data, err }}
}

// write makes the file and writes it to out.
func (f indexFile) write(out Folder) error {
	data, err := f.make()
	if err != nil {
		return err
	}
	return out.WriteFile(f.rel, data)
}

// indexLayout is the index cut into pages and chunks.
type indexLayout struct {
	rows        []indexRow         // every run, in the index's order: newest first
	comparisons [][]comparisonLink // by page (0-based): the pairs whose newer run is on it
	filters     []filter
	efficiency  bool
	pages       int
	chunks      int
	shared      uint64    // the print of what every page shows alike
	csvParts    []csvPart // runs.csv's parts by month, linked from the newest page
}

// printSeed seeds every fingerprint of a process: an Update compares prints
// only with its own earlier ones.
var printSeed = maphash.MakeSeed()

// newPrint starts a fingerprint.
func newPrint() *maphash.Hash {
	h := new(maphash.Hash)
	h.SetSeed(printSeed)
	return h
}

func newIndexLayout(rows []indexRow, pairs []Pair) indexLayout {
	l := indexLayout{rows: rows, filters: filters(rows)}
	l.pages = max(1, (len(rows)+sitesize.IndexPageRuns-1)/sitesize.IndexPageRuns)
	l.chunks = (len(rows) + sitesize.IndexChunkRuns - 1) / sitesize.IndexChunkRuns
	l.efficiency = slices.ContainsFunc(rows, func(r indexRow) bool { return r.BestPerWatt != "" })
	at := make(map[string]int, len(rows))
	for i, r := range rows {
		at[r.ID] = i
	}
	l.comparisons = make([][]comparisonLink, l.pages)
	for _, p := range pairs {
		page := l.pageOf(min(at[p.A], at[p.B]))
		l.comparisons[page] = append(l.comparisons[page], comparisonLink{Href: "compare/" + compareID(p) + "/index.html", A: p.A, B: p.B})
	}
	h := newPrint()
	writeValues(h, l.efficiency, len(rows) > 1)
	for _, f := range l.filters {
		writeStrings(h, f.Name, f.Label)
	}
	l.shared = h.Sum64()
	return l
}

// pageOf is the page (0-based, from the oldest) of the run at i.
func (l indexLayout) pageOf(i int) int {
	return (len(l.rows) - 1 - i) / sitesize.IndexPageRuns
}

// pageRows are the runs the page (0-based, from the oldest) lists.
func (l indexLayout) pageRows(page int) []indexRow {
	n := len(l.rows)
	return l.rows[max(0, n-(page+1)*sitesize.IndexPageRuns):max(0, n-page*sitesize.IndexPageRuns)]
}

// pickerRows are the runs the page's compare pickers offer: its own, and
// on the newest page, which may hold one run, the newest sitesize.IndexPageRuns.
func (l indexLayout) pickerRows(page int) []indexRow {
	if page == l.pages-1 {
		return l.rows[:min(len(l.rows), sitesize.IndexPageRuns)]
	}
	return l.pageRows(page)
}

// pageName is the file of the page (0-based, from the oldest).
func (l indexLayout) pageName(page int) string {
	if page == l.pages-1 {
		return "index.html"
	}
	return indexPageName(page + 1)
}

// indexFiles lays out the index of rows, in the index's order, as files.
func (b *Renderer) indexFiles(rows []indexRow, pairs []Pair) []indexFile {
	l := newIndexLayout(rows, pairs)
	l.csvParts = siteCSVParts(rows)
	files := make([]indexFile, 0, l.pages+l.chunks+1)
	for page := range l.pages {
		h := newPrint()
		// Its pager links depend only on whether it is the newest or the one before.
		writeValues(h, page, int(l.shared))
		writeValues(h, page == l.pages-1, page == l.pages-2)
		writeRowPrints(h, l.pageRows(page))
		if page == l.pages-1 {
			for _, p := range l.csvParts {
				writeStrings(h, p.Name)
			}
			writeRowPrints(h, l.pickerRows(page))
		}
		for _, c := range l.comparisons[page] {
			writeStrings(h, c.A, c.B)
		}
		files = append(files, indexFile{rel: l.pageName(page), print: h.Sum64(),
			make: func() ([]byte, error) { return b.indexPageHTML(l, page) }})
	}
	for chunk := range l.chunks {
		n := len(l.rows) // the chunk's runs, from the oldest
		rows := l.rows[max(0, n-(chunk+1)*sitesize.IndexChunkRuns) : n-chunk*sitesize.IndexChunkRuns]
		h := newPrint()
		writeValues(h, chunk)
		writeRowPrints(h, rows)
		files = append(files, indexFile{rel: indexChunkName(chunk + 1), print: h.Sum64(),
			make: func() ([]byte, error) { return indexChunk(chunk+1, rows) }})
	}
	// site.js is small: made now, its print is its bytes'.
	data, err := scriptCall("matrixgenIndexSite", l.siteData())
	files = append(files, madeFile(indexSiteName, data, err))
	for _, f := range l.filters {
		for chunk := 1; chunk <= f.chunks(); chunk++ {
			h := newPrint()
			writeStrings(h, f.Name)
			writeValues(h, chunk)
			for _, v := range f.chunk(chunk) {
				writeStrings(h, v.Value)
				writeValues(h, v.Runs)
			}
			files = append(files, indexFile{rel: indexValuesName(f.Name, chunk), print: h.Sum64(),
				make: func() ([]byte, error) { return indexValues(f, chunk) }})
		}
	}
	files = append(files, comparedFiles(pairs)...)
	return files
}

// writeIndex writes the index's files on every core and keeps their prints.
func (b *Renderer) writeIndex(out Folder, rows []indexRow, pairs []Pair) error {
	files := b.indexFiles(rows, pairs)
	errs := make([]error, len(files))
	parallel.Each(len(files), func(i int) {
		if errs[i] = b.ctx.Err(); errs[i] == nil {
			errs[i] = files[i].write(out)
		}
	})
	if i := slices.IndexFunc(errs, func(err error) bool { return err != nil }); i >= 0 {
		return errs[i]
	}
	b.indexPrints = make(map[string]uint64, len(files))
	for _, f := range files {
		b.indexPrints[f.rel] = f.print
	}
	return nil
}

// indexPageName is the file of a page (1-based, from the oldest) other
// than the newest, which is index.html.
func indexPageName(page int) string {
	return "index-" + strconv.Itoa(page) + ".html"
}

// indexChunkName is the file of the chunk (1-based, from the oldest).
func indexChunkName(chunk int) string {
	return fmt.Sprintf("assets/index/chunk-%04d.js", chunk)
}

// indexSiteName is the script of indexSite.
const indexSiteName = "assets/index/site.js"

type indexPage struct {
	pageBase
	SiteDescription string
	// Runs are the page's runs, newest first; Pick those its compare
	// pickers offer; Many says the site has runs to compare.
	Runs, Pick  []indexRow
	Many        bool
	Filters     []filter
	Comparisons []comparisonLink
	Efficiency  bool // the tok/s per watt column: some run has telemetry
	Chart       any  // which setup is fastest (indexChart)
	ChartLabel  string
	// Pager links the index's other pages below the table, PagerTop above
	// the chart; nil when there is one page.
	Pager, PagerTop *pager
	Data            template.JS // which page this is, for its script (indexData)
	CSVParts        []csvPart   // runs.csv split by month, linked on the newest page
}

// indexData is what a page's script knows of the page.
type indexData struct {
	Page int    `json:"page"`
	Site string `json:"site"`
}

// indexSite is what every page of the index shows of the whole site
// (assets/index/site.js): the runs, chunks and pages, and each filter's
// most frequent values.
type indexSite struct {
	Runs       int          `json:"runs"`
	Chunks     int          `json:"chunks"`
	ChunkRuns  int          `json:"chunk_runs"`
	PageRuns   int          `json:"page_runs"`
	Efficiency bool         `json:"efficiency"`
	Filters    []filterData `json:"filters"`
}

// filterData is what the page's script knows of a filter: the values its
// box lists, each [value, runs], and how many there are, in how many scripts.
type filterData struct {
	Name   string  `json:"name"`
	Label  string  `json:"label"`
	Shown  [][]any `json:"shown"`
	Values int     `json:"values"`
	Chunks int     `json:"chunks"`
}

// siteData is the layout's site.js.
func (l indexLayout) siteData() indexSite {
	s := indexSite{Runs: len(l.rows), Chunks: l.chunks, ChunkRuns: sitesize.IndexChunkRuns, PageRuns: sitesize.IndexPageRuns, Efficiency: l.efficiency}
	for _, f := range l.filters {
		shown := mapped(f.Values, func(v filterValue) []any { return []any{v.Value, v.Runs} })
		s.Filters = append(s.Filters, filterData{Name: f.Name, Label: f.Label, Shown: shown, Values: len(f.stored), Chunks: f.chunks()})
	}
	return s
}

type comparisonLink struct{ Href, A, B string }

// indexPageHTML lays out the page (0-based, from the oldest).
func (b *Renderer) indexPageHTML(l indexLayout, page int) ([]byte, error) {
	desc := cmp.Or(b.site.Description,
		"Prefill and sustained decode speed of LLM inference servers, by context length and concurrency.")
	rows := l.pageRows(page)
	title, address := b.site.Title, ""
	if page < l.pages-1 {
		title, address = "Runs "+dateRange(rows)+" · "+b.site.Title, indexPageName(page+1)
	}
	p := indexPage{pageBase: b.base("", title, desc, address), SiteDescription: b.site.Description,
		Runs: rows, Pick: l.pickerRows(page), Many: len(l.rows) > 1, Filters: l.filters, Efficiency: l.efficiency, Comparisons: l.comparisons[page],
		Pager: l.pager(page, "pager"), PagerTop: l.pager(page, "pager-top")}
	if len(rows) > 0 {
		p.Chart, p.ChartLabel = indexChart(rows)
		p.Charts = true
	}
	var err error
	if p.Data, err = scriptJSON(indexData{Page: page + 1, Site: indexSiteName}); err != nil {
		return nil, err
	}
	if page == l.pages-1 {
		p.CSVParts = l.csvParts
	}
	return execute(b.index, p)
}

// dateRange is the days of rows (newest first), oldest to newest: what a
// page of the index holds, in words that do not change as runs are added.
func dateRange(rows []indexRow) string {
	if len(rows) == 0 {
		return ""
	}
	newest, oldest := rows[0].Date, rows[len(rows)-1].Date
	if newest == oldest {
		return "of " + newest
	}
	return "from " + oldest + " to " + newest
}

// pager links the index's other pages from one page in words that stay
// true while runs are added: the newest, newer, older and oldest pages,
// and the days the page holds. matrixgen.js numbers the pages instead once
// it has site.js.
type pager struct {
	ID                           string // the nav's id
	Range                        string // "Runs from 2026-05-01 to 2026-05-04"
	Newest, Newer, Older, Oldest string // "" where it is this page or the next link
}

// pager is the pager, named id, of the page; nil when there is one page.
func (l indexLayout) pager(page int, id string) *pager {
	if l.pages < 2 {
		return nil
	}
	p := &pager{ID: id, Range: "Runs " + dateRange(l.pageRows(page))}
	if page < l.pages-1 {
		p.Newer = l.pageName(page + 1)
		if page < l.pages-2 {
			p.Newest = "index.html"
		}
	}
	if page > 0 {
		p.Older = l.pageName(page - 1)
		if page > 1 {
			p.Oldest = indexPageName(1)
		}
	}
	return p
}

// indexChunk is the script of the chunk (1-based) of rows: each run's
// summary, in the fields of matrixgen.js's S, for matrixgenIndexChunk.
func indexChunk(chunk int, rows []indexRow) ([]byte, error) {
	summaries := make([][]any, len(rows))
	for i, r := range rows {
		summaries[i] = []any{r.ID, r.Model, r.GPU, r.Engine, r.EngineName, r.Quantization, r.Date,
			r.BestSingle, r.Peak, r.BestPerWatt, r.BestValue, r.PeakValue, r.Simulated}
	}
	return scriptCall("matrixgenIndexChunk", chunk, summaries)
}

// filter is one of the index's select boxes over a column. A page lists
// at most indexFilterValues of its values, the most frequent, so a box does
// not grow with the runs; every value and its runs is in the filter's
// values scripts (indexValuesName), loaded only when asked.
type filter struct {
	Name, Label string
	// Values are what the page's box lists, by value.
	Values []filterValue
	// stored are every value in the order their first runs came, oldest
	// first, so a run added rewrites one values script.
	stored []filterValue
}

// filterValue is a value of a column and how many runs have it.
type filterValue struct {
	Value string
	Runs  int
	// newest is the place of its newest run, oldest first: ties in
	// frequency go to the newest.
	newest int
}

// indexFilterValues is how many values of a filter a page lists, and
// indexValuesChunk how many one values script holds.
var (
	indexFilterValues = 50
	indexValuesChunk  = 5000
)

// chunks is how many values scripts hold the filter's values.
func (f filter) chunks() int { return (len(f.stored) + indexValuesChunk - 1) / indexValuesChunk }

// chunk is the values the values script (1-based) holds.
func (f filter) chunk(chunk int) []filterValue {
	return f.stored[(chunk-1)*indexValuesChunk : min(chunk*indexValuesChunk, len(f.stored))]
}

// filters are the index's select boxes over every run.
func filters(rows []indexRow) []filter {
	distinct := func(name, label string, get func(indexRow) string) filter {
		at := map[string]int{}
		var stored []filterValue
		for i, r := range slices.Backward(rows) {
			v, place := get(r), len(rows)-1-i
			if v == dash || v == "" {
				continue
			}
			if i, ok := at[v]; ok {
				stored[i].Runs++
				stored[i].newest = place
				continue
			}
			at[v] = len(stored)
			stored = append(stored, filterValue{Value: v, Runs: 1, newest: place})
		}
		frequent := slices.Clone(stored)
		slices.SortFunc(frequent, func(x, y filterValue) int {
			return cmp.Or(cmp.Compare(y.Runs, x.Runs), cmp.Compare(y.newest, x.newest))
		})
		shown := frequent[:min(len(frequent), indexFilterValues)]
		slices.SortFunc(shown, func(x, y filterValue) int { return strings.Compare(x.Value, y.Value) })
		return filter{Name: name, Label: label, Values: shown, stored: stored}
	}
	return []filter{
		distinct("gpu", "GPU", func(r indexRow) string { return r.GPU }),
		distinct("model", "Model", func(r indexRow) string { return r.Model }),
		distinct("engine", "Engine", func(r indexRow) string { return r.EngineName }),
		distinct("quantization", "Quantization", func(r indexRow) string { return r.Quantization }),
	}
}

// indexValuesName is the values script (1-based) of the filter.
func indexValuesName(name string, chunk int) string {
	return fmt.Sprintf("assets/index/values-%s-%04d.js", name, chunk)
}

// indexValues is the values script (1-based) of the filter: its values,
// each [value, runs], for matrixgenIndexValues.
func indexValues(f filter, chunk int) ([]byte, error) {
	list := mapped(f.chunk(chunk), func(v filterValue) [2]any { return [2]any{v.Value, v.Runs} })
	return scriptCall("matrixgenIndexValues", f.Name, chunk, list)
}

// writeRowPrints adds to h all that the index shows of each row.
func writeRowPrints(h *maphash.Hash, rows []indexRow) {
	for _, r := range rows {
		writeStrings(h, r.ID, r.Model, r.GPU, r.Engine, r.Quantization, r.Date, r.BestSingle, r.Peak, r.BestPerWatt,
			r.EngineName, r.BestValue, r.PeakValue)
		writeValues(h, r.Simulated)
	}
}

// writeStrings adds each string to h, each ended, so "ab","c" and "a","bc"
// differ.
func writeStrings(h *maphash.Hash, ss ...string) {
	for _, s := range ss {
		writeValues(h, len(s))
		h.WriteString(s)
	}
}

func writeValues[T comparable](h *maphash.Hash, vs ...T) {
	for _, v := range vs {
		maphash.WriteComparable(h, v)
	}
}
