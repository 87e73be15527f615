package site

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/matrixgen/matrixgen/internal/regular"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/render"
)

// folder is a site's folder as a render.Renderer writes it: a fresh
// build's, written straight into (a file unchanged linked from the old
// site), or a Live's site itself, each file written beside the old and
// renamed over it, so a reader never gets half of either.
type folder struct {
	dir string
	// previous is the site a build replaces, "" for none or in place.
	previous string
	// log, in place, is told every file written or removed.
	log *markerLog
	// cache, for a fresh build, bounds its files' pages in the page cache.
	cache *pageCache
}

var _ render.Folder = (*folder)(nil)

// WriteFile writes one file of the site.
func (f *folder) WriteFile(rel string, data []byte) error {
	if f.log == nil {
		if f.linkUnchanged(rel, data) {
			return nil
		}
		if err := writeFile(f.dir, rel, data, f.cache.writebackNow()); err != nil {
			return err
		}
		if path.Base(rel) != render.MeasurementsFile {
			// Kept cached until runs.csv reads it (Measurements): from
			// disk, 100,000 runs' cost 20 s more.
			f.cache.done(filepath.Join(f.dir, filepath.FromSlash(rel)), int64(len(data)))
		}
		return nil
	}
	if err := replaceFile(f.dir, rel, data); err != nil {
		return err
	}
	f.log.wrote(rel)
	return nil
}

// replaceFile writes the file rel of dir beside it, then renames it over.
func replaceFile(dir, rel string, data []byte) error {
	tmp := rel + ".matrixgen-tmp"
	if err := writeFile(dir, tmp, data, nil); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, filepath.FromSlash(tmp)), filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
		os.Remove(filepath.Join(dir, filepath.FromSlash(tmp)))
		return err
	}
	return nil
}

// writeFile writes a slash-separated path under dir, sent to disk with
// writeback unless nil. The path check is a last guard.
func writeFile(dir, rel string, data []byte, writeback func(fd int, from int64)) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("refusing to write %s outside the site", term.Name(rel))
	}
	name := filepath.Join(dir, filepath.FromSlash(rel))
	err := createFile(name, data, writeback)
	if errors.Is(err, fs.ErrNotExist) {
		// The first file of its folder: cheaper than asking every time.
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		err = createFile(name, data, writeback)
	}
	return err
}

// linkUnchanged links the previous site's file into the new one when it
// holds exactly data, and says whether it did. Most files are unchanged,
// and a link makes no new file (on ext4, creating as many files as were
// just deleted cost a third of a build in the allocator).
func (f *folder) linkUnchanged(rel string, data []byte) bool {
	if f.previous == "" {
		return false
	}
	old := filepath.Join(f.previous, filepath.FromSlash(rel))
	r, info, err := regular.OpenEntry(old)
	if err != nil {
		return false
	}
	if info.Size() != int64(len(data)) {
		r.Close()
		return false
	}
	have, err := regular.Read(r, info, int64(len(data)), term.Name(old), "a page")
	f.cache.done(old, info.Size())
	if err != nil || !bytes.Equal(have, data) {
		return false
	}
	name := filepath.Join(f.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return false
	}
	return linkRegular(old, name)
}

// Remove removes the file rel of the site, if it is there.
func (f *folder) Remove(rel string) error {
	if f.log != nil {
		f.log.removed(rel)
	}
	if err := os.Remove(filepath.Join(f.dir, filepath.FromSlash(rel))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveAll removes the folder rel of the site.
func (f *folder) RemoveAll(rel string) error {
	if f.log != nil {
		if err := f.log.removedFolder(f.dir, rel); err != nil {
			return err
		}
	}
	return os.RemoveAll(filepath.Join(f.dir, filepath.FromSlash(rel)))
}

// maxMeasurementsBytes bounds a run's measurements.csv read back, a last
// guard: a full run's is tens of kilobytes.
const maxMeasurementsBytes = 64 << 20

// Measurements reads a run's measurements.csv back from the site into buf.
func (f *folder) Measurements(id string, buf []byte) ([]byte, string, error) {
	name := filepath.Join(f.dir, "runs", id, render.MeasurementsFile)
	r, info, err := regular.OpenEntry(name)
	if err != nil {
		return buf, name, err
	}
	defer r.Close()
	if info.Size() > maxMeasurementsBytes {
		return buf, name, fmt.Errorf("%s is larger than the %d bytes a run's measurements may be", term.Name(name), maxMeasurementsBytes)
	}
	buf = slices.Grow(buf[:0], int(info.Size()))[:info.Size()]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, name, fmt.Errorf("%s: %w", term.Name(name), err)
	}
	f.cache.done(name, info.Size())
	return buf, name, nil
}

// stream is a file of the site too large to hold, written piece by piece
// (beside its old one in place, renamed over it when finished).
type stream struct {
	f           *os.File
	name, final string
	// cache, for a fresh build, bounds the stream's cached pages: flushed
	// the bytes the kernel was asked to write to disk.
	cache            *pageCache
	written, flushed int64
}

// Create starts the file rel of the site.
func (f *folder) Create(rel string) (render.Stream, error) {
	final := filepath.Join(f.dir, filepath.FromSlash(rel))
	name := final
	if f.log != nil {
		name += ".matrixgen-tmp"
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	file, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &stream{f: file, name: name, final: final, cache: f.cache}, nil
}

func (s *stream) Write(p []byte) (int, error) {
	n, err := s.f.Write(p)
	s.written += int64(n)
	if s.cache != nil && s.written-s.flushed >= s.cache.chunk {
		s.writeBack()
	}
	return n, err
}

// writeBack sends the stream's new bytes to disk, dropping a limit behind.
func (s *stream) writeBack() {
	writeback := s.cache.writebackNow()
	if writeback == nil {
		return
	}
	fd := int(s.f.Fd())
	writeback(fd, s.flushed)
	if s.flushed > s.cache.limit {
		s.cache.dropFront(fd, s.flushed-s.cache.limit)
	}
	s.flushed = s.written
}

// Close puts the file in place.
func (s *stream) Close() error {
	s.writeBack()
	err := s.f.Close()
	if err == nil && s.name != s.final {
		err = os.Rename(s.name, s.final)
	}
	if err == nil && s.cache != nil {
		// What the stream has not dropped yet waits with the other files.
		s.cache.done(s.final, min(s.written, s.cache.limit+s.cache.chunk))
	}
	if err != nil {
		os.Remove(s.name)
	}
	return err
}

// Abort drops the file.
func (s *stream) Abort() {
	s.f.Close()
	os.Remove(s.name)
}
