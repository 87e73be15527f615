package render

import (
	"sync"

	"github.com/matrixgen/matrixgen/runfile"
)

// runBytesInFlight bounds the bytes of run files a build's workers hold
// at once, each from reading its file to writing its page: decoding costs
// up to twenty-five times a file's bytes, and sixteen cores each on a
// hostile file at the bound would take gigabytes. Runs of ordinary size
// (tens of kilobytes) never wait for it; a file at the bound is built
// alone.
const runBytesInFlight = runfile.MaxBytes

// budget is a weighted semaphore: acquire waits while what is held and
// what is asked would pass the limit, unless nothing is held (one request
// larger than the limit runs alone).
type budget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	held  int64
	limit int64
}

func (b *budget) acquire(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cond == nil {
		b.cond = sync.NewCond(&b.mu)
	}
	for b.held > 0 && b.held+n > b.limit {
		b.cond.Wait()
	}
	b.held += n
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if b.cond != nil {
		b.cond.Broadcast()
	}
}
