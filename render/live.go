package render

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/matrixgen/matrixgen"
)

// Live keeps a site built from run files up to date in place, for `matrixgen
// serve`: after a change it rewrites only what the change touches — the
// changed runs' folders, the compare pages they are in, the pages of the
// index and the chunks of summaries that list them (index.go), and the
// sitemap and the site's marker when the runs or the files are others —
// each file replaced whole (written beside it and renamed over it), so a
// reader gets the old page or the new one. A change costs its run, not
// the site: runs.csv, every measurement of every run (1.7 GB at 100,000
// runs), is not written again but made on request (SiteCSV) and removed
// from the folder at the first change, so the folder never holds a stale
// one; nor is the reuse cache, whose entries for the changed runs then no
// longer match their inputs, so the next build builds those runs again
// and reuses the rest. A full Build stays the way to publish: it swaps in
// a whole site, runs.csv and all.
type Live struct {
	b     *builder
	out   string
	files map[string]fileState // run file → what it was at the last update
	rows  map[string]indexRow  // by run id
	// mu guards list, the runs in the index's order, which SiteCSV reads
	// while an update may replace it.
	mu   sync.RWMutex
	list []indexRow
	// csvGone says runs.csv and its parts were removed from the folder.
	csvGone bool
	// marker is every file the site holds that a build wrote, which
	// tells them from files someone added, and the changes not yet
	// appended to the site's marker.
	marker *markerLog
}

// fileState is what tells a run file (and its notes) changed: size and
// modification time, as make and Hugo's server tell.
type fileState struct {
	size, notesSize int64
	mod, notesMod   time.Time
}

func stateOf(file string) (fileState, error) {
	info, err := os.Stat(file)
	if err != nil {
		return fileState{}, err
	}
	s := fileState{size: info.Size(), mod: info.ModTime(), notesSize: -1}
	if n, err := os.Stat(strings.TrimSuffix(file, ".json") + ".md"); err == nil {
		s.notesSize, s.notesMod = n.Size(), n.ModTime()
	}
	return s, nil
}

// NewLive builds the site from files into out, as Build does, and keeps
// what it laid out for the updates that follow.
func NewLive(ctx context.Context, files []string, site Site, out string) (*Live, Stats, error) {
	states := make(map[string]fileState, len(files))
	for _, f := range files {
		s, err := stateOf(f)
		if err != nil {
			return nil, Stats{}, err
		}
		states[f] = s
	}
	b, stats, err := build(ctx, Files(files), site, out)
	if err != nil {
		return nil, Stats{}, err
	}
	l := &Live{b: b, out: filepath.Clean(out), files: states, rows: map[string]indexRow{}, list: b.rows}
	for _, r := range b.rows {
		l.rows[r.ID] = r
	}
	b.rows, b.inputs = nil, nil
	if l.marker, err = readMarkerLog(l.out); err != nil {
		return nil, Stats{}, err
	}
	b.inPlace = true
	return l, stats, nil
}

