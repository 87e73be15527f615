// Package parallel spreads independent work over every core.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls do(0) … do(n-1), on as many goroutines as there are cores, and
// returns when all are done. Workers take the next index from a shared
// counter rather than a channel: a build hands out thousands of small jobs,
// and a channel handoff per job costs a scheduler wake-up each.
func Each(n int, do func(i int)) {
	EachWorker(n, func() func(int) { return do })
}

// EachWorker is Each for work that needs per-goroutine state: newWorker runs
// once on each goroutine and returns the function that does the jobs.
func EachWorker(n int, newWorker func() func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(n, 1)) {
		wg.Go(func() {
			do := newWorker()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				do(i)
			}
		})
	}
	wg.Wait()
}
