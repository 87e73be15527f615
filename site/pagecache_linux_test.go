package site

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages counts the pages of the file name in the page cache, of
// all its pages.
func residentPages(t *testing.T, name string) (resident, all int) {
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
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}

// diskFolder is a temporary folder whose files the kernel can drop from
// its page cache: not in memory-backed tmpfs, whose pages are the files.
func diskFolder(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{t.TempDir(), "."} {
		var fs unix.Statfs_t
		if unix.Statfs(dir, &fs) == nil && fs.Type != unix.TMPFS_MAGIC && fs.Type != unix.RAMFS_MAGIC {
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
	if err := createFile(name, data); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil { // on disk now, so the pages are clean
		t.Fatal(err)
	}
	if in, all := residentPages(t, name); in != all {
		t.Fatalf("%d of %d pages cached before the drop: the test shows nothing", in, all)
	}
	dropCached(name)
	if in, all := residentPages(t, name); in != 0 {
		t.Errorf("%d of %d pages still cached after the drop", in, all)
	}

	// A stream: all but the last megabyte written before offset 4 MB goes.
	f.Write(make([]byte, 4<<20)) // from the start again: 4 MB
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	streamWriteback(int(f.Fd()), 4<<20, 1<<20)
	f.Close()
	in, all := residentPages(t, name)
	if want := (1 << 20) / os.Getpagesize(); in != want || all != 4*want {
		t.Errorf("%d of %d pages cached after the stream's drop, want the last %d", in, all, want)
	}
}
