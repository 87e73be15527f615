package render

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	texttemplate "text/template"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/parallel"
	"github.com/matrixgen/matrixgen/internal/sitesize"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/static"
	"github.com/matrixgen/matrixgen/templates"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Site holds the settings of the whole site, from matrixgen.toml's [site].
type Site struct {
	Title       string // heads the index and ends every page title
	Description string // the index's lede and its meta description
	// BaseURL is where the site will be published ("https://example.org/bench/").
	// Pages link relatively whatever it is; it only makes canonical links.
	BaseURL string
	// Compare lists pairs of runs to compare beside those that share a model
	// and a GPU.
	Compare []Pair
	// PublishServerAddress publishes each run's server address
	// (probe.base_url) in the site's copy of its run file; off, since an
	// address on a lab's network says where its machines are.
	PublishServerAddress bool
	// Assets, when set, replaces the embedded templates and static files
	// (`matrixgen serve` in a checkout reads them from disk).
	Assets *Assets
}

// Assets are the page templates and the static files every site gets.
type Assets struct {
	Templates fs.FS // base.html and a template per page
	Static    fs.FS // what is copied into the site's assets/
}

// embedded are the assets built into matrixgen.
var embedded = Assets{Templates: templates.FS, Static: static.FS}

func (s Site) assets() Assets {
	if s.Assets != nil {
		return *s.Assets
	}
	return embedded
}

// defaultTitle is the site title when the config gives none.
const defaultTitle = "LLM inference speed test matrices"

// Stats says what a build did.
type Stats struct {
	// Pages counts the HTML pages written: all of a build's, those an
	// update rewrote.
	Pages int
	Runs  int
	// Reused counts the runs whose pages came from the old site (Cache).
	Reused int
	// Kept are files of the output folder no build wrote, carried over
	// (a folder a line).
	Kept []string
	// Left are what the output folder held that no build wrote and that is
	// not a regular file (a link, a pipe): not carried into the new site.
	Left []string
	// Unproven are the names beside the site that look like a killed
	// build's working folder but have no lock file: left alone.
	Unproven []string
	// Hidden are the runs whose launch command held what looks like a
	// secret, hidden on their pages and run.json (published): the run file
	// should hide it too. An update names only the runs it changed.
	Hidden []string
}

// echartsVersion is the vendored ECharts, shown in the footer; the VERSION
// file beside the script says where it came from.
const echartsVersion = "5.6.0"

// Source is the runs a site publishes, loaded one at a time, so a build
// holds only the runs it is rendering.
type Source interface {
	Len() int
	Entry(i int) (runfile.Entry, error)
}

// Entries is a Source of runs already in memory.
type Entries []runfile.Entry

func (es Entries) Len() int                           { return len(es) }
func (es Entries) Entry(i int) (runfile.Entry, error) { return es[i], nil }

// BadRunsError lists every run that could not be read or rendered; nothing
// was published.
type BadRunsError struct{ Errs []error }

func (e *BadRunsError) Error() string   { return errors.Join(e.Errs...).Error() }
func (e *BadRunsError) Unwrap() []error { return e.Errs }

// Names lists outside names (files, ids) for a message, each as term.Name
// prints it.
func Names(list []string) string {
	return strings.Join(mapped(list, term.Name), ", ")
}

// Renderer turns runs into the files of a site: pages, scripts, CSV, the
// sitemap. It writes only through a Folder and reads only its runs and
// templates: where the files go is package site's.
type Renderer struct {
	site        Site
	index       *template.Template
	run         *template.Template
	methodology *template.Template
	compare     *template.Template
	tables      *texttemplate.Template // a run page's matrix and table (tables.go)
	md          goldmark.Markdown
	// page is a worker's buffer for its run pages, reused for each run: a
	// page is 90 KB, and copying each out was a sixth of a build's
	// allocation. Nil outside a worker.
	page *bytes.Buffer
	ctx  context.Context // a build stops when it ends
	// cache is the old site's reuse cache, or nil; inputs each run's
	// inputs as this build read them.
	cache  Cache
	inputs map[string]string
	reused int
	hidden []string // the runs whose launch command the build redacted
	// mu guards rows, every run's summary in the index's order, which
	// SiteCSV reads while an Update may replace it.
	mu   *sync.RWMutex
	rows []indexRow
	// byID are the rows by run id, made by the first Update; pairs are
	// the compare pages as last written.
	byID  map[string]indexRow
	pairs []Pair
	// sitemapPrints and indexPrints are the prints of the sitemap's and
	// the index's files as last written: an Update rewrites those that
	// change.
	sitemapPrints, indexPrints map[string]uint64
}

