//go:build unix

package hostile

import (
	"os"
	"sync/atomic"
	"syscall"
)

// Swapper attacks whoever checks a file by its name and then opens it by
// name again: it renames over the file, as fast as it can, a link to a
// file outside, a regular file, a FIFO (which blocks a reader) and the
// regular file again, round after round.
type Swapper struct {
	done   atomic.Bool
	rounds atomic.Int64
	exited chan struct{}
}

// SwapFile starts swapping name; data is the regular file's.
func SwapFile(name string, data []byte, outside string) *Swapper {
	s := &Swapper{exited: make(chan struct{})}
	go func() {
		defer close(s.exited)
		link, fifo, file := name+".swap-link", name+".swap-fifo", name+".swap-file"
		regular := func() {
			os.WriteFile(file, data, 0o644)
			os.Rename(file, name)
		}
		for !s.done.Load() {
			os.Symlink(outside, link)
			os.Rename(link, name)
			regular()
			syscall.Mkfifo(fifo, 0o644)
			os.Rename(fifo, name)
			regular()
			s.rounds.Add(1)
		}
	}()
	return s
}

// Rounds says how many rounds the swapper has made.
func (s *Swapper) Rounds() int { return int(s.rounds.Load()) }

// Stop ends the swapping, the regular file left in place, and says how
// many rounds it made.
func (s *Swapper) Stop() int {
	s.done.Store(true)
	<-s.exited
	return s.Rounds()
}
