package render

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/matrixgen/matrixgen/internal/parallel"
)

// The index at any size. A lab's history grows to a hundred thousand runs,
// whose one table would be a hundred megabytes of HTML no browser opens
// comfortably, so the index is pages of indexPageRuns runs, newest first
// (index.html, index-2.html, …), each a plain table with a pager that
// works without a script. Filters and sorting must still reach every run:
// the runs' summaries are also written in chunks of indexChunkRuns
// (assets/index/chunk-0001.js, …), each a script that hands its runs to
// the page's script (matrixgenIndexChunk), which loads them only once a
// filter or a sort is chosen. A script, not JSON to fetch, because
// browsers load <script src> from file:// and refuse fetch there.
//
// Each file of the index has a fingerprint of everything its bytes are made
// of (indexFile.print), so `matrixgen serve` rewrites only the pages and
// the chunk a change reaches, not the whole index (live.go).

// indexPageRuns is how many runs a page of the index lists, and
// indexChunkRuns how many runs' summaries one chunk holds: a page stays
// around a hundred kilobytes, a chunk a few hundred. Variables so that
// tests make a site of many pages from a few runs.
var (
	indexPageRuns  = 100
	indexChunkRuns = 1000
)

// indexFile is one file of the index: a page or a chunk.
type indexFile struct {
	rel string
	// print is a fingerprint of all that the file is made of: the same
	// print, the same bytes, within one process.
	print uint64
	make  func() ([]byte, error)
}

// indexLayout is the index cut into pages and chunks, and what its pages
// share.
type indexLayout struct {
	rows        []indexRow         // every run, in the index's order
	comparisons [][]comparisonLink // by page: the pairs whose first run in the index's order is on it
	filters     []filter
	efficiency  bool
	pages       int
	chunks      int
	shared      uint64 // print of what every page shows
	// csvParts are runs.csv's parts by month, linked from the first page.
	csvParts []csvPart
}

// printSeed seeds every fingerprint of a process: a Live compares prints
// only with its own earlier ones.
var printSeed = maphash.MakeSeed()

func newIndexLayout(rows []indexRow, pairs []Pair) indexLayout {
	l := indexLayout{rows: rows, filters: filters(rows)}
	l.pages = max(1, (len(rows)+indexPageRuns-1)/indexPageRuns)
	l.chunks = (len(rows) + indexChunkRuns - 1) / indexChunkRuns
	for _, r := range rows {
		if r.BestPerWatt != "" {
			l.efficiency = true
			break
		}
	}
	at := make(map[string]int, len(rows))
	for i, r := range rows {
		at[r.ID] = i
	}
	l.comparisons = make([][]comparisonLink, l.pages)
	for _, p := range pairs {
		page := min(at[p.A], at[p.B]) / indexPageRuns
		l.comparisons[page] = append(l.comparisons[page], comparisonLink{Href: "compare/" + compareID(p) + "/index.html", A: p.A, B: p.B})
	}
	var h maphash.Hash
	h.SetSeed(printSeed)
	writeInts(&h, len(rows), l.pages, l.chunks, boolInt(l.efficiency))
	for _, f := range l.filters {
		writeStrings(&h, f.Name)
		for _, v := range f.Values {
			writeStrings(&h, v.Value)
			writeInts(&h, v.Runs)
		}
		writeInts(&h, len(f.all))
	}
	l.shared = h.Sum64()
	return l
}

// pageRows are the runs the page (0-based) lists.
func (l indexLayout) pageRows(page int) []indexRow {
	return l.rows[min(page*indexPageRuns, len(l.rows)):min((page+1)*indexPageRuns, len(l.rows))]
}

// chunkRows are the runs the chunk (0-based) holds.
func (l indexLayout) chunkRows(chunk int) []indexRow {
	return l.rows[chunk*indexChunkRuns : min((chunk+1)*indexChunkRuns, len(l.rows))]
}