// NewRenderer parses the site's templates.
func NewRenderer(site Site) (*Renderer, error) {
	if site.Title == "" {
		site.Title = defaultTitle
	}
	var pages [4]*template.Template
	for i, page := range []string{"index.html", "run.html", "methodology.html", "compare.html"} {
		var err error
		if pages[i], err = template.New(page).ParseFS(site.assets().Templates, "base.html", page); err != nil {
			return nil, err
		}
	}
	tables, err := texttemplate.ParseFS(site.assets().Templates, "tables.tmpl")
	if err != nil {
		return nil, err
	}
	return &Renderer{site: site, index: pages[0], run: pages[1], methodology: pages[2], compare: pages[3], tables: tables,
		md: newMarkdown(), mu: new(sync.RWMutex), ctx: context.Background()}, nil
}

// newMarkdown is the notes renderer. goldmark's default renderer drops raw
// HTML and unsafe link targets; html.WithUnsafe is never set, so notes can
// format but not inject. Headings are demoted (noteHeadings).
func newMarkdown() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(noteHeadings{}, 100))))
}

// noteHeadings demotes a note's headings below the page's "Notes" (an h2):
// the highest becomes an h3 and the others follow it, down to h6.
type noteHeadings struct{}

func (noteHeadings) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var headings []*ast.Heading
	top := 6
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			headings, top = append(headings, h), min(top, h.Level)
		}
		return ast.WalkContinue, nil
	})
	for _, h := range headings {
		h.Level = min(h.Level-top+3, 6)
	}
}

func (b *Renderer) base(root, title, description, rel string) pageBase {
	p := pageBase{Root: root, SiteTitle: b.site.Title, PageTitle: title, Description: description, EChartsVersion: echartsVersion}
	if b.site.BaseURL != "" {
		p.Canonical = strings.TrimSuffix(b.site.BaseURL, "/") + "/" + rel
	}
	return p
}

func (b *Renderer) markdown(src []byte) (*notes, error) {
	if why := tooHardForMarkdown(src); why != "" {
		// Plain text costs time in proportion to its length; Markdown's
		// emphasis, links and nesting can cost its square or worse.
		return &notes{Plain: string(src), PlainBecause: why}, nil
	}
	var buf bytes.Buffer
	if err := b.md.Convert(src, &buf); err != nil {
		return nil, err
	}
	// goldmark's output is trusted as HTML: its renderer drops raw HTML
	// and unsafe link targets (html.WithUnsafe is never set, newMarkdown).
	return &notes{HTML: template.HTML(buf.String())}, nil
}

// Budgets of the Markdown constructs whose cost grows faster than the text,
// within which a note of any size renders in milliseconds (60,000 emphasis
// marks took three seconds, a thousand nested list levels over one).
const (
	maxEmphasisMarks = 4000
	maxLinkBrackets  = 4000
	maxIndent        = 200 // the width of one line's containers: indentation, '>' and list markers
	maxNesting       = 32  // the containers one line opens: '>' and list markers
	maxNoteLines     = 20000
)

// tooHardForMarkdown says why a note would be too costly to render as
// Markdown, or "" when it is not. Nesting is measured line by line, as a
// line's prefix bounds its blocks' depth.
func tooHardForMarkdown(src []byte) string {
	// Each line can be a block (an empty list item, a heading): half a
	// million of them took a second.
	for _, c := range []struct {
		n, most int
		what    string
	}{
		{bytes.Count(src, []byte("*")) + bytes.Count(src, []byte("_")), maxEmphasisMarks, "emphasis marks"},
		{bytes.Count(src, []byte("[")), maxLinkBrackets, "link brackets"},
		{bytes.Count(src, []byte("\n")), maxNoteLines, "lines"},
	} {
		if c.n > c.most {
			return fmt.Sprintf("they hold %d %s, more than the %d a page renders", c.n, c.what, c.most)
		}
	}
	line := 0
	for text := range bytes.Lines(src) {
		line++
		depth, width := containers(text)
		if depth > maxNesting {
			return fmt.Sprintf("line %d is nested %d levels deep, more than the %d a page renders", line, depth, maxNesting)
		}
		if width > maxIndent {
			return fmt.Sprintf("line %d is indented %d characters deep, more than the %d a page renders", line, width, maxIndent)
		}
	}
	return ""
}

