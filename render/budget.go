package render

import (
	"sync"

	"github.com/matrixgen/matrixgen/runfile"
)

// runBytesInFlight bounds the bytes of run files a build's workers hold at
// once: decoding costs up to 25 times a file's bytes, and sixteen cores on
// hostile files at the bound would take gigabytes. A file at the bound is
// built alone.
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
	for b.held > 0 && b.held+n > b.limit {
		b.cond.Wait()
	}
	b.held += n
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	b.cond.Broadcast()
}
