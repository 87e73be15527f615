//go:build unix

package site

import (
	"io/fs"
	"syscall"
)

// createFile writes data to a new or truncated file, sent to disk with
// writeback unless nil. It is os.WriteFile without os.File, whose poller
// registration cost five of a file's nine system calls.
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
