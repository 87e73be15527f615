//go:build unix

package main

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"
)

// lockFolder holds dir for this process alone until unlock, waiting while
// another holds it (saying so once through waiting) or until ctx ends. The
// lock is the kernel's on a file in dir, so a process that dies frees it.
func lockFolder(ctx context.Context, dir string, waiting func()) (unlock func(), err error) {
	f, err := os.OpenFile(dir+string(os.PathSeparator)+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	waiting = sync.OnceFunc(waiting)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		waiting()
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
