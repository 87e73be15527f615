package site

import (
	"sync"
	"sync/atomic"
)

// cacheBehind is how many bytes of a build may wait in the page cache.
const cacheBehind = 256 << 20

// streamChunk is how many bytes a stream writes between writebacks.
const streamChunk = 32 << 20

// pageCache bounds the memory a fresh build's files, written and read,
// hold in the kernel's page cache. 100,000 runs are 25 GB: left cached,
// they evict everything else, and on a VM whose host takes freed memory
// back each page the cache grows by costs a fault on the host (measured on
// a 2-core VM: 4.7 s of kernel time a gigabyte written against 0.28 s with
// pages let go of behind the writer; the build's CPU 395 s against 321 s).
// Nobody but a publish reads the files again.
//
// Until a build passes the limit nothing is dropped or sent early, so a
// small build pays nothing. From then on each file written is sent to
// disk at once, so its pages are clean when its turn comes a limit later;
// one of the first limit's worth is still dirty then: the drop sends it,
// and it waits a limit more to be dropped again. Left cached: the last
// limit's worth, a stream's last limit and chunk, and each run's
// measurements.csv until runs.csv reads it (Measurements).
type pageCache struct {
	limit, chunk int64
	// drop, writeback and dropFront are the advice of pagecache_linux.go
	// (dropCached, startWriteback, dropCachedBefore) or a test's.
	drop      func(name string)
	writeback func(fd int, from int64)
	dropFront func(fd int, end int64)

	// passed is set once more than limit bytes have waited.
	passed atomic.Bool

	mu      sync.Mutex
	pending []cachedFile // in the order they are due
	total   int64        // bytes done so far
}

// cachedFile is a file to let go of once the build's bytes done reach due;
// early when written before the limit was passed, so not yet on disk.
type cachedFile struct {
	name  string
	due   int64
	early bool
}

// newPageCache makes the pageCache of a fresh build (tests replace it).
var newPageCache = pageCacheOfSystem

// writebackNow sends a file to disk once the build passed the limit, or is nil.
func (c *pageCache) writebackNow() func(fd int, from int64) {
	if c == nil || !c.passed.Load() {
		return nil
	}
	return c.writeback
}

// done notes the file name, just written or read whole, of size bytes,
// and lets go of the files a limit's worth of bytes has passed since.
func (c *pageCache) done(name string, size int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.total += size
	c.pending = append(c.pending, cachedFile{name, c.total + c.limit, !c.passed.Load()})
	if c.total > c.limit {
		c.passed.Store(true)
	}
	var drop []string
	for len(c.pending) > 0 && c.pending[0].due <= c.total {
		old := c.pending[0]
		c.pending[0] = cachedFile{}
		c.pending = c.pending[1:] // a later append copies only those left
		drop = append(drop, old.name)
		if old.early {
			// This drop sends it to disk; the next one drops it.
			c.pending = append(c.pending, cachedFile{old.name, c.total + c.limit, false})
		}
	}
	c.mu.Unlock()
	for _, name := range drop {
		c.drop(name)
	}
}