// Update brings the site up to date with files, the run files there are
// now. Runs whose file or notes changed are read again; if any cannot be
// read, nothing is written and the error lists them all, as a build's does.
func (l *Live) Update(files []string) (_ Stats, err error) {
	if errs := idClashes(Files(files)); len(errs) > 0 {
		return Stats{}, &BadRunsError{Errs: errs}
	}
	states := make(map[string]fileState, len(files))
	var changed []string
	for _, f := range files {
		s, err := stateOf(f)
		if err != nil {
			return Stats{}, err
		}
		states[f] = s
		if old, ok := l.files[f]; !ok || old != s {
			changed = append(changed, f)
		}
	}
	var removed []string
	for f := range l.files {
		if _, ok := states[f]; !ok {
			removed = append(removed, f)
		}
	}
	if len(changed) == 0 && len(removed) == 0 {
		return Stats{Runs: len(l.rows)}, nil
	}
	// Read and lay out every changed run before writing anything.
	rendered := make([]renderedRun, len(changed))
	var bad []error
	for i, f := range changed {
		r, err := l.render(f)
		if err != nil {
			bad = append(bad, err)
		}
		rendered[i] = r
	}
	if len(bad) > 0 {
		return Stats{}, &BadRunsError{Errs: bad}
	}
	// From here on files are written. Should a write fail, the changed
	// runs are known as written but not as what: the next update lays out
	// again those still there and removes the folders of those gone.
	defer func() {
		if err != nil {
			for _, f := range changed {
				l.files[f] = fileState{size: -1}
			}
		}
	}()
	rows := maps2rows(l.rows, removed, rendered)
	list := make([]indexRow, 0, len(rows))
	for _, r := range rows {
		list = append(list, r)
	}
	pairs, err := comparePairs(l.b.site.Compare, list)
	if err != nil {
		return Stats{}, err
	}
	othersRuns := len(removed) > 0
	for _, r := range rendered {
		_, known := l.rows[r.row.ID]
		othersRuns = othersRuns || !known
	}
	for _, f := range removed {
		id := strings.TrimSuffix(filepath.Base(f), ".json")
		if _, still := rows[id]; !still {
			if err := l.marker.removedFolder(l.out, "runs/"+id); err != nil {
				return Stats{}, err
			}
			if err := os.RemoveAll(filepath.Join(l.out, "runs", id)); err != nil {
				return Stats{}, err
			}
		}
	}
	for _, r := range rendered {
		for _, f := range r.files {
			if err := l.b.writeFile(l.out, f.rel, f.data); err != nil {
				return Stats{}, err
			}
			l.wrote(f.rel)
		}
	}
	if err := l.updateComparisons(pairs); err != nil {
		return Stats{}, err
	}
	sortIndexOrder(list)
	indexPages, err := l.writeListings(list, pairs, othersRuns)
	if err != nil {
		return Stats{}, err
	}
	if err := l.removeSiteCSV(); err != nil {
		return Stats{}, err
	}
	if err := l.marker.flush(l.out, func(rel string, data []byte) error { return l.b.writeFile(l.out, rel, data) }); err != nil {
		return Stats{}, err
	}
	l.files, l.rows, l.b.pairs = states, rows, pairs
	l.mu.Lock()
	l.list = list
	l.mu.Unlock()
	return Stats{Pages: len(rendered) + indexPages, Runs: len(rows)}, nil
}

// writeListings writes what is made of every run's row, after a change:
// of the index only the pages and chunks whose print changed (a changed
// run: the page it is on and its chunk; a run added or removed moves the
// runs after it, so the pages and chunks from its place on); the sitemap
// only when the runs are others. It says how many pages of the index it
// wrote.
func (l *Live) writeListings(rows []indexRow, pairs []Pair, othersRuns bool) (int, error) {
	files := l.b.indexFiles(rows, pairs)
	had := l.b.indexPrints
	// Until every file is written, a failed update leaves the next to
	// write the whole index.
	l.b.indexPrints = nil
	pages := 0
	for _, f := range files {
		if old, ok := had[f.rel]; ok && old == f.print {
			continue
		}
		data, err := f.make()
		if err == nil {
			err = l.b.writeFile(l.out, f.rel, data)
		}
		if err != nil {
			return 0, err
		}
		l.wrote(f.rel)
		if strings.HasSuffix(f.rel, ".html") {
			pages++
		}
	}
	now := indexPrintsOf(files)
	for rel := range had {
		if _, still := now[rel]; !still {
			l.marker.removed(rel)
			if err := os.Remove(filepath.Join(l.out, filepath.FromSlash(rel))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return 0, err
			}
		}
	}
	l.b.indexPrints = now
	if othersRuns {
		if err := l.b.writeSitemap(l.out, rows, l.wrote, l.marker.removed); err != nil {
			return 0, err
		}
	}
	return pages, nil
}

