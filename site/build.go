// Package site builds a site of result pages on disk, in a fresh folder
// swapped in whole, and for `matrixgen serve` keeps one up to date in
// place (Live). What the files hold is package render's.
package site

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/render"
	"github.com/matrixgen/matrixgen/runfile"
)

// Files is a Source of run files on disk, read when their page is built.
type Files []string

func (fs Files) Len() int                           { return len(fs) }
func (fs Files) Entry(i int) (runfile.Entry, error) { return runfile.Load(fs[i]) }

// Read reads the run file i, not decoded.
func (fs Files) Read(i int) (runfile.Entry, error) { return runfile.Read(fs[i]) }

// readFiles is Files whose pages, read, the page cache lets go of.
type readFiles struct {
	Files
	cache *pageCache
}

func (fs readFiles) Entry(i int) (runfile.Entry, error) { return fs.load(i, runfile.Load) }
func (fs readFiles) Read(i int) (runfile.Entry, error)  { return fs.load(i, runfile.Read) }

// load reads run file i with load, and notes it read.
func (fs readFiles) load(i int, load func(string) (runfile.Entry, error)) (runfile.Entry, error) {
	e, err := load(fs.Files[i])
	fs.cache.done(fs.Files[i], int64(len(e.Raw)))
	return e, err
}

// Size is a run file's size as the build's budget counts it: at most the
// bound (a larger file is refused), the bound when it cannot be told.
func (fs Files) Size(i int) int64 {
	info, err := os.Stat(fs[i])
	if err != nil {
		return runfile.MaxBytes
	}
	return min(info.Size(), runfile.MaxBytes)
}

// BuildContext writes the site for the runs of src into out: built beside
// it and swapped in only whole, so a failed or cancelled build leaves the
// old site as it was. Files in out no build wrote (a CNAME, a .git folder)
// are carried over, never deleted.
func BuildContext(ctx context.Context, src render.Source, site render.Site, out string) (render.Stats, error) {
	_, stats, err := build(ctx, src, site, out)
	return stats, err
}

// build is BuildContext, giving back the renderer with what it laid out.
func build(ctx context.Context, src render.Source, site render.Site, out string) (*render.Renderer, render.Stats, error) {
	r, err := render.NewRenderer(site)
	if err != nil {
		return nil, render.Stats{}, err
	}
	out = filepath.Clean(out)
	// Only a site replaced, an empty folder or none: a mistyped -o must not
	// cost anyone their files.
	switch entries, err := os.ReadDir(out); {
	case errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0:
	case err != nil:
		return nil, render.Stats{}, fmt.Errorf("output folder: %w", err)
	case !IsSite(out):
		return nil, render.Stats{}, fmt.Errorf("refusing to replace %s: it holds files matrixgen did not build (no %s); remove it or choose another output folder", term.Name(out), siteMarker)
	}
	if errs := IDClashes(src); len(errs) > 0 {
		return nil, render.Stats{}, &render.BadRunsError{Errs: errs}
	}
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, render.Stats{}, err
	}
	unproven := removeDebris(parent, filepath.Base(out))
	work, err := newWorkFolder(parent, filepath.Base(out))
	if err != nil {
		return nil, render.Stats{}, err
	}
	defer work.release() // and with it tmp, on an error
	tmp := work.dir
	dest := &folder{dir: tmp, cache: newPageCache()}
	if IsSite(out) {
		dest.previous = out
	}
	// The marker first; then the site.
	if err := writeFile(tmp, siteMarker, []byte(markerHeader), nil); err != nil {
		return nil, render.Stats{}, err
	}
	if files, ok := src.(Files); ok && dest.cache != nil {
		// Bounded too: 5 GB of run files at 100,000 runs.
		src = readFiles{files, dest.cache}
	}
	stats, err := r.Build(ctx, src, dest, newReuse(site, dest))
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = writeManifest(tmp)
	}
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	var kept, moved, left []string
	if err == nil {
		kept, moved, left, err = keepUserFiles(out, tmp)
	}
	if err == nil {
		// A build cancelled up to here swaps nothing in.
		err = ctx.Err()
	}
	if err == nil {
		err = swapDir(tmp, out)
	}
	if err != nil {
		returnUserFiles(tmp, out, moved)
		return nil, render.Stats{}, err
	}
	stats.Kept, stats.Left, stats.Unproven = kept, left, unproven
	return r, stats, nil
}

