package site

import (
	"syscall"

	"golang.org/x/sys/unix"
)

const canDropCache = true

// startWriteback asks the kernel to begin writing the file fd to disk,
// without waiting for it, so that its pages are clean, and can be
// dropped, by the time pageCache lets go of them. It is advice: a failure
// costs memory, nothing else.
func startWriteback(fd int) {
	unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// dropCached drops the file name's clean pages from the page cache; a
// page still being written to disk stays. It is advice, like
// startWriteback. The name is opened again: a run file swapped since it
// was read for a link is not followed, and for a FIFO the open does not
// wait, nor is anything but a regular file advised.
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

// streamWriteback begins writing the bytes of a streamed file from
// offset from on to disk, and drops from the page cache its pages more
// than behind bytes before them, on disk by then.
func streamWriteback(fd int, from, behind int64) {
	unix.SyncFileRange(fd, from, 0, unix.SYNC_FILE_RANGE_WRITE)
	if from > behind {
		unix.Fadvise(fd, 0, from-behind, unix.FADV_DONTNEED)
	}
}
