package render

import (
	"io"
	"iter"

	"github.com/matrixgen/matrixgen/runfile"
)

// Folder is the site as a Renderer writes it: package site's folder on
// disk, a fresh one a build swaps in or the one serve updates in place.
// Names are slash-separated paths under the site's root, made by this
// package from validated ids only. A Renderer does no I/O of its own:
// every byte it makes goes through a Folder.
type Folder interface {
	// WriteFile puts the file rel in the site, whole: a reader of a site
	// updated in place gets the old file or the new one.
	WriteFile(rel string, data []byte) error
	// Create starts the file rel, too large to hold, written as a
	// stream; Close puts it in place, Abort drops it.
	Create(rel string) (Stream, error)
	// Measurements reads back a run's MeasurementsFile as the site holds
	// it, into buf, and gives the name a message calls it by.
	Measurements(id string, buf []byte) (data []byte, name string, err error)
	// Remove removes the file rel; one already gone is no error.
	Remove(rel string) error
	// RemoveAll removes the folder rel and all it holds.
	RemoveAll(rel string) error
}

// Stream is a file of the site written piece by piece (Folder.Create).
type Stream interface {
	io.Writer
	// Close puts the file in place.
	Close() error
	// Abort drops the file.
	Abort()
}

// RawSource is a Source of run files: each run's size is known before it
// is read, so a build bounds the bytes its workers hold, and a run can be
// read without being decoded (runfile.Entry.Decode decodes it), so a
// run whose pages are reused (Cache) is never decoded.
type RawSource interface {
	Source
	// Size is the run file's size as the build's budget counts it.
	Size(i int) int64
	// Read reads the run file, not decoded.
	Read(i int) (runfile.Entry, error)
}

// Cache is the reuse cache of the site a build replaces (package site's):
// the pages of runs whose inputs did not change are linked from the old
// site, not made again.
type Cache interface {
	// Reuse gives what run e's pages are made of besides matrixgen and the
	// site (its input), e read and not decoded, and, when the old site's
	// folder of the run was linked unchanged into the new one, its summary.
	Reuse(e runfile.Entry) (input string, row CachedRow, ok bool)
	// Save records, for the next build, the runs of the site as built:
	// n of them, in id order.
	Save(n int, runs iter.Seq[CachedRun]) error
}
