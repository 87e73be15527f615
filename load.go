package matrixgen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/matrixgen/matrixgen/internal/parallel"
)

// MaxRunFileBytes bounds one run file. A full 1M-context sweep with
// per-second samples is a few hundred kilobytes; 64 MiB is hostile.
const MaxRunFileBytes = 64 << 20

// Entry is a run file as found on disk: its id (the file name without
// .json), the run, its bytes as written, and the Markdown notes kept beside
// it (<id>.md), if any.
type Entry struct {
	ID    string
	File  string
	Run   *Run
	Raw   []byte
	Notes []byte
}

// JSON is the run file to publish: the bytes as written when the entry came
// from disk (they decoded strictly, so they are a valid run), otherwise the
// canonical encoding.
func (e Entry) JSON() ([]byte, error) {
	if e.Raw != nil {
		return e.Raw, nil
	}
	return EncodeRun(e.Run)
}

// RunFiles lists the run files in dir, by name.
func RunFiles(dir string) ([]string, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("runs folder: %w", err)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// LoadDir reads every run file in dir. It reads them all even when some are
// bad, so one build reports every bad file, not just the first; the error
// joins one error per bad file.
func LoadDir(dir string) ([]Entry, error) {
	names, err := RunFiles(dir)
	if err != nil {
		return nil, err
	}
	loaded := make([]Entry, len(names))
	errs := make([]error, len(names))
	parallel.Each(len(names), func(i int) { loaded[i], errs[i] = LoadFile(names[i]) })
	var entries []Entry
	for i, e := range loaded {
		if errs[i] == nil {
			entries = append(entries, e)
		}
	}
	return entries, errors.Join(errs...)
}

// LoadFile reads one run file and the notes beside it.
func LoadFile(name string) (Entry, error) {
	id := strings.TrimSuffix(filepath.Base(name), ".json")
	if !ValidID(id) {
		return Entry{}, fmt.Errorf("%s: the file name must be a run id of letters, digits, '.', '_' and '-' (at most 128, starting with a letter or digit)", name)
	}
	data, err := readBounded(name)
	if err != nil {
		return Entry{}, err
	}
	run, err := DecodeRun(name, data)
	if err != nil {
		return Entry{}, err
	}
	notesName := strings.TrimSuffix(name, ".json") + ".md"
	notes, err := readBounded(notesName)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Entry{}, err
	}
	return Entry{ID: id, File: name, Run: run, Raw: data, Notes: notes}, nil
}

func readBounded(name string) ([]byte, error) {
	info, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if info.Size() > MaxRunFileBytes {
		return nil, fmt.Errorf("%s: %d bytes is larger than the %d a run file may be", name, info.Size(), MaxRunFileBytes)
	}
	return os.ReadFile(name)
}
