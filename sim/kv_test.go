package sim

import "testing"

// TestReserveHoldsNothingWhenShort: a prompt whose blocks are cached but
// idle counts them as room; holding them takes that room away, so the
// private blocks beside them may not fit. The failed admission must leave
// the cache as it was, its blocks idle and evictable, or they stay pinned
// and the cache shrinks with every retry.
func TestReserveHoldsNothingWhenShort(t *testing.T) {
	c := newKVCache(4)
	prompt := []uint64{1, 2}
	if !c.reserve(prompt, 0) {
		t.Fatal("an empty cache refused two blocks")
	}
	c.release(prompt) // cached and idle now: 2 free, 2 idle
	for range 3 {
		// The room check counts 4 (2 free + 2 idle) against the 3 asked
		// for; holding the prompt leaves 2 for the 3 private blocks.
		if c.reserve(prompt, 3) {
			t.Fatal("reserved 5 blocks of 4")
		}
		if c.available() != 4 || c.used() != 0 {
			t.Fatalf("after a refused reservation: %d available, %d used; want 4 and 0", c.available(), c.used())
		}
	}
	if !c.reserve([]uint64{3, 4, 5, 6}, 0) {
		t.Error("the refused prompt's blocks could not be evicted for another")
	}
}
