//go:build unix

package site

import (
	"io/fs"
	"syscall"
)

// createFile writes data to a new or truncated file, sending it to disk
// with writeback unless that is nil. It is os.WriteFile without os.File:
// opening through os registers every file with the runtime's poller (four
// fcntl calls and an epoll_ctl that regular files refuse), five of the
// nine system calls a file cost, and a site is thousands of files.
func createFile(name string, data []byte, writeback func(fd int, from int64)) error {
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o644)
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	for len(data) > 0 {
		n, err := ignoringEINTR(func() (int, error) { return syscall.Write(fd, data) })
		if err != nil {
			syscall.Close(fd)
			return &fs.PathError{Op: "write", Path: name, Err: err}
		}
		data = data[n:]
	}
	if writeback != nil {
		writeback(fd, 0)
	}
	if err := syscall.Close(fd); err != nil {
		return &fs.PathError{Op: "close", Path: name, Err: err}
	}
	return nil
}

func ignoringEINTR(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}