// containers measures the block containers a line of Markdown starts
// with ('>' and list markers): how many it opens and how wide their prefix
// is, indentation included.
func containers(line []byte) (depth, width int) {
	i := 0
	for i < len(line) {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '>' || (c == '-' || c == '*' || c == '+') && markerEnds(line, i+1):
			depth++
			i++
		case '0' <= c && c <= '9':
			j := i
			for j < len(line) && j-i < 9 && '0' <= line[j] && line[j] <= '9' {
				j++
			}
			if j == len(line) || line[j] != '.' && line[j] != ')' || !markerEnds(line, j+1) {
				return depth, i
			}
			depth++
			i = j + 1
		default:
			return depth, i
		}
	}
	return depth, i
}

// markerEnds reports whether a list marker ending before i is followed by
// a space, a tab or the line's end, as a list item's marker must be.
func markerEnds(line []byte, i int) bool {
	return i == len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r'
}

// Build writes the site of the runs of src into out, a fresh folder, and
// keeps what it laid out for the Updates that follow. cache, when not nil,
// gives the pages of unchanged runs. It stops when ctx ends.
func (b *Renderer) Build(ctx context.Context, src Source, out Folder, cache Cache) (Stats, error) {
	b.ctx, b.cache = ctx, cache
	defer func() { b.cache, b.inputs = nil, nil }()
	if err := errors.Join(copyAssets(b.site.assets().Static, out),
		out.WriteFile("assets/bins.css", []byte(binsCSS()))); err != nil {
		return Stats{}, err
	}
	rows, err := b.writeRuns(out, src)
	if err != nil {
		return Stats{}, err
	}
	pairs, err := comparePairs(b.site.Compare, rows)
	if err != nil {
		return Stats{}, err
	}
	if err := b.writeComparisons(out, pairs); err != nil {
		return Stats{}, err
	}
	if err := errors.Join(b.writeMethodology(out), b.writeListings(out, rows, pairs, b.inputs)); err != nil {
		return Stats{}, err
	}
	b.mu.Lock()
	b.rows, b.byID, b.pairs = rows, nil, pairs
	b.mu.Unlock()
	indexPages := max(1, (len(rows)+sitesize.IndexPageRuns-1)/sitesize.IndexPageRuns)
	return Stats{Pages: len(rows) + indexPages + 2 + len(pairs), Runs: len(rows), Reused: b.reused, Hidden: b.hidden}, nil
}

// writeRuns loads and writes the run pages on every core, keeping of each
// run only its summary (indexRow), a few hundred bytes: a build of 100,000
// runs holds 100,000 summaries and the few runs in flight, never every run.
func (b *Renderer) writeRuns(out Folder, src Source) ([]indexRow, error) {
	rows := make([]indexRow, src.Len())
	errs := make([]error, src.Len())
	inputs := make([]string, src.Len())
	files, fromFiles := src.(RawSource)
	var reused atomic.Int64
	inFlight := &budget{limit: runBytesInFlight}
	inFlight.cond = sync.NewCond(&inFlight.mu)
	parallel.EachWorker(src.Len(), func() func(int) {
		w := b.worker()
		return func(i int) {
			if fromFiles { // its bytes count against the budget until its page is written
				size := files.Size(i)
				inFlight.acquire(size)
				defer inFlight.release(size)
			}
			if errs[i] = b.ctx.Err(); errs[i] != nil { // it may have waited
				return
			}
			var e runfile.Entry
			var err error
			if fromFiles && b.cache != nil {
				// Read, and decode only a run whose page cannot be reused.
				if e, err = files.Read(i); err == nil {
					var row CachedRow
					var ok bool
					if inputs[i], row, ok = b.cache.Reuse(e); ok {
						rows[i] = row.indexRow(e.ID)
						reused.Add(1)
						return
					}
					err = e.Decode()
				}
			} else {
				e, err = src.Entry(i)
			}
			if err == nil {
				err = b.ctx.Err() // decoding may have taken a while
			}
			var laidOut []siteFile
			if err == nil { // the summary is all that stays of the run
				rows[i], laidOut, err = w.layOut(e)
			}
			if err == nil {
				err = b.ctx.Err() // laying a page out may have taken a while
			}
			if err == nil {
				var werrs []error
				for _, f := range laidOut {
					werrs = append(werrs, out.WriteFile(f.rel, f.data))
				}
				err = errors.Join(werrs...)
			}
			errs[i] = err
		}
	})
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	if bad := slices.DeleteFunc(errs, func(err error) bool { return err == nil }); len(bad) > 0 {
		return nil, &BadRunsError{Errs: bad}
	}
	b.reused, b.hidden, b.inputs = int(reused.Load()), nil, map[string]string{}
	for i, r := range rows {
		if inputs[i] != "" {
			b.inputs[r.ID] = inputs[i]
		}
		if r.Hid { // a reused run's too: said again until its file is mended
			b.hidden = append(b.hidden, r.ID)
		}
	}
	slices.Sort(b.hidden)
	return rows, nil
}