// removeSiteCSV removes runs.csv and its parts from the folder, once: from
// the first change on they are made on request (SiteCSV).
func (l *Live) removeSiteCSV() error {
	if l.csvGone {
		return nil
	}
	names, _ := filepath.Glob(filepath.Join(l.out, "runs-*.csv"))
	for _, name := range append(names, filepath.Join(l.out, "runs.csv")) {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	l.marker.removed("runs.csv")
	for _, name := range names {
		l.marker.removed(filepath.Base(name))
	}
	l.csvGone = true
	return nil
}

// SiteCSV writes to w the file name of the site's runs.csv, "runs.csv" or
// one of its parts by month ("runs-2026-12.csv"), as a build of the runs
// the site has now writes it, read from their measurements.csv in the
// folder. ok is false for a name the site has no such file by. A run
// changed while it is written makes an error, not a file of two
// versions: what was written of it is then to be thrown away.
func (l *Live) SiteCSV(w io.Writer, name string) (ok bool, err error) {
	l.mu.RLock()
	rows := l.list
	l.mu.RUnlock()
	return streamSiteCSV(w, l.out, name, rows)
}

// wrote notes that the site holds the file rel, for the marker.
func (l *Live) wrote(rel string) {
	l.marker.wrote(rel)
}

// renderedRun is a changed run laid out: its files and its line on the
// index.
type renderedRun struct {
	row   indexRow
	files []siteFile
}

func (l *Live) render(file string) (renderedRun, error) {
	e, err := matrixgen.LoadFile(file)
	if err != nil {
		return renderedRun{}, err
	}
	if e.Raw, err = l.b.publishedJSON(e); err != nil {
		return renderedRun{}, err
	}
	e.Run = shownRun(e.Run)
	files, err := l.b.renderRun(e)
	if err != nil {
		return renderedRun{}, err
	}
	row := newIndexRow(e)
	row.sums = sumsOf(files)
	return renderedRun{row: row, files: files}, nil
}

// maps2rows is the site's runs after an update: the kept ones, and the
// changed ones as now laid out.
func maps2rows(old map[string]indexRow, removed []string, rendered []renderedRun) map[string]indexRow {
	rows := make(map[string]indexRow, len(old)+len(rendered))
	for id, r := range old {
		rows[id] = r
	}
	for _, f := range removed {
		delete(rows, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	for _, r := range rendered {
		rows[r.row.ID] = r.row
	}
	return rows
}

// updateComparisons writes the compare pages that are new and removes
// those no longer compared. A page names only its pair (its script reads
// the runs' compare.js), so a changed run rewrites none.
func (l *Live) updateComparisons(pairs []Pair) error {
	// Sets, not lists searched: a site of one model on one GPU has a pair
	// for each run, and searching one list for each of the other's was
	// most of an update at 10,000 runs.
	had, now := pairSet(l.b.pairs), pairSet(pairs)
	var todo []Pair
	for _, p := range pairs {
		if !had[p] {
			todo = append(todo, p)
			l.wrote(path.Join("compare", compareID(p), "index.html"))
		}
	}
	for _, p := range l.b.pairs {
		if !now[p] {
			dir := path.Join("compare", compareID(p))
			if err := l.marker.removedFolder(l.out, dir); err != nil {
				return err
			}
			if err := os.RemoveAll(filepath.Join(l.out, filepath.FromSlash(dir))); err != nil {
				return err
			}
		}
	}
	return l.b.writeComparisons(l.out, todo)
}

// pairSet is pairs as a set.
func pairSet(pairs []Pair) map[Pair]bool {
	set := make(map[Pair]bool, len(pairs))
	for _, p := range pairs {
		set[p] = true
	}
	return set
}

// CSVGone reports whether runs.csv was removed from the folder after a
// change: the folder is then a site to serve, not yet one to publish,
// until a build writes it again.
func (l *Live) CSVGone() bool {
	return l.csvGone
}
