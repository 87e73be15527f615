package site

import "sync"

// cacheBehind is how many bytes of the files a fresh build wrote or read
// may wait in the page cache before the oldest are let go of.
const cacheBehind = 128 << 20

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
// Each file written is sent to disk at once (startWriteback), so by the
// time cacheBehind more bytes have passed its pages are clean and can be
// dropped. Until a build has passed cacheBehind nothing is dropped: a
// small site stays cached for whoever looks at it next.
type pageCache struct {
	limit int64
	drop  func(name string)

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
