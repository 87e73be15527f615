package parallel

import (
	"sync/atomic"
	"testing"
)

func TestEachWorkerRunsEveryIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		counts := make([]atomic.Int32, n)
		EachWorker(n, func() func(int) { return func(i int) { counts[i].Add(1) } })
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Errorf("n=%d: index %d ran %d times", n, i, c)
			}
		}
	}
}

func TestEachWorkerMakesOneWorkerPerGoroutine(t *testing.T) {
	var workers, jobs atomic.Int32
	EachWorker(100, func() func(int) {
		workers.Add(1)
		return func(int) { jobs.Add(1) }
	})
	if jobs.Load() != 100 || workers.Load() < 1 || workers.Load() > 100 {
		t.Errorf("%d jobs on %d workers", jobs.Load(), workers.Load())
	}
}
