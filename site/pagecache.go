package site

import (
	"sync"
	"sync/atomic"
)

// cacheBehind is how many bytes of the files a fresh build wrote or read
// may wait in the page cache before the oldest are let go of.
const cacheBehind = 256 << 20

// streamChunk is how many bytes a streamed file (runs.csv) writes between
// asking the kernel to write them to disk.
const streamChunk = 32 << 20

// pageCache bounds the memory that a fresh build's files, written and read,
// hold in the kernel's page cache. A site of a hundred thousand runs is
// twenty gigabytes, its run files five more: left cached, they evict
// everything else the machine had cached, and on a virtual machine whose
// host takes freed memory back, every page the cache grows by costs a fault
// on the host. Measured on a 2-core VM, writing cost 4.7 s of kernel time a
// gigabyte when the cache grew against 0.28 s when the written pages were
// let go of behind the writer; a 100,000-run build's CPU went from 395 s to
// 321 s (wall 240 s to 196 s). Only whoever publishes the site reads the
// files again, so keeping them cached buys the build nothing.
//
// Until a build has passed the limit nothing is dropped or sent to disk
// early: a small site stays cached for whoever looks at it next, and a
// build of a thousand runs pays nothing for the bound. From then on each
// file written is sent to disk at once (writeback), so by the time the
// limit has passed again its pages are clean and can be dropped. A file of
// the first limit's worth is still dirty when its turn comes: asking to
// drop it sends it to disk, and it waits one limit more to be dropped
// again. Left cached besides: the last limit's worth when the build ends,
// a streamed file's last limit and chunk, and each run's measurements.csv
// until runs.csv is written from it (see Measurements).
type pageCache struct {
	limit, chunk int64
	// drop drops a file's clean pages and sends its dirty ones to disk;
	// writeback sends a file open as fd to disk from offset from on;
	// dropFront drops a file's clean pages before offset end. All are
	// advice, the kernel's (pagecache_linux.go) or a test's.
	drop      func(name string)
	writeback func(fd int, from int64)
	dropFront func(fd int, end int64)

	// passed is set once more than limit bytes have waited: from then on
	// files written are sent to disk at once.
	passed atomic.Bool

	mu      sync.Mutex
	pending []cachedFile // in the order they are due, from head
	head    int
	total   int64 // bytes done so far
}

// cachedFile is a file written or read whose pages may still be cached,
// to be let go of once the build's bytes done reach due; early when it
// was written before the build passed the limit, so not sent to disk yet.
type cachedFile struct {
	name  string
	due   int64
	early bool
}

// newPageCache makes the pageCache of a fresh build (a variable for
// tests to watch).
var newPageCache = pageCacheOfSystem

// pageCacheOfSystem is a pageCache for a fresh build, or nil where the
// system takes no advice on its page cache.
func pageCacheOfSystem() *pageCache {
	if !canDropCache {
		return nil
	}
	return &pageCache{limit: cacheBehind, chunk: streamChunk, drop: dropCached, writeback: startWriteback, dropFront: dropCachedBefore}
}

// writebackNow is what a file written now is to be sent to disk with:
// nil until the build has passed the limit.
func (c *pageCache) writebackNow() func(fd int, from int64) {
	if c == nil || !c.passed.Load() {
		return nil
	}
	return c.writeback
}

// done notes the file name, just written or read whole, of size bytes,
// and lets go of the files that the limit's worth of bytes has passed
// since.
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
	for c.head < len(c.pending) && c.pending[c.head].due <= c.total {
		old := c.pending[c.head]
		c.pending[c.head] = cachedFile{}
		c.head++
		drop = append(drop, old.name)
		if old.early {
			// This drop sends it to disk; the next one drops it.
			c.pending = append(c.pending, cachedFile{old.name, c.total + c.limit, false})
		}
	}
	if c.head > len(c.pending)/2 {
		c.pending = append(c.pending[:0], c.pending[c.head:]...)
		c.head = 0
	}
	c.mu.Unlock()
	for _, name := range drop {
		c.drop(name)
	}
}
