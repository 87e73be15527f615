package sim

import "container/list"

// kvCache is the server's KV cache in blocks, as vLLM keeps it: prompt blocks
// are shared by hash and stay cached after their requests finish (the
// prefix cache) until the space is needed; blocks holding a request's own
// tokens (its prompt's last partial block and its output) are private.
type kvCache struct {
	total    int
	free     int // blocks holding nothing
	resident map[uint64]*kvBlock
	idle     *list.List // resident blocks no request holds, oldest first: evicted first
}

type kvBlock struct {
	hash uint64
	refs int
	idle *list.Element
}

func newKVCache(blocks int) *kvCache {
	return &kvCache{total: blocks, free: blocks, resident: map[uint64]*kvBlock{}, idle: list.New()}
}

// cachedPrefix is how many of the leading blocks are resident.
func (c *kvCache) cachedPrefix(blocks []uint64) int {
	for i, h := range blocks {
		if c.resident[h] == nil {
			return i
		}
	}
	return len(blocks)
}

// available is what an allocation can get: empty blocks and idle cached ones.
func (c *kvCache) available() int { return c.free + c.idle.Len() }

// used is the blocks held by running requests, for kv_cache_usage_perc.
func (c *kvCache) used() int { return c.total - c.available() }

// take reserves n empty blocks, evicting idle cached blocks as needed.
func (c *kvCache) take(n int) bool {
	if n > c.available() {
		return false
	}
	for c.free < n {
		b := c.idle.Remove(c.idle.Front()).(*kvBlock)
		delete(c.resident, b.hash)
		c.free++
	}
	c.free -= n
	return true
}

// newBlocksFor is how many empty blocks holding these prompt blocks needs.
func (c *kvCache) newBlocksFor(blocks []uint64) int {
	n := 0
	for _, h := range blocks {
		if c.resident[h] == nil {
			n++
		}
	}
	return n
}

// reserve takes a reference on each of a prompt's blocks, making missing
// ones resident, and takes private empty ones beside them, or, reporting
// false, holds nothing. It pins the resident blocks first, so making room
// cannot evict a block the same prompt needs; those idle cached blocks,
// once held, are no longer there to be taken, so room counted before
// holding can be short, and a prompt held on a failed admission stayed
// pinned for good.
func (c *kvCache) reserve(prompt []uint64, private int) bool {
	var missing, pinned []uint64
	for _, h := range prompt {
		b, ok := c.resident[h]
		if !ok {
			missing = append(missing, h)
			continue
		}
		if b.refs == 0 {
			c.idle.Remove(b.idle)
			b.idle = nil
		}
		b.refs++
		pinned = append(pinned, h)
	}
	if !c.take(len(missing)) {
		c.release(pinned)
		return false
	}
	for _, h := range missing {
		c.resident[h] = &kvBlock{hash: h, refs: 1}
	}
	if !c.take(private) {
		c.release(prompt)
		return false
	}
	return true
}

// release drops a request's references; unreferenced blocks stay cached.
func (c *kvCache) release(blocks []uint64) {
	for _, h := range blocks {
		if b := c.resident[h]; b != nil {
			if b.refs--; b.refs == 0 {
				b.idle = c.idle.PushBack(b)
			}
		}
	}
}
