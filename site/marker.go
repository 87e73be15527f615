package site

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/matrixgen/matrixgen/internal/regular"
	"github.com/matrixgen/matrixgen/internal/term"
)

// siteMarker, at every site's root, tells a later build the folder is one
// it made (not, say, a home directory) and lists every file a build wrote,
// a name a line, to tell them from files someone added. serve appends
// "+ name" or "- name" for each file it writes or removes instead, so a
// change costs its own lines, not the list (1.5 MB at 10,000 runs). The
// lines are read in order, an unfinished last one ignored; no name a build
// writes begins with "+ " or "- ".
const siteMarker = ".matrixgen-site"

const markerHeader = "This folder is a site built by matrixgen; the next build replaces the files listed below and keeps any other.\n"

// maxMarkerBytes bounds a site's marker: tens of bytes a file.
const maxMarkerBytes = 64 << 20

// writeManifest writes the marker with the list of the site's files.
func writeManifest(dir string) error {
	var names []string
	err := eachFile(dir, dir, func(rel string) {
		if rel != siteMarker {
			names = append(names, rel)
		}
	})
	if err != nil {
		return err
	}
	return writeFile(dir, siteMarker, markerText(names), nil)
}

// eachFile calls fn with each file's slash path under base, in root.
func eachFile(base, root string, fn func(rel string)) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(base, p)
		if err == nil {
			fn(filepath.ToSlash(rel))
		}
		return err
	})
}

// markerText is a marker listing names, in the order given.
func markerText(names []string) []byte {
	b := []byte(markerHeader)
	for _, n := range names {
		b = append(append(b, n...), '\n')
	}
	return b
}

// readMarker reads the marker of the site at out, never through a link or
// from a pipe: the files it lists (markerFiles) and its size.
func readMarker(out string) (files map[string]bool, size int, err error) {
	name := filepath.Join(out, siteMarker)
	f, info, err := regular.OpenEntry(name)
	if err != nil {
		return nil, 0, err
	}
	data, err := regular.Read(f, info, maxMarkerBytes, term.Name(name), "a site's marker")
	if err != nil {
		return nil, 0, err
	}
	files, ok := markerFiles(data)
	if !ok {
		return nil, 0, fmt.Errorf("%s is not a site's marker", term.Name(name))
	}
	return files, len(data), nil
}

// markerFiles is the set of files a marker lists; ok is false for none.
func markerFiles(data []byte) (files map[string]bool, ok bool) {
	text, ok := strings.CutPrefix(string(data), markerHeader)
	if !ok {
		return nil, false
	}
	// An append cut short leaves a last line without its newline.
	text = text[:strings.LastIndexByte(text, '\n')+1]
	files = map[string]bool{}
	isChange := func(s string) bool { return strings.HasPrefix(s, "+ ") || strings.HasPrefix(s, "- ") }
	for line := range strings.Lines(text) {
		// A name, or a change ('+' or '-') and its name.
		name := strings.TrimSuffix(line, "\n")
		if isChange(name) {
			name = name[2:]
		}
		switch {
		case name == "" || isChange(name): // a name no build writes
		case strings.HasPrefix(line, "- "):
			delete(files, name)
		default:
			files[name] = true
		}
	}
	return files, true
}

// builtFiles reads the list of files the build of site out wrote; ok is
// false for a site whose marker lists none (an older matrixgen's).
func builtFiles(out string) (files map[string]bool, ok bool) {
	listed, _, err := readMarker(out)
	if err != nil {
		return nil, false
	}
	files = map[string]bool{siteMarker: true}
	for line := range listed {
		files[line] = true
		// Its folders too, as "runs/a/", to know the build's at a glance.
		for dir := path.Dir(line); dir != "."; dir = path.Dir(dir) {
			files[dir+"/"] = true
		}
	}
	return files, true
}

// markerLog is serve's side of the marker: its files and changes pending.
type markerLog struct {
	files   map[string]bool
	pending []string
	// size is the marker's size on disk, whole its size when last written
	// whole: past twice that, it is written whole again (flush).
	size, whole int
}

// wrote notes that the site holds the file rel.
func (m *markerLog) wrote(rel string) {
	if !m.files[rel] {
		m.files[rel] = true
		m.pending = append(m.pending, "+ "+rel)
	}
}

// removed notes that the site no longer holds the file rel.
func (m *markerLog) removed(rel string) {
	if m.files[rel] {
		delete(m.files, rel)
		m.pending = append(m.pending, "- "+rel)
	}
}

// removedFolder notes that the files now in the site's folder dir (under
// out) are to go, read from the folder rather than searched for.
func (m *markerLog) removedFolder(out, dir string) error {
	err := eachFile(out, filepath.Join(out, filepath.FromSlash(dir)), m.removed)
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// flush appends the pending changes to the marker of the site at out, or
// writes it whole (renamed over it) when the appends would outgrow twice
// its list or its bound, or cannot be trusted: a marker gone, not a
// regular file, or ending in an unfinished line, which an append would
// complete into a name the next build would replace as its own.
func (m *markerLog) flush(out string) error {
	if len(m.pending) == 0 {
		return nil
	}
	lines := strings.Join(m.pending, "\n") + "\n"
	if m.size+len(lines) <= min(2*m.whole, maxMarkerBytes) {
		if err := appendMarker(filepath.Join(out, siteMarker), lines); err == nil {
			m.size, m.pending = m.size+len(lines), nil
			return nil
		}
	}
	data := markerText(slices.Sorted(maps.Keys(m.files)))
	if err := replaceFile(out, siteMarker, data); err != nil {
		return fmt.Errorf("the site's marker: %w", err)
	}
	m.size, m.whole, m.pending = len(data), len(data), nil
	return nil
}

// appendMarker appends lines to the marker name, the regular file itself,
// in one write, if its last line is finished.
func appendMarker(name, lines string) error {
	f, info, err := regular.AppendEntry(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if size := info.Size(); size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			return errors.New("the marker ends in an unfinished line")
		}
	}
	if _, err := f.WriteString(lines); err != nil {
		return err
	}
	return f.Close()
}
