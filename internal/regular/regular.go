// Package regular opens files that someone else may have put in place so
// that the open itself is the check: a name is opened once, without waiting
// (a FIFO would wait for a writer), and what was opened is examined before
// a byte is read; a check by name, then an open by name, lets the file be
// swapped between the two for a link out, a pipe or a larger file.
package regular

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/matrixgen/matrixgen/internal/term"
)

// Open opens name in root for reading without waiting, links followed only
// inside root, and gives what it opened for the caller to accept or close.
func Open(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	return withInfo(root.OpenFile(name, os.O_RDONLY|nonBlocking, 0))
}

// OpenPath is Open for a path a person named on the command line: links
// are followed wherever they lead, as the person chose them.
func OpenPath(name string) (*os.File, fs.FileInfo, error) {
	return withInfo(os.OpenFile(name, os.O_RDONLY|nonBlocking, 0))
}

// OpenEntry opens the regular file that is name itself, never what a
// link there points to, nor a pipe: what it opened is the very file the
// name held when looked at (os.SameFile), whatever was swapped in
// meanwhile.
func OpenEntry(name string) (*os.File, fs.FileInfo, error) {
	return openEntry(name, os.O_RDONLY)
}

// AppendEntry is OpenEntry for appending to the file: each write at its
// end, and what it holds readable (ReadAt), to check its end first.
func AppendEntry(name string) (*os.File, fs.FileInfo, error) {
	return openEntry(name, os.O_RDWR|os.O_APPEND)
}

func openEntry(name string, flag int) (*os.File, fs.FileInfo, error) {
	entry, err := os.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !entry.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file", term.Name(name))
	}
	f, info, err := withInfo(os.OpenFile(name, flag|nonBlocking, 0))
	if err != nil {
		return nil, nil, err
	}
	if !os.SameFile(entry, info) {
		f.Close()
		return nil, nil, fmt.Errorf("%s: replaced while being opened", term.Name(name))
	}
	return f, info, nil
}

// withInfo is an open's file and what it is.
func withInfo(f *os.File, err error) (*os.File, fs.FileInfo, error) {
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// Read reads the file f, opened by Open or OpenPath, when it is a regular
// file of at most limit bytes, and closes it. shown names it in errors
// and what says what it is ("a run file"): "… is larger than the 8388608
// bytes a run file may be".
func Read(f *os.File, info fs.FileInfo, limit int64, shown, what string) ([]byte, error) {
	defer f.Close()
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", shown)
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes is larger than the %d bytes %s may be", shown, info.Size(), limit, what)
	}
	// Its size is known: one allocation, with room to see a file that grew
	// while being read.
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than the %d bytes %s may be", shown, limit, what)
	}
	return data, nil
}

// ReadFile reads name in root: Open, then Read, naming it as term.Name
// prints it.
func ReadFile(root *os.Root, name string, limit int64, what string) ([]byte, error) {
	f, info, err := Open(root, name)
	if err != nil {
		return nil, err
	}
	return Read(f, info, limit, term.Name(name), what)
}