// indexFiles lays out the index of rows, in the index's order, as files.
func (b *builder) indexFiles(rows []indexRow, pairs []Pair) []indexFile {
	l := newIndexLayout(rows, pairs)
	l.csvParts = siteCSVParts(rows)
	files := make([]indexFile, 0, l.pages+l.chunks)
	for page := range l.pages {
		var h maphash.Hash
		h.SetSeed(printSeed)
		writeInts(&h, page, int(l.shared))
		if page == 0 {
			for _, p := range l.csvParts {
				writeStrings(&h, p.Name)
			}
		}
		writeRowPrints(&h, l.pageRows(page))
		for _, c := range l.comparisons[page] {
			writeStrings(&h, c.A, c.B)
		}
		files = append(files, indexFile{rel: indexPageName(page + 1), print: h.Sum64(),
			make: func() ([]byte, error) { return b.indexPageHTML(l, page) }})
	}
	for chunk := range l.chunks {
		var h maphash.Hash
		h.SetSeed(printSeed)
		writeInts(&h, chunk)
		writeRowPrints(&h, l.chunkRows(chunk))
		files = append(files, indexFile{rel: indexChunkName(chunk + 1), print: h.Sum64(),
			make: func() ([]byte, error) { return indexChunk(chunk+1, l.chunkRows(chunk)) }})
	}
	for _, f := range l.filters {
		for chunk := 1; chunk <= f.chunks(); chunk++ {
			var h maphash.Hash
			h.SetSeed(printSeed)
			writeStrings(&h, f.Name)
			writeInts(&h, chunk)
			for _, v := range f.all[(chunk-1)*indexValuesChunk : min(chunk*indexValuesChunk, len(f.all))] {
				writeStrings(&h, v.Value)
				writeInts(&h, v.Runs)
			}
			files = append(files, indexFile{rel: indexValuesName(f.Name, chunk), print: h.Sum64(),
				make: func() ([]byte, error) { return indexValues(f, chunk) }})
		}
	}
	files = append(files, comparedFiles(pairs)...)
	return files
}