// worker is a Renderer with its own Markdown converter, so concurrent pages
// share only what is safe to share (parsed templates, settings).
func (b *Renderer) worker() *Renderer {
	w := *b
	w.md = newMarkdown()
	w.page = new(bytes.Buffer)
	return &w
}

// layOut is a run's summary and its folder's files (RunFiles), as
// published. Pages show a bounded part of each string; run.json, made from
// the entry before that, keeps them whole.
func (b *Renderer) layOut(e runfile.Entry) (indexRow, []siteFile, error) {
	e, hid, err := b.published(e)
	if err != nil {
		return indexRow{}, nil, err
	}
	e.Run = shownRun(e.Run)
	files, err := b.renderRun(e)
	if err != nil {
		return indexRow{}, nil, err
	}
	row := newIndexRow(e)
	row.Sums, row.Hid = sumsOf(files), hid
	return row, files, nil
}

// siteFile is one file of the site and its content.
type siteFile struct {
	rel  string
	data []byte
}

// renderRun makes a run's files. In a worker (b.page set) the page's bytes
// are the worker's buffer, good until its next run.
func (b *Renderer) renderRun(e runfile.Entry) ([]siteFile, error) {
	if !matrixgen.ValidID(e.ID) {
		return nil, fmt.Errorf("run id %s cannot name a folder", term.Name(e.ID))
	}
	buf := cmp.Or(b.page, new(bytes.Buffer))
	buf.Reset()
	page, err := b.newRunPage(e)
	if err == nil {
		err = b.run.ExecuteTemplate(buf, "base", page)
	}
	runJSON, jsonErr := e.JSON()
	compareJS, compareErr := compareScript(e.ID, e.Run)
	if err := errors.Join(err, jsonErr, compareErr); err != nil {
		return nil, fmt.Errorf("%s: %w", e.ID, err)
	}
	folder := "runs/" + e.ID + "/"
	return []siteFile{
		{folder + "index.html", buf.Bytes()},
		{folder + "run.json", runJSON},
		{folder + MeasurementsFile, measurementsCSV(e.Run)},
		{folder + "compare.js", compareJS},
	}, nil
}

// SummaryBytes is the memory a build may keep for each run: its summary
// (0.9 KB as TestSummaryFitsItsRoom measures it), with room to spare.
// cmd/matrixgen grows the build's soft heap limit by it for each run.
const SummaryBytes = 2 << 10

// indexRow is a run's summary: its id, its page and what the reuse cache
// keeps of it.
type indexRow struct {
	ID, Href string
	CachedRow
}

// gpuOrNone is the index's GPU: the GPU (marked when given), the sim, or
// "none (CPU)", so a CPU's name never passes for a GPU in the filter.
func gpuOrNone(r *matrixgen.Run) string {
	h := r.Hardware
	switch {
	case r.Simulated:
		return simulatedServer
	case h.GPU != "":
		return asGiven(h, "gpu", h.GPU)
	case h.CPU != "" || h.Type == "CPU":
		return "none (CPU)"
	}
	return dash
}

// newIndexRow is a run's summary, the strings many runs share interned.
func newIndexRow(e runfile.Entry) indexRow {
	r := e.Run
	best, okBest := r.BestSingleStream()
	peak, okPeak := r.PeakTotal()
	return CachedRow{
		Model: r.Model.Name, GPU: gpuOrNone(r),
		Engine:       cmp.Or(joinNonEmpty(" ", r.Engine.Name, r.Engine.Version), dash),
		Quantization: cmp.Or(r.Engine.Quantization, dash),
		Date:         date(r.StartedAt),
		BestSingle:   ifOK(okBest, best), Peak: ifOK(okPeak, peak),
		EngineName: cmp.Or(r.Engine.Name, dash),
		BestValue:  rawIfOK(okBest, best), PeakValue: rawIfOK(okPeak, peak),
		Simulated:   r.Simulated,
		BestPerWatt: ifPositive(bestPerWattValue(r), perWattText),
		Started:     r.StartedAt,
		CSVPrefix:   siteCSVPrefix(e.ID, r), CSVRows: int32(len(r.Prefill) + len(r.Decode)),
	}.indexRow(e.ID)
}

