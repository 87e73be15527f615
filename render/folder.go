package render

import (
	"io"
	"iter"

	"github.com/matrixgen/matrixgen/runfile"
)

// Folder is the site as a Renderer writes it (package site's folder on
// disk), by slash-separated paths made from validated ids only: every byte
// a Renderer makes goes through it.
type Folder interface {
	// WriteFile puts the file rel in the site, whole: a reader of a site
	// updated in place gets the old file or the new one.
	WriteFile(rel string, data []byte) error
	// Create starts the file rel, too large to hold, as a stream.
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
	Close() error // puts the file in place
	Abort()       // drops the file
}

// RawSource is a Source of run files, whose sizes bound the bytes a build's
// workers hold, read without being decoded, so a run whose pages are
// reused (Cache) is never decoded.
type RawSource interface {
	Source
	Size(i int) int64                  // the run file's size, for the build's budget
	Read(i int) (runfile.Entry, error) // reads the run file, not decoded
}

// Cache is the reuse cache of the site a build replaces (package site's):
// the pages of unchanged runs are linked from the old site.
type Cache interface {
	// Reuse gives what run e's pages are made of besides matrixgen and the
	// site (its input), and, when the old site's folder of the run was
	// linked into the new one, its summary.
	Reuse(e runfile.Entry) (input string, row CachedRow, ok bool)
	// Save records, for the next build, the n runs of the site, by id.
	Save(n int, runs iter.Seq[CachedRun]) error
}
