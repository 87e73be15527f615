package render

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// Update brings a site built by Build up to date in place, for `matrixgen
// serve`, after the runs of changed changed (or were added) and the runs
// removed (by id) were taken out, rewriting only what the change touches.
// Every changed run is laid out before anything is written: if any cannot
// be, the error lists them all and nothing is written. runs.csv is not
// written again: SiteCSV makes it on request.
func (b *Renderer) Update(out Folder, changed Source, removed []string) (Stats, error) {
	if b.byID == nil {
		b.byID = make(map[string]indexRow, len(b.rows))
		for _, r := range b.rows {
			b.byID[r.ID] = r
		}
	}
	laidOut, files := make([]indexRow, changed.Len()), make([][]siteFile, changed.Len())
	var bad []error
	for i := range laidOut {
		e, err := changed.Entry(i)
		if err == nil {
			laidOut[i], files[i], err = b.layOut(e)
		}
		if err != nil {
			bad = append(bad, err)
		}
	}
	if len(bad) > 0 {
		return Stats{}, &BadRunsError{Errs: bad}
	}
	rows := maps.Clone(b.byID)
	for _, id := range removed {
		delete(rows, id)
	}
	othersRuns := len(removed) > 0
	var hidden []string
	for _, r := range laidOut {
		_, known := b.byID[r.ID]
		othersRuns = othersRuns || !known
		rows[r.ID] = r
		if r.Hid {
			hidden = append(hidden, r.ID)
		}
	}
	slices.Sort(hidden)
	list := slices.Collect(maps.Values(rows))
	pairs, err := comparePairs(b.site.Compare, list)
	if err != nil {
		return Stats{}, err
	}
	for _, id := range removed {
		if _, still := rows[id]; !still {
			if err := out.RemoveAll("runs/" + id); err != nil {
				return Stats{}, err
			}
		}
	}
	for _, f := range slices.Concat(files...) {
		if err := out.WriteFile(f.rel, f.data); err != nil {
			return Stats{}, err
		}
	}
	if err := b.updateComparisons(out, pairs); err != nil {
		return Stats{}, err
	}
	// The index's files whose print changed, and the sitemap when the runs
	// are others.
	sortIndexOrder(list)
	indexPages, err := writeChanged(out, b.indexFiles(list, pairs), &b.indexPrints)
	if err == nil && othersRuns {
		err = b.writeSitemap(out, list)
	}
	if err != nil {
		return Stats{}, err
	}
	b.byID, b.pairs = rows, pairs
	b.mu.Lock()
	b.rows = list
	b.mu.Unlock()
	return Stats{Pages: len(laidOut) + indexPages, Runs: len(rows), Hidden: hidden}, nil
}

// writeChanged writes the files whose print is not the one *prints holds
// for them, removes those *prints holds that files lack, and counts the
// pages written. *prints is kept up to date file by file, so that an update
// that fails partway knows what to write or remove again.
func writeChanged(out Folder, files []indexFile, prints *map[string]uint64) (pages int, err error) {
	held := map[string]uint64{}
	maps.Copy(held, *prints)
	defer func() { *prints = held }()
	named := make(map[string]bool, len(files))
	for _, f := range files {
		named[f.rel] = true
		if old, ok := held[f.rel]; ok && old == f.print {
			continue
		}
		if err := f.write(out); err != nil {
			held[f.rel] = unwritten
			return pages, err
		}
		held[f.rel] = f.print
		if strings.HasSuffix(f.rel, ".html") {
			pages++
		}
	}
	for rel := range held {
		if !named[rel] {
			if err := out.Remove(rel); err != nil {
				return pages, err
			}
			delete(held, rel)
		}
	}
	return pages, nil
}

// unwritten is the print of a file whose write failed, so the next update
// writes or removes it (a file's print is 0 once in 2^64).
const unwritten = 0

// updateComparisons writes the compare pages that are new and removes
// those no longer compared (a page names only its pair, so a changed run
// rewrites none).
func (b *Renderer) updateComparisons(out Folder, pairs []Pair) error {
	had, now := pairSet(b.pairs), pairSet(pairs)
	todo := slices.DeleteFunc(slices.Clone(pairs), func(p Pair) bool { return had[p] })
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