// writeIndex writes the index's pages and chunks from rows in the index's
// order, on every core, and keeps their prints for a Live.
func (b *builder) writeIndex(dir string, rows []indexRow, pairs []Pair) error {
	files := b.indexFiles(rows, pairs)
	errs := make([]error, len(files))
	parallel.Each(len(files), func(i int) {
		if err := b.ctx.Err(); err != nil {
			errs[i] = err
			return
		}
		data, err := files[i].make()
		if err == nil {
			err = b.writeFile(dir, files[i].rel, data)
		}
		errs[i] = err
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	b.indexPrints = indexPrintsOf(files)
	return nil
}

// indexPageName is the file of the page (1-based): the first is the
// site's index.html, so every link to the index stays as it was.
func indexPageName(page int) string {
	if page == 1 {
		return "index.html"
	}
	return "index-" + strconv.Itoa(page) + ".html"
}

// indexChunkName is the file of the chunk (1-based).
func indexChunkName(chunk int) string {
	return fmt.Sprintf("assets/index/chunk-%04d.js", chunk)
}

type indexPage struct {
	pageBase
	SiteDescription string
	// Runs are the page's runs; TotalRuns the site's.
	Runs        []indexRow
	TotalRuns   int
	Filters     []filter
	Comparisons []comparisonLink
	// Efficiency shows the tok/s per watt column: some run has telemetry.
	Efficiency bool
	// Chart answers "which setup is fastest?": each run's best
	// single-stream and peak total tok/s.
	Chart      any
	ChartLabel string
	// Pager links the index's other pages, below the table, and PagerTop
	// above the chart, a page of a hundred runs being long; "" when there
	// is one page.
	Pager, PagerTop *pager
	// Data tells the page's script where every run's summary is (indexData).
	Data template.JS
	// CSVParts are runs.csv split by month, linked beside the table on the
	// first page, when it is longer than a spreadsheet opens (sitecsv.go).
	CSVParts []csvPart
}

// indexData is what the page's script needs to filter and sort every run:
// how many there are, in how many chunks, and how the pages are cut.
type indexData struct {
	Filters    []filterData `json:"filters"`
	Runs       int          `json:"runs"`
	Chunks     int          `json:"chunks"`
	ChunkRuns  int          `json:"chunk_runs"`
	PageRuns   int          `json:"page_runs"`
	Page       int          `json:"page"`
	Efficiency bool         `json:"efficiency"`
}

// filterData is what the page's script knows of a filter: how many values
// it has, in how many values scripts.
type filterData struct {
	Name   string `json:"name"`
	Label  string `json:"label"`
	Values int    `json:"values"`
	Chunks int    `json:"chunks"`
}

type comparisonLink struct{ Href, A, B string }

// indexPageHTML lays out and writes the page (0-based) of the index.
func (b *builder) indexPageHTML(l indexLayout, page int) ([]byte, error) {
	desc := b.site.Description
	if desc == "" {
		desc = "Prefill and sustained decode speed of LLM inference servers, by context length and concurrency."
	}
	title := b.site.Title
	if page > 0 {
		title = "Runs, page " + strconv.Itoa(page+1) + " · " + b.site.Title
	}
	rows := l.pageRows(page)
	p := indexPage{pageBase: b.base("", title, desc, pageAddress(page+1)), SiteDescription: b.site.Description,
		Runs: rows, TotalRuns: len(l.rows), Filters: l.filters, Efficiency: l.efficiency, Comparisons: l.comparisons[page],
		Pager: newPager(page+1, l.pages, len(l.rows), "pager"), PagerTop: newPager(page+1, l.pages, len(l.rows), "pager-top")}
	if len(rows) > 0 {
		p.Chart, p.ChartLabel = indexChart(rows)
		p.Charts = true
	}
	fd := make([]filterData, len(l.filters))
	for i, f := range l.filters {
		fd[i] = filterData{Name: f.Name, Label: f.Label, Values: len(f.all), Chunks: f.chunks()}
	}
	data, err := scriptJSON(indexData{Filters: fd, Runs: len(l.rows), Chunks: l.chunks, ChunkRuns: indexChunkRuns, PageRuns: indexPageRuns,
		Page: page + 1, Efficiency: l.efficiency})
	if err != nil {
		return nil, err
	}
	p.Data = data
	if page == 0 {
		p.CSVParts = l.csvParts
	}
	return execute(b.index, p)
}

// pageAddress is the page's address relative to the site, for its
// canonical link: the site's own address for the first.
func pageAddress(page int) string {
	if page == 1 {
		return ""
	}
	return indexPageName(page)
}

// pager links the index's pages from one page: newer and older, the first
// and the last, and the two on each side of this one. The template's
// "pager" block writes it; matrixgen.js's viewPager writes a filtered
// view's alike.
type pager struct {
	ID                string // the nav's id
	First, Last, Runs string // "Runs 101–200 of 1,000"
	Newer, Older      string // the pages before and after, "" at an end
	Items             []pagerItem
}

// pagerItem is a page number a pager shows, or a gap where numbers are
// left out.
type pagerItem struct {
	N            int
	Href         string
	Current, Gap bool
}

// newPager is the pager of page (1-based) of pages; nil when there is one
// page. id names the pager.
func newPager(page, pages, runs int, id string) *pager {
	if pages < 2 {
		return nil
	}
	p := &pager{ID: id, First: count((page-1)*indexPageRuns + 1), Last: count(min(page*indexPageRuns, runs)), Runs: count(runs)}
	if page > 1 {
		p.Newer = indexPageName(page - 1)
	}
	if page < pages {
		p.Older = indexPageName(page + 1)
	}
	for _, n := range pagerNumbers(page, pages) {
		p.Items = append(p.Items, pagerItem{N: n, Href: indexPageName(n), Current: n == page, Gap: n == 0})
	}
	return p
}

// pagerNumbers are the page numbers a pager shows from page: the first,
// the last and two each side of page, a 0 where numbers are left out.
// matrixgen.js's pager numbers the pages of a filtered view alike.
func pagerNumbers(page, pages int) []int {
	var out []int
	for n := 1; n <= pages; n++ {
		if n == 1 || n == pages || n >= page-2 && n <= page+2 {
			if len(out) > 0 && out[len(out)-1] != n-1 {
				out = append(out, 0)
			}
			out = append(out, n)
		}
	}
	return out
}

// indexChunk is the script of the chunk (1-based) of rows: it hands each
// run's summary to the page's matrixgenIndexChunk, a list a run in the
// fields matrixgen.js's summary reads (its S), as the table shows them.
func indexChunk(chunk int, rows []indexRow) ([]byte, error) {
	summaries := make([][]any, len(rows))
	for i, r := range rows {
		summaries[i] = []any{r.ID, r.Model, r.GPU, r.Engine, r.EngineName, r.Quantization, r.Date,
			r.BestSingle, r.Peak, r.BestPerWatt, r.BestValue, r.PeakValue, r.PerWattValue, r.Simulated}
	}
	js, err := scriptJSON(summaries)
	if err != nil {
		return nil, err
	}
	return []byte("matrixgenIndexChunk(" + strconv.Itoa(chunk) + ", " + string(js) + ");\n"), nil
}

// filter is one of the index's select boxes over a column. A page lists
// at most indexFilterValues of its values, the most frequent: with a model
// of its own a run, a box of every value would grow with the runs (10,001
// options, 377 KB a page at 10,000 runs). Every value, with how many runs
// have it, is in the filter's values scripts (indexValuesName), which the
// page loads only when asked; a "contains" field reaches the others.
type filter struct {
	Name, Label string
	// Values are what the page's box lists, by value.
	Values []filterValue
	// all are every value, the most frequent first.
	all []filterValue
}

// filterValue is a value of a column and how many runs have it.
type filterValue struct {
	Value string
	Runs  int
}

// RunsText is how many runs have the value, as the page prints it.
func (v filterValue) RunsText() string { return count(v.Runs) }

// indexFilterValues is how many values of a filter a page lists, and
// indexValuesChunk how many one values script holds.
var (
	indexFilterValues = 50
	indexValuesChunk  = 5000
)

// chunks is how many values scripts hold the filter's values.
func (f filter) chunks() int { return (len(f.all) + indexValuesChunk - 1) / indexValuesChunk }

// filters are the index's select boxes over every run, each listing its
// most frequent values however many runs there are.
func filters(rows []indexRow) []filter {
	distinct := func(name, label string, get func(indexRow) string) filter {
		at := map[string]int{}
		var all []filterValue
		for _, r := range rows {
			v := get(r)
			if v == dash || v == "" {
				continue
			}
			if i, ok := at[v]; ok {
				all[i].Runs++
				continue
			}
			at[v] = len(all)
			all = append(all, filterValue{Value: v, Runs: 1})
		}
		slices.SortFunc(all, func(x, y filterValue) int {
			if c := cmp.Compare(y.Runs, x.Runs); c != 0 {
				return c
			}
			return strings.Compare(x.Value, y.Value)
		})
		shown := slices.Clone(all[:min(len(all), indexFilterValues)])
		slices.SortFunc(shown, func(x, y filterValue) int { return strings.Compare(x.Value, y.Value) })
		return filter{Name: name, Label: label, Values: shown, all: all}
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

// indexValues is the values script (1-based) of the filter: it hands the
// filter's values, each [value, runs], the most frequent first, to the
// page's matrixgenIndexValues.
func indexValues(f filter, chunk int) ([]byte, error) {
	values := f.all[(chunk-1)*indexValuesChunk : min(chunk*indexValuesChunk, len(f.all))]
	list := make([][2]any, len(values))
	for i, v := range values {
		list[i] = [2]any{v.Value, v.Runs}
	}
	js, err := scriptJSON(list)
	if err != nil {
		return nil, err
	}
	name, err := scriptJSON(f.Name)
	if err != nil {
		return nil, err
	}
	return []byte("matrixgenIndexValues(" + string(name) + ", " + strconv.Itoa(chunk) + ", " + string(js) + ");\n"), nil
}

// writeRowPrints adds to h all that the index shows of each row.
func writeRowPrints(h *maphash.Hash, rows []indexRow) {
	for _, r := range rows {
		writeStrings(h, r.ID, r.Model, r.GPU, r.Engine, r.Quantization, r.Date, r.BestSingle, r.Peak, r.BestPerWatt,
			r.EngineName, r.BestValue, r.PeakValue, r.PerWattValue)
		writeInts(h, boolInt(r.Simulated))
	}
}

// writeStrings adds each string to h, each ended, so "ab","c" and "a","bc"
// differ.
func writeStrings(h *maphash.Hash, ss ...string) {
	for _, s := range ss {
		writeInts(h, len(s))
		h.WriteString(s)
	}
}

func writeInts(h *maphash.Hash, ns ...int) {
	for _, n := range ns {
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], uint64(n))
		h.Write(buf[:])
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// indexPrintsOf lists the index's files and their prints, for a Live to
// tell which a change reaches.
func indexPrintsOf(files []indexFile) map[string]uint64 {
	out := make(map[string]uint64, len(files))
	for _, f := range files {
		out[f.rel] = f.print
	}
	return out
}
