package render

import (
	"context"
	"errors"
	"io/fs"
	"iter"
	"os"
	"path/filepath"

	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// dirFolder is a Folder on disk for this package's tests, which look at
// the files a Renderer makes; how package site puts them in place is its
// tests' to check.
type dirFolder string

func (d dirFolder) name(rel string) string { return filepath.Join(string(d), filepath.FromSlash(rel)) }

func (d dirFolder) WriteFile(rel string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(d.name(rel)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(d.name(rel), data, 0o644)
}

func (d dirFolder) Create(rel string) (Stream, error) {
	if err := os.MkdirAll(filepath.Dir(d.name(rel)), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(d.name(rel))
	if err != nil {
		return nil, err
	}
	return dirStream{f}, nil
}

type dirStream struct{ *os.File }

func (s dirStream) Abort() {
	s.File.Close()
	os.Remove(s.File.Name())
}

func (d dirFolder) Measurements(id string, buf []byte) ([]byte, string, error) {
	name := d.name("runs/" + id + "/measurements.csv")
	data, err := os.ReadFile(name)
	return data, name, err
}

func (d dirFolder) Remove(rel string) error {
	if err := os.Remove(d.name(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (d dirFolder) RemoveAll(rel string) error { return os.RemoveAll(d.name(rel)) }

// Files is a RawSource of run files, as package site's.
type Files []string

func (fs Files) Len() int                           { return len(fs) }
func (fs Files) Entry(i int) (runfile.Entry, error) { return runfile.Load(fs[i]) }
func (fs Files) Read(i int) (runfile.Entry, error)  { return runfile.Read(fs[i]) }
func (fs Files) Size(i int) int64 {
	info, err := os.Stat(fs[i])
	if err != nil {
		return runfile.MaxBytes
	}
	return info.Size()
}

// writeSite writes the site of src into the folder out, emptied first.
func writeSite(src Source, site Site, out string) (Stats, error) {
	return writeSiteContext(context.Background(), src, site, out)
}

// writeSiteContext is writeSite that stops when ctx ends.
func writeSiteContext(ctx context.Context, src Source, site Site, out string) (Stats, error) {
	r, err := NewRenderer(site)
	if err != nil {
		return Stats{}, err
	}
	if err := os.RemoveAll(out); err != nil {
		return Stats{}, err
	}
	return r.Build(ctx, src, dirFolder(out), nil)
}

// writeRunFile writes r as <id>.json in dir, its notes beside it; bump
// gives a file a later time.
var writeRunFile, bump = testrun.WriteFile, testrun.Touch

// reuseNone is a Cache that reuses nothing: run files are read as a build
// that may reuse pages reads them, then built.
type reuseNone struct{}

func (reuseNone) Reuse(e runfile.Entry) (string, CachedRow, bool) { return "", CachedRow{}, false }
func (reuseNone) Save(int, iter.Seq[CachedRun]) error             { return nil }
