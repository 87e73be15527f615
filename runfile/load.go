package runfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/regular"
	"github.com/matrixgen/matrixgen/internal/term"
)

// MaxBytes bounds one run file, twenty times the largest sweep yet:
// decoding costs up to twenty times a file's bytes, so the bound keeps a
// build's memory (with render's budget of run bytes in flight).
const MaxBytes = 8 << 20

// Entry is a run file as found on disk: its id (the file name without
// .json), the run, its bytes as written, and its notes (<id>.md), if any.
type Entry struct {
	ID    string
	File  string
	Run   *matrixgen.Run
	Raw   []byte
	Notes []byte
}

// JSON is the run file to publish: the bytes as written when the entry came
// from disk (they decoded strictly), otherwise the canonical encoding.
func (e Entry) JSON() ([]byte, error) {
	if e.Raw != nil {
		return e.Raw, nil
	}
	return Encode(e.Run)
}

// Files lists the run files in dir, by name, but those starting with a dot:
// editors' and systems' files (macOS's ._a.json).
func Files(dir string) ([]string, error) {
	if _, err := os.Stat(dir); err != nil {
		// The path error would print the name raw.
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err
		}
		return nil, fmt.Errorf("runs folder %s: %w", term.Name(dir), err)
	}
	// Listed, not globbed: a folder's name may hold a pattern's letters
	// (lab[1]/runs), and a glob found no runs there.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries { // in name order
		if n := e.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			names = append(names, filepath.Join(dir, n))
		}
	}
	return names, nil
}

// Misnamed lists the files in dir that a person meant as run files but
// Files leaves out (a.JSON), so that a build can say so.
func Misnamed(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, ".") && strings.HasSuffix(strings.ToLower(n), ".json") && !strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	return names
}

// Load reads one run file and the notes beside it.
func Load(name string) (Entry, error) {
	e, err := Read(name)
	if err != nil {
		return Entry{}, err
	}
	err = e.Decode() // before e is read: a return's order of reads and calls is unspecified
	return e, err
}

// Read reads one run file and the notes beside it without decoding the
// run (Entry.Decode does), for a build that can reuse the run's page.
func Read(name string) (Entry, error) {
	id := strings.TrimSuffix(filepath.Base(name), ".json")
	if !matrixgen.ValidID(id) {
		return Entry{}, fmt.Errorf("%s: the file name must be a run id: %s", term.Name(name), matrixgen.IDRule)
	}
	data, err := readBounded(name, MaxBytes, "a run file")
	if err != nil {
		return Entry{}, err
	}
	notesName := strings.TrimSuffix(name, ".json") + ".md"
	notes, err := readBounded(notesName, MaxNotesBytes, "a note")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Entry{}, err
	}
	return Entry{ID: id, File: name, Raw: data, Notes: notes}, nil
}

// Decode decodes the entry's run from its bytes, strictly.
func (e *Entry) Decode() (err error) {
	e.Run, err = Decode(term.Name(e.File), e.Raw)
	return err
}

// MaxNotesBytes bounds a run's notes: a page of Markdown is a few kilobytes.
const MaxNotesBytes = 1 << 20

// readBounded reads a regular file of at most limit bytes inside its own
// folder, so a build cannot publish the build machine's files: it opens
// name once, through its folder as an os.Root (which refuses a link out),
// and reads it only if the open file is regular and within limit.
func readBounded(name string, limit int64, what string) ([]byte, error) {
	root, err := os.OpenRoot(filepath.Dir(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingFile{term.Name(name)}
	}
	if err != nil {
		return nil, namedErr(err)
	}
	defer root.Close()
	f, info, err := regular.Open(root, filepath.Base(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingFile{term.Name(name)}
	}
	if err != nil {
		return nil, namedErr(linkOut(name, err))
	}
	data, err := regular.Read(f, info, limit, term.Name(name), what)
	return data, namedErr(err)
}

// missingFile is a file that is not there, named whole: the system's
// error names only what the root was asked for ("openat x.json").
type missingFile struct{ name string }

func (e missingFile) Error() string        { return e.name + ": no such file" }
func (e missingFile) Is(target error) bool { return target == fs.ErrNotExist }

// namedErr is err with a file system error's path printed by term.Name.
func namedErr(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return fmt.Errorf("%s %s: %w", pe.Op, term.Name(pe.Path), pe.Err)
	}
	return err
}

// linkOut explains err, from opening name inside its folder, when name is
// a link out of it; the link is read only for the message.
func linkOut(name string, err error) error {
	info, lerr := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || lerr != nil || info.Mode()&fs.ModeSymlink == 0 {
		return err
	}
	target, _ := os.Readlink(name)
	return fmt.Errorf("%s: a link to %s, outside the runs folder: refused, so a build publishes only what the folder holds", term.Name(name), term.Name(target))
}

// tempFile is what Save needs of a file; tests substitute failing ones.
type tempFile interface {
	io.Writer
	Sync() error
	Close() error
	Name() string
}

var createTemp = func(dir, pattern string) (tempFile, error) { return os.CreateTemp(dir, pattern) }

// Save writes a run file atomically: a temporary file beside it, synced,
// renamed over it; a failure leaves the previous file as it was.
func Save(file string, run *matrixgen.Run) error {
	data, err := Encode(run)
	if err != nil {
		return err
	}
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := createTemp(dir, "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save %s: %w (the previous file is unchanged)", file, err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save %s: %w (the previous file is unchanged)", file, err)
	}
	return nil
}
