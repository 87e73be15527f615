package site

import (
	"syscall"

	"golang.org/x/sys/unix"
)

const canDropCache = true

// pageCacheOfSystem is a fresh build's pageCache, nil where none is taken.
func pageCacheOfSystem() *pageCache {
	return &pageCache{limit: cacheBehind, chunk: streamChunk, drop: dropCached, writeback: startWriteback, dropFront: dropCachedBefore}
}

// startWriteback asks the kernel to begin writing the file fd to disk from
// offset from on, so its pages are clean by the time pageCache drops them.
// It is advice: a failure costs memory, nothing else.
func startWriteback(fd int, from int64) {
	unix.SyncFileRange(fd, from, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// dropCached drops the file name's clean pages from the page cache and
// sends its dirty ones to disk, as advice. Opened again, a regular file
// only, without waiting on a FIFO or following a last link (a folder
// swapped for a link is followed: evicting another file changes no byte).
func dropCached(name string) {
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
	}
}

// dropCachedBefore drops fd's clean pages before offset end.
func dropCachedBefore(fd int, end int64) {
	unix.Fadvise(fd, 0, end, unix.FADV_DONTNEED)
}
