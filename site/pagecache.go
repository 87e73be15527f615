package site

import (
	"sync"
	"sync/atomic"
)

// cacheBehind is how many bytes of the files a fresh build wrote or read
// may wait in the page cache before the oldest are let go of.
const cacheBehind = 256 << 20

// pageCache bounds the memory that the files a fresh build writes and
// reads hold in the kernel's page cache. A site of a hundred thousand
// runs is twenty gigabytes, and its run files five more: read and written
// through the cache and left there, they evict everything else the
// machine had cached, and on a virtual machine whose host takes freed
// memory back, every page the cache grows by costs a fault on the host.
// Measured on a 2-core VM, writing cost 4.7 s of kernel time a gigabyte
// when the cache grew against 0.28 s when the written pages were let go
// of behind the writer, and a 100,000-run build went from 240 s to 183 s.
// The files are read again only by whoever publishes the site, so keeping
// them cached buys the build nothing.
//
// Until a build has passed cacheBehind nothing is dropped and nothing is
// sent to disk early: a small site stays cached for whoever looks at it
// next, and a build of a thousand runs pays nothing for the bound. From
// then on each file written is sent to disk at once (startWriteback), so
// by the time cacheBehind more bytes have passed its pages are clean and
// can be dropped; the files of the first cacheBehind bytes, still dirty
// when let go of, are sent to disk then and left to the kernel.
type pageCache struct {
	limit int64
	drop  func(name string)

	// passed is set once more than limit bytes have waited: from then on
	// files written are sent to disk at once.
	passed atomic.Bool

	mu      sync.Mutex
	pending []cachedFile // oldest first, from head
	head    int
	bytes   int64
}

// cachedFile is a file written or read whose pages may still be cached.
type cachedFile struct {
	name string
	size int64
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
	return &pageCache{limit: cacheBehind, drop: dropCached}
}

// full reports whether the files written now are to be sent to disk at
// once: whether more than the limit has waited.
func (c *pageCache) full() bool {
	return c != nil && c.passed.Load()
}

// done notes the file name, just written or read whole, of size bytes,
// and lets go of the oldest files' pages once more than the limit waits.
func (c *pageCache) done(name string, size int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.pending = append(c.pending, cachedFile{name, size})
	c.bytes += size
	var drop []cachedFile
	if c.bytes > c.limit {
		c.passed.Store(true)
	}
	for c.bytes > c.limit {
		old := c.pending[c.head]
		c.pending[c.head] = cachedFile{}
		c.head++
		c.bytes -= old.size
		drop = append(drop, old)
	}
	if c.head > len(c.pending)/2 {
		c.pending = append(c.pending[:0], c.pending[c.head:]...)
		c.head = 0
	}
	c.mu.Unlock()
	for _, f := range drop {
		c.drop(f.name)
	}
}