// memo is a map the workers share, cleared past maxMemo entries so that
// serve never grows it without bound; a build needs far fewer at once.
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

const maxMemo = 1 << 16

// load is k's value, made by fill (the lock not held) where there is none.
func (c *memo[K, V]) load(k K, fill func() V) V {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if !ok {
		v = fill()
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxMemo {
			c.m = map[K]V{}
		}
		c.m[k] = v
		c.mu.Unlock()
	}
	return v
}

// interned holds one copy of each string summaries share.
var interned memo[string, string]

// bestPerWattValue is the highest tok/s per watt of a valid cell, 0 for a
// run without GPU telemetry.
func bestPerWattValue(r *matrixgen.Run) float64 {
	best := 0.0
	for i := range r.Decode {
		d := &r.Decode[i]
		if d.Status == matrixgen.StatusValid && d.Power != nil && d.Power.TokSPerW != nil {
			best = max(best, *d.Power.TokSPerW)
		}
	}
	return best
}

// writeComparisons writes a page for each pair.
func (b *Renderer) writeComparisons(out Folder, pairs []Pair) error {
	for _, p := range pairs {
		if err := b.ctx.Err(); err != nil {
			return err
		}
		if err := writePage(out, path.Join("compare", compareID(p), "index.html"), b.compare, b.newComparePage(p)); err != nil {
			return err
		}
	}
	return nil
}

// writeListings puts the rows in the index's order and writes, at once,
// what is made of every run's row: the index, the compare picker, runs.csv,
// the sitemap and the reuse cache.
func (b *Renderer) writeListings(out Folder, rows []indexRow, pairs []Pair, inputs map[string]string) error {
	sortIndexOrder(rows)
	writes := []func() error{
		func() error { return b.writeIndex(out, rows, pairs) },
		// compare.html compares the two runs its address names (?a=…&b=…).
		func() error { return writePage(out, "compare.html", b.compare, b.newComparePage(Pair{})) },
		func() error { return b.writeSiteCSV(out, rows) },
		func() error { return b.writeSitemap(out, rows) },
		func() error { return b.writeReuse(rows, inputs) },
	}
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	for i, write := range writes {
		wg.Go(func() { errs[i] = write() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sortIndexOrder puts rows newest first; runs without a date after dated
// ones, by id.
func sortIndexOrder(rows []indexRow) {
	slices.SortStableFunc(rows, func(x, y indexRow) int {
		return cmp.Or(y.Started.Compare(x.Started), cmp.Compare(x.ID, y.ID))
	})
}

type methodologyPage struct {
	pageBase
	Statuses []legendStatus
}

func (b *Renderer) writeMethodology(out Folder) error {
	page := methodologyPage{pageBase: b.base("", "How the figures are measured · "+b.site.Title,
		"What prefill, sustained decode, TTFT, time between tokens and every status mean on these pages.", "methodology.html"),
		Statuses: mapped(matrixgen.Statuses, legendStatusOf)}
	return writePage(out, "methodology.html", b.methodology, page)
}

func rawIfOK(ok bool, v float64) string {
	if !ok {
		return ""
	}
	return plain(v)
}

func ifOK(ok bool, v float64) string {
	if !ok {
		return dash
	}
	return decimal1(v)
}

func execute(t *template.Template, data any) ([]byte, error) {
	buf := pageBuffers.Get().(*bytes.Buffer)
	defer pageBuffers.Put(buf)
	buf.Reset()
	if err := t.ExecuteTemplate(buf, "base", data); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// writePage writes the page rel: t executed on data.
func writePage(out Folder, rel string, t *template.Template, data any) error {
	html, err := execute(t, data)
	if err != nil {
		return err
	}
	return out.WriteFile(rel, html)
}

// pageBuffers keep the buffers pages are written into: grown once to a
// page's size, not again for every page.
var pageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// copyAssets copies the static files to the site's assets/, all but the
// Go source that embeds them (there when they are read from a checkout).
func copyAssets(static fs.FS, out Folder) error {
	return fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) == ".go" {
			return err
		}
		data, err := fs.ReadFile(static, p)
		if err != nil {
			return err
		}
		return out.WriteFile(path.Join("assets", p), data)
	})
}
