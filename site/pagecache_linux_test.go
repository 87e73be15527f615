package site

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages tells, for each page of the file name, whether it is in
// the page cache.
func residentPages(t *testing.T, name string) []bool {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(data)
	page := os.Getpagesize()
	vec := make([]byte, (len(data)+page-1)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatal(errno)
	}
	in := make([]bool, len(vec))
	for i, v := range vec {
		in[i] = v&1 == 1
	}
	return in
}

// count counts the pages cached of pages.
func count(pages []bool) int {
	n := 0
	for _, in := range pages {
		if in {
			n++
		}
	}
	return n
}

// diskFolder is a temporary folder whose files the kernel can drop from
// its page cache: not in memory-backed tmpfs, whose pages are the files.
func diskFolder(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{t.TempDir(), "."} {
		var fs unix.Statfs_t
		if unix.Statfs(dir, &fs) == nil && uint32(fs.Type) != unix.TMPFS_MAGIC && uint32(fs.Type) != unix.RAMFS_MAGIC {
			if dir == "." {
				d, err := os.MkdirTemp(".", "pagecache-test-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(d) })
				return d
			}
			return dir
		}
	}
	t.Skip("no folder here is on a disk: tmpfs keeps every page it holds")
	return ""
}

// TestDropCachedLetsPagesGo: a file written to disk, then dropped, has no
// page left in the cache; a stream keeps only its last pages.
func TestDropCachedLetsPagesGo(t *testing.T) {
	dir := diskFolder(t)
	name := filepath.Join(dir, "page.html")
	data := make([]byte, 1<<20)
	if err := createFile(name, data, nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil { // on disk now, so the pages are clean
		t.Fatal(err)
	}
	if pages := residentPages(t, name); count(pages) != len(pages) {
		t.Fatalf("%d of %d pages cached before the drop: the test shows nothing", count(pages), len(pages))
	}
	dropCached(name)
	if pages := residentPages(t, name); count(pages) != 0 {
		t.Errorf("%d of %d pages still cached after the drop", count(pages), len(pages))
	}

	// A stream at 8 MB drops what lies more than 2 MB behind, the first
	// 6 MB. The cache holds pages in folios of up to 2 MB, and drops a
	// folio only when the range covers it whole, so the first 4 MB must
	// be gone, and the last 2 MB must stay.
	f.Write(make([]byte, 8<<20)) // from the start again
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	startWriteback(int(f.Fd()), 8<<20)
	dropCachedBefore(int(f.Fd()), 6<<20)
	f.Close()
	mb := (1 << 20) / os.Getpagesize()
	pages := residentPages(t, name)
	if n := count(pages[:4*mb]); n != 0 {
		t.Errorf("%d pages of the first 4 MB still cached after the stream's drop", n)
	}
	if n := count(pages[6*mb:]); n != 2*mb {
		t.Errorf("%d pages of the last 2 MB cached after the stream's drop, want all %d", n, 2*mb)
	}
}

// TestDropCachedLeavesOtherFilesAlone: a run file swapped for a FIFO or a
// link after it was read is neither waited on nor followed.
func TestDropCachedLeavesOtherFilesAlone(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	dropCached(fifo) // returns: an open that waited for a writer would hang the test
	target := filepath.Join(diskFolder(t), "target")
	if err := os.WriteFile(target, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	f.Sync()
	f.Close()
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if pages := residentPages(t, target); count(pages) != len(pages) {
		t.Fatalf("%d of %d pages cached before the drop: the test shows nothing", count(pages), len(pages))
	}
	dropCached(link)
	if pages := residentPages(t, target); count(pages) != len(pages) {
		t.Errorf("the link was followed: %d of %d pages of its target dropped", len(pages)-count(pages), len(pages))
	}
}
