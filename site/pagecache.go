package site

import "sync"

// cacheBehind is how many bytes of a fresh build's files may wait in the
// page cache before the oldest are let go. Past it, each file written
// drops the pages of the oldest ones, whose writing to disk began when
// they were written.
const cacheBehind = 128 << 20

// pageCache bounds the memory a fresh build's written files hold in the
// kernel's page cache. A site of a hundred thousand runs is twenty
// gigabytes: written through the cache and left there, it evicts
// everything else the machine had cached, and on a virtual machine whose
// host takes freed memory back, every page the cache grows by costs a
// fault on the host (measured on a 2-core VM: 4.7 s of kernel time a
// gigabyte against 0.28 s when the written pages are let go behind the
// writer; a 100,000-run build spent a third of its CPU there). The files
// are the build's output, read again only by whoever publishes them, so
// keeping them cached buys nothing.
type pageCache struct {
	mu      sync.Mutex
	pending []cachedFile // oldest first, from head
	head    int
	bytes   int64
}

// cachedFile is a file written whose pages may still be cached.
type cachedFile struct {
	name string
	size int64
}

// wrote notes the file name, just written with size bytes, and lets go
// of the oldest files' pages once more than cacheBehind bytes wait.
func (c *pageCache) wrote(name string, size int64) {
	if c == nil || !canDropCache {
		return
	}
	c.mu.Lock()
	c.pending = append(c.pending, cachedFile{name, size})
	c.bytes += size
	var drop []cachedFile
	for c.bytes > cacheBehind {
		old := c.pending[c.head]
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
		dropCached(f.name)
	}
}
