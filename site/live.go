package site

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen/render"
)

// Live keeps a site built from run files up to date in place, for
// `matrixgen serve`: a change rewrites only what render.Renderer.Update
// writes (the changed runs and the pages listing them), each file renamed
// over the old one. A change costs its run, not the site: runs.csv (1.7 GB
// at 100,000 runs) is removed at the first change and made on request
// (SiteCSV), and the reuse cache is not written (the next build builds the
// changed runs again). A full build stays the way to publish.
type Live struct {
	r     *render.Renderer
	out   string
	files map[string]fileState // run file → what it was at the last update
	runs  int                  // how many the site holds
	// csvGone says runs.csv and its parts were removed from the folder.
	csvGone bool
	// dest is the site's folder, written in place; its log the files a
	// build wrote and the changes not yet appended to the marker.
	dest *folder
}

// fileState tells a run file (and its notes) changed, as make does.
type fileState struct {
	size, notesSize int64
	mod, notesMod   time.Time
}

// statesOf is the state of each of files.
func statesOf(files []string) (map[string]fileState, error) {
	states := make(map[string]fileState, len(files))
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		s := fileState{size: info.Size(), mod: info.ModTime(), notesSize: -1}
		if n, err := os.Stat(strings.TrimSuffix(f, ".json") + ".md"); err == nil {
			s.notesSize, s.notesMod = n.Size(), n.ModTime()
		}
		states[f] = s
	}
	return states, nil
}

// NewLive builds the site from files into out, kept for updates.
func NewLive(ctx context.Context, files []string, site render.Site, out string) (*Live, render.Stats, error) {
	states, err := statesOf(files)
	if err != nil {
		return nil, render.Stats{}, err
	}
	r, stats, err := build(ctx, Files(files), site, out)
	if err != nil {
		return nil, render.Stats{}, err
	}
	l := &Live{r: r, out: filepath.Clean(out), files: states, runs: stats.Runs}
	built, size, err := readMarker(l.out)
	if err != nil {
		return nil, render.Stats{}, err
	}
	l.dest = &folder{dir: l.out, log: &markerLog{files: built, size: size, whole: size}}
	return l, stats, nil
}

// Update brings the site up to date with files, the run files there are
// now. Runs whose file or notes changed are read again; if any cannot be
// read, nothing is written and the error lists them all, as a build's does.
func (l *Live) Update(files []string) (_ render.Stats, err error) {
	if errs := IDClashes(Files(files)); len(errs) > 0 {
		return render.Stats{}, &render.BadRunsError{Errs: errs}
	}
	states, err := statesOf(files)
	if err != nil {
		return render.Stats{}, err
	}
	var changed []string
	for _, f := range files {
		if old, ok := l.files[f]; !ok || old != states[f] {
			changed = append(changed, f)
		}
	}
	var removed []string
	for f := range l.files {
		if _, ok := states[f]; !ok {
			removed = append(removed, strings.TrimSuffix(filepath.Base(f), ".json"))
		}
	}
	if len(changed) == 0 && len(removed) == 0 {
		return render.Stats{Runs: l.runs}, nil
	}
	// Should a write fail, the next update lays out the changed runs
	// again, and removes the folders of those gone.
	defer func() {
		if err != nil {
			for _, f := range changed {
				l.files[f] = fileState{size: -1}
			}
		}
	}()
	stats, err := l.r.Update(l.dest, Files(changed), removed)
	if err != nil {
		return render.Stats{}, err
	}
	if err := l.removeSiteCSV(); err != nil {
		return render.Stats{}, err
	}
	if err := l.dest.log.flush(l.out); err != nil {
		return render.Stats{}, err
	}
	l.files, l.runs = states, stats.Runs
	return stats, nil
}

// removeSiteCSV removes runs.csv and its parts, once: SiteCSV makes them.
func (l *Live) removeSiteCSV() error {
	if l.csvGone {
		return nil
	}
	names := []string{filepath.Join(l.out, "runs.csv")}
	entries, _ := os.ReadDir(l.out) // not globbed: the folder's name may hold [ or *
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "runs-") && strings.HasSuffix(n, ".csv") {
			names = append(names, filepath.Join(l.out, n))
		}
	}
	for _, name := range names {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, name := range names {
		l.dest.log.removed(filepath.Base(name))
	}
	l.csvGone = true
	return nil
}

// SiteCSV writes to w the site's "runs.csv" or a part by month
// ("runs-2026-12.csv") named name, as a build would, from the runs'
// measurements.csv; ok is false for no such file. A run changed meanwhile
// is an error: what was written is then to be thrown away.
func (l *Live) SiteCSV(w io.Writer, name string) (ok bool, err error) {
	return l.r.SiteCSV(w, l.dest, name)
}

// CSVGone reports whether runs.csv was removed after a change: the folder
// is then a site to serve, not to publish.
func (l *Live) CSVGone() bool { return l.csvGone }
