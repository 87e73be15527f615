//go:build unix

package site

import (
	"errors"
	"os"
	"syscall"
)

// holdLock takes the kernel's exclusive lock on f, held until f is closed
// or the process ends, however it ends.
func holdLock(f *os.File) bool {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err == nil
		}
	}
}

// tryLock takes the lock on f if no process holds it.
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
