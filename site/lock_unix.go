//go:build unix

package site

import (
	"os"
	"syscall"
)

// holdLock takes the kernel's exclusive lock on f, held until f is closed
// or the process ends, however it ends.
func holdLock(f *os.File) bool {
	_, err := ignoringEINTR(func() (int, error) { return 0, syscall.Flock(int(f.Fd()), syscall.LOCK_EX) })
	return err == nil
}

// tryLock takes the lock on f if no process holds it.
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
