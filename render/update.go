package render

import (
	"io"
	"maps"
	"path"
	"slices"
	"strings"
)

// Update brings a site built by Build up to date in place, for `matrixgen
// serve`, after the runs of changed changed (or were added) and the runs
// removed (by id) were taken out: it rewrites only what the change
// touches — the changed runs' folders, the compare pages they are in, the
// pages of the index and the chunks of summaries that list them
// (index.go), and the sitemap when the runs are others. Every changed run
// is read and laid out before anything is written: if any cannot be, the
// error lists them all, as a build's does, and nothing is written. out
// replaces each file whole, so a reader gets the old page or the new
// one. runs.csv is not written again (a change would cost the whole file):
// SiteCSV makes it on request.
func (b *Renderer) Update(out Folder, changed Source, removed []string) (Stats, error) {
	if b.byID == nil {
		b.byID = make(map[string]indexRow, len(b.rows))
		for _, r := range b.rows {
			b.byID[r.ID] = r
		}
	}
	rendered := make([]renderedRun, changed.Len())
	var bad []error
	for i := range rendered {
		r, err := b.renderChanged(changed, i)
		if err != nil {
			bad = append(bad, err)
		}
		rendered[i] = r
	}
	if len(bad) > 0 {
		return Stats{}, &BadRunsError{Errs: bad}
	}
	rows := maps2rows(b.byID, removed, rendered)
	list := slices.Collect(maps.Values(rows))
	pairs, err := comparePairs(b.site.Compare, list)
	if err != nil {
		return Stats{}, err
	}
	othersRuns := len(removed) > 0
	for _, r := range rendered {
		_, known := b.byID[r.row.ID]
		othersRuns = othersRuns || !known
	}
	for _, id := range removed {
		if _, still := rows[id]; !still {
			if err := out.RemoveAll("runs/" + id); err != nil {
				return Stats{}, err
			}
		}
	}
	for _, r := range rendered {
		for _, f := range r.files {
			if err := out.WriteFile(f.rel, f.data); err != nil {
				return Stats{}, err
			}
		}
	}
	if err := b.updateComparisons(out, pairs); err != nil {
		return Stats{}, err
	}
	sortIndexOrder(list)
	indexPages, err := b.updateListings(out, list, pairs, othersRuns)
	if err != nil {
		return Stats{}, err
	}
	b.byID, b.pairs = rows, pairs
	b.mu.Lock()
	b.rows = list
	b.mu.Unlock()
	var hidden []string
	for _, r := range rendered {
		if r.row.hid {
			hidden = append(hidden, r.row.ID)
		}
	}
	slices.Sort(hidden)
	return Stats{Pages: len(rendered) + indexPages, Runs: len(rows), Hidden: hidden}, nil
}

// updateListings writes what is made of every run's row, after a change:
// of the index only the pages and chunks whose print changed (a changed
// run: the page it is on and its chunk; a run added or removed moves the
// runs after it, so the pages and chunks from its place on); the sitemap
// only when the runs are others. It says how many pages of the index it
// wrote.
func (b *Renderer) updateListings(out Folder, rows []indexRow, pairs []Pair, othersRuns bool) (int, error) {
	files := b.indexFiles(rows, pairs)
	had := b.indexPrints
	// Until every file is written, a failed update leaves the next to
	// write the whole index.
	b.indexPrints = nil
	pages := 0
	for _, f := range files {
		if old, ok := had[f.rel]; ok && old == f.print {
			continue
		}
		data, err := f.make()
		if err == nil {
			err = out.WriteFile(f.rel, data)
		}
		if err != nil {
			return 0, err
		}
		if strings.HasSuffix(f.rel, ".html") {
			pages++
		}
	}
	now := indexPrintsOf(files)
	for rel := range had {
		if _, still := now[rel]; !still {
			if err := out.Remove(rel); err != nil {
				return 0, err
			}
		}
	}
	b.indexPrints = now
	if othersRuns {
		if err := b.writeSitemap(out, rows); err != nil {
			return 0, err
		}
	}
	return pages, nil
}

// SiteCSV writes to w the file name of the site's runs.csv, "runs.csv" or
// one of its parts by month ("runs-2026-12.csv"), as a build of the runs
// the site has now writes it, read from their measurements.csv in out.
// ok is false for a name the site has no such file by. A run changed
// while it is written makes an error, not a file of two versions: what
// was written of it is then to be thrown away.
func (b *Renderer) SiteCSV(w io.Writer, out Folder, name string) (ok bool, err error) {
	b.mu.RLock()
	rows := b.rows
	b.mu.RUnlock()
	return streamSiteCSV(w, out, name, rows)
}

// renderedRun is a changed run laid out: its files and its line on the
// index.
type renderedRun struct {
	row   indexRow
	files []siteFile
}

// renderChanged reads and lays out the run i of changed.
func (b *Renderer) renderChanged(changed Source, i int) (renderedRun, error) {
	e, err := changed.Entry(i)
	if err != nil {
		return renderedRun{}, err
	}
	e, hid, err := b.published(e)
	if err != nil {
		return renderedRun{}, err
	}
	e.Run = shownRun(e.Run)
	files, err := b.renderRun(e)
	if err != nil {
		return renderedRun{}, err
	}
	row := newIndexRow(e)
	row.sums, row.hid = sumsOf(files), hid
	return renderedRun{row: row, files: files}, nil
}

// maps2rows is the site's runs after an update: the kept ones, and the
// changed ones as now laid out.
func maps2rows(old map[string]indexRow, removed []string, rendered []renderedRun) map[string]indexRow {
	rows := maps.Clone(old)
	for _, id := range removed {
		delete(rows, id)
	}
	for _, r := range rendered {
		rows[r.row.ID] = r.row
	}
	return rows
}

// updateComparisons writes the compare pages that are new and removes
// those no longer compared. A page names only its pair (its script reads
// the runs' compare.js), so a changed run rewrites none.
func (b *Renderer) updateComparisons(out Folder, pairs []Pair) error {
	// Sets, not lists searched: a site of one model on one GPU has a pair
	// for each run, and searching one list for each of the other's was
	// most of an update at 10,000 runs.
	had, now := pairSet(b.pairs), pairSet(pairs)
	var todo []Pair
	for _, p := range pairs {
		if !had[p] {
			todo = append(todo, p)
		}
	}
	if err := b.writeComparisons(out, todo); err != nil {
		return err
	}
	for _, p := range b.pairs {
		if !now[p] {
			if err := out.RemoveAll(path.Join("compare", compareID(p))); err != nil {
				return err
			}
		}
	}
	return nil
}

// pairSet is pairs as a set.
func pairSet(pairs []Pair) map[Pair]bool {
	set := make(map[Pair]bool, len(pairs))
	for _, p := range pairs {
		set[p] = true
	}
	return set
}
