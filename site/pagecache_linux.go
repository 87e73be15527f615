package site

import (
	"syscall"

	"golang.org/x/sys/unix"
)

const canDropCache = true

// startWriteback asks the kernel to begin writing the file fd to disk
// now, without waiting for it, so that its pages are clean, and can be
// dropped, by the time pageCache lets go of them.
func startWriteback(fd int) {
	unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// dropCached drops the file name's clean pages from the page cache. A
// page still being written is left; the call is advice, and a failure
// changes nothing but memory.
func dropCached(name string) {
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return
	}
	unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
	syscall.Close(fd)
}

// streamWriteback begins writing the bytes [from, to) of a file being
// streamed to disk, and drops from the page cache what lies cacheBehind
// bytes before them, written to disk by then.
func streamWriteback(fd int, from, to int64) {
	unix.SyncFileRange(fd, from, to-from, unix.SYNC_FILE_RANGE_WRITE)
	if from > cacheBehind {
		unix.Fadvise(fd, 0, from-cacheBehind, unix.FADV_DONTNEED)
	}
}
