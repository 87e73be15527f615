// Package site builds a site of result pages on disk: into a fresh folder
// beside the old site, swapped in whole, carrying over the files no build
// wrote, reusing the pages of unchanged runs, clearing what killed builds
// left; and, for `matrixgen serve`, keeps a built site up to date in
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

// readFiles is Files whose pages in the page cache, once read, are let go
// of as the site's files written are.
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

// Size is a run file's size as the build's budget counts it: the bound
// when it cannot be told (reading it will say why), and never more than
// the bound (a larger file is refused before it is read).
func (fs Files) Size(i int) int64 {
	info, err := os.Stat(fs[i])
	if err != nil {
		return runfile.MaxBytes
	}
	return min(info.Size(), runfile.MaxBytes)
}

// BuildContext writes the site for the runs of src into out, built into a
// fresh folder beside out and swapped in only when every page is written,
// so a failed build (every bad run listed) leaves the previous site as it
// was. Files in out that no build wrote (a CNAME, .nojekyll, a .git folder)
// are carried over, never deleted. It stops, removing what it began, when
// ctx ends.
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
	if err := replaceable(out); err != nil {
		return nil, render.Stats{}, err
	}
	if errs := idClashes(src); len(errs) > 0 {
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
	defer work.release()
	tmp := work.dir
	dest := &folder{dir: tmp, cache: newPageCache()}
	if IsSite(out) {
		dest.previous = out
	}
	stats, err := writeSite(ctx, r, src, dest, newReuse(site, dest))
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
		os.RemoveAll(tmp)
		return nil, render.Stats{}, err
	}
	stats.Kept, stats.Left, stats.Unproven = kept, left, unproven
	return r, stats, nil
}

// writeSite writes the site into the fresh folder dest: its marker first,
// so the folder is a site's from its first file, then what r makes.
func writeSite(ctx context.Context, r *render.Renderer, src render.Source, dest *folder, cache render.Cache) (render.Stats, error) {
	if err := writeFile(dest.dir, siteMarker, []byte(markerHeader), nil); err != nil {
		return render.Stats{}, err
	}
	if files, ok := src.(Files); ok && dest.cache != nil {
		// The run files, once read, wait in the page cache with the
		// site's files: five gigabytes for a hundred thousand runs.
		src = readFiles{files, dest.cache}
	}
	return r.Build(ctx, src, dest, cache)
}

// keepUserFiles moves the files of the old site out that no build wrote
// into the new site tmp. It returns what it kept, a file or a whole
// folder a line, for the message; the files it moved, to move back should
// the build fail after all; and what it left out: links and anything else
// that is not a regular file (a link to /etc would carry /etc into the
// new site, and serve and publish it). For an older site whose marker
// lists nothing, whatever the new build does not write is kept. A name
// the new build also writes is an error naming it: neither file is lost.
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
	// Each file is moved through the folder both sites are in, opened as
	// an os.Root: a folder on the way swapped for a link out of it since
	// the listing cannot move a file from elsewhere into the site. What
	// was moved is looked at where it now is, in the build's own folder:
	// one swapped for a link or a pipe goes back, left out.
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

// returnUserFiles moves kept files back from tmp into out, when the build
// fails after keepUserFiles moved them, through the folder both are in
// (an os.Root), as they came.
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

// beforeKeeping runs between keepUserFiles' listing of the old site and
// its moves: tests swap files there.
var beforeKeeping = func() {}

// IsSite reports whether dir holds a site matrixgen built.
func IsSite(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, siteMarker))
	return err == nil
}

// replaceable refuses to replace a folder matrixgen did not build: the
// output folder is replaced whole, and a mistyped -o must not cost anyone
// their files.
func replaceable(out string) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	if !IsSite(out) {
		return fmt.Errorf("refusing to replace %s: it holds files matrixgen did not build (no %s); remove it or choose another output folder", term.Name(out), siteMarker)
	}
	return nil
}

// swapDir replaces dst with src: the old folder is moved aside, the new one
// renamed into place, and only then is the old one removed. The site is in
// place once the rename succeeds: an old folder that cannot be removed is
// left for the next build to clear, not an error.
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
