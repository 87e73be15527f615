//go:build unix

package regular

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOnlyRegularFilesWithinTheirBound: a FIFO is opened without waiting
// and refused; a file is read only within its bound, every size around
// it tried; a link out of the root is refused by the open; OpenEntry
// refuses a link even to a regular file.
func TestOnlyRegularFilesWithinTheirBound(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(root, "pipe", 10, "a test file"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO: %v", err)
	}
	const limit = 100
	for size := range limit + 3 {
		data := bytes.Repeat([]byte{'x'}, size)
		os.WriteFile(filepath.Join(dir, "f"), data, 0o644)
		got, err := ReadFile(root, "f", limit, "a test file")
		switch {
		case size <= limit && (err != nil || !bytes.Equal(got, data)):
			t.Errorf("%d bytes: %v", size, err)
		case size > limit && (err == nil || !strings.Contains(err.Error(), "larger than the 100 bytes a test file may be")):
			t.Errorf("%d bytes past %d: %v", size, limit, err)
		}
	}
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "out"))
	if got, err := ReadFile(root, "out", limit, "a test file"); err == nil {
		t.Errorf("a link out of the root read %q", got)
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("fine"), 0o644)
	os.Symlink("f", filepath.Join(dir, "in"))
	if _, err := ReadFile(root, "in", limit, "a test file"); err != nil {
		t.Errorf("a link inside the root: %v", err)
	}
	if f, _, err := OpenEntry(filepath.Join(dir, "in")); err == nil {
		f.Close()
		t.Error("OpenEntry opened a link")
	}
	if f, _, err := OpenEntry(filepath.Join(dir, "pipe")); err == nil {
		f.Close()
		t.Error("OpenEntry opened a FIFO")
	}
}
