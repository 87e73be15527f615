// Package parallel spreads independent work over every core.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// EachWorker does jobs 0 … n-1 on a goroutine per core, each running the
// function newWorker gives it there (state of its own), and returns when all
// are done. Jobs come from a shared counter: a channel costs a wake-up each.
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

// Each does jobs 0 … n-1 as EachWorker does, for jobs that keep no state
// of their own.
func Each(n int, job func(i int)) {
	EachWorker(n, func() func(int) { return job })
}