// keepUserFiles moves the files of the old site out that no build wrote
// (for a marker listing none, what the new build does not write) into the
// new site tmp. It returns what it kept, a file or whole folder a line;
// the files it moved, to return should the build fail; and what it left
// out: anything not a regular file (a link to /etc would publish /etc). A
// name the new build writes too is an error: neither file is lost.
func keepUserFiles(out, tmp string) (kept, moved, left []string, err error) {
	built, listed := builtFiles(out)
	var files, clash []string
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == out {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(out, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		ours := listed && (built[rel] || d.IsDir() && built[rel+"/"])
		if !listed {
			_, statErr := os.Lstat(filepath.Join(tmp, filepath.FromSlash(rel)))
			ours = statErr == nil
		}
		switch {
		case ours:
			return nil
		case !d.Type().IsRegular() && !d.IsDir():
			left = append(left, rel)
			return nil
		}
		if len(kept) == 0 || !strings.HasPrefix(rel, kept[len(kept)-1]+"/") { // not in a folder kept whole
			kept = append(kept, rel)
		}
		if info, err := os.Lstat(filepath.Join(tmp, filepath.FromSlash(rel))); err == nil && (!d.IsDir() || !info.IsDir()) {
			clash = append(clash, rel)
		}
		if !d.IsDir() {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("look for files of yours in %s: %w", term.Name(out), err)
	}
	if len(clash) > 0 {
		return nil, nil, nil, fmt.Errorf("%s holds files the site would now write too, not written by a build: %s; move them away (nothing was changed)", term.Name(out), render.Names(clash))
	}
	beforeKeeping()
	// Moved within an os.Root of both sites' folder, so a folder swapped
	// for a link since the listing brings in nothing from elsewhere; what
	// was moved is looked at there: a link or a pipe goes back, left out.
	both, err := os.OpenRoot(filepath.Dir(out))
	if err != nil {
		return nil, nil, nil, err
	}
	defer both.Close()
	for _, rel := range files {
		from, to := filepath.Join(filepath.Base(out), filepath.FromSlash(rel)), filepath.Join(filepath.Base(tmp), filepath.FromSlash(rel))
		err := both.MkdirAll(filepath.Dir(to), 0o755)
		if err == nil {
			err = both.Rename(from, to)
		}
		switch {
		case err == nil && isRegularIn(both, to):
			moved = append(moved, rel)
			continue
		case err == nil:
			both.Rename(to, from)
		case isRegularIn(both, from):
			returnUserFiles(tmp, out, moved)
			return nil, nil, nil, fmt.Errorf("keep %s: %w (nothing was changed)", term.Name(rel), err)
		}
		// Gone, or swapped, since the listing: left out.
		kept, left = slices.DeleteFunc(kept, func(k string) bool { return k == rel }), append(left, rel)
	}
	return kept, moved, left, nil
}

// isRegularIn reports whether name in root is a regular file, not a link.
func isRegularIn(root *os.Root, name string) bool {
	info, err := root.Lstat(name)
	return err == nil && info.Mode().IsRegular()
}

// returnUserFiles moves kept files back from tmp into out, as they came.
func returnUserFiles(tmp, out string, kept []string) {
	both, err := os.OpenRoot(filepath.Dir(out))
	if err != nil {
		return
	}
	defer both.Close()
	for _, rel := range kept {
		to := filepath.Join(filepath.Base(out), filepath.FromSlash(rel))
		both.MkdirAll(filepath.Dir(to), 0o755)
		both.Rename(filepath.Join(filepath.Base(tmp), filepath.FromSlash(rel)), to)
	}
}

// beforeKeeping runs between keepUserFiles' listing and moves, for tests.
var beforeKeeping = func() {}

// IsSite reports whether dir holds a site matrixgen built.
func IsSite(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, siteMarker))
	return err == nil
}

// swapDir replaces dst with src: the old folder moved aside, the new one
// renamed in, then the old one removed; one that cannot be is left for
// the next build, not an error.
func swapDir(src, dst string) error {
	old := ""
	if _, err := os.Lstat(dst); err == nil {
		old = src + ".old"
		if err := os.Rename(dst, old); err != nil {
			return fmt.Errorf("move the previous site aside: %w", err)
		}
	}
	if err := os.Rename(src, dst); err != nil {
		if old != "" {
			os.Rename(old, dst)
		}
		return fmt.Errorf("put the new site in place: %w", err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}
